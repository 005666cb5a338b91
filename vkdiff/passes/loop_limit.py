"""Pass (after lowering, before codegen): loops on a driver with a loop limiter.

Mesa's lavapipe (llvmpipe) ends every loop of a shader invocation once the invocation has taken
65,535 loop back-edges in total (one counter per invocation, shared by all its loops, nested or
not; measured: 1e5 iterations -> 65,535, 400x250 nested -> 65,015, two loops of 40,000 ->
65,534). Splitting a loop into nested loops does not help there; fewer back-edges do. So:

- `plan_unroll` gives loops an `unroll` factor U: codegen emits U copies of the body per
  back-edge (each copy tests the exit condition itself), chosen from the compile-time trip counts
  of the loop nest so that the estimated back-edges of one invocation stay under the limit, within
  a code-size budget. The adjoint's loops go through the same pass.
- `guard_loops` makes a loop the limiter ended early an error instead of a truncated result:
  codegen counts each loop's back-edges in a local; a total at the limit stores the code of
  the busiest loop into a device status field that the runtime reads back at the next sync
  (`LoopLimitError`).
"""
from .. import ir
from .. import types as T

LIMIT = 65535
TARGET = 40000          # estimated back-edges per invocation we aim to stay under
CODE_BUDGET = 3000      # IR statements of loop bodies after unrolling, per task
MAX_UNROLL = 64
UNKNOWN_TRIPS = 1 << 20  # a run-time trip count is assumed long (and guarded anyway)
MAX_UNROLL_UNKNOWN = 8

# loop codes -> source locations, for the error message (code 0 means "no error")
LOCATIONS = [None]


def has_limiter(driver_id):
    """driver_id: a runtime.devices.DRIVER_IDS name (from VkPhysicalDeviceDriverProperties)."""
    return driver_id == 'mesa-llvmpipe'


def inner_loops(task):
    return [s for s in ir.walk(task.body) if s.op in ('for', 'while')]


def _trips(s, per_parfor):
    if s.op == 'parfor':
        return per_parfor
    if s.op == 'while':
        return None
    lo, hi = s.args
    step = s.attrs['step']
    if lo.op == 'group_count' and hi.op == 'const' and step > 0:
        return max(0, hi.attrs['value'])  # a reduction's loop over partials: group_count >= 1
    if lo.op == 'const' and hi.op == 'const':
        return max(0, -(-(hi.attrs['value'] - lo.attrs['value']) // step))
    return None


def _per_element_bound(s):
    """Whether the loop's trip count comes from a field read at a non-constant index (data that
    differs between invocations: a neighbour list's count), not from arguments or a scalar
    field (`range(n)`, `range(num[None])`), through value operations only."""
    if s.op != 'for':
        return False
    todo, seen = list(s.args), set()
    while todo:
        x = todo.pop()
        if x.id in seen:
            continue
        seen.add(x.id)
        if x.op == 'gload':
            if any(a.op != 'const' for a in x.args):
                return True
        elif x.op not in ('load', 'alloca') and not x.blocks:
            todo.extend(a for a in x.args if isinstance(a, ir.Stmt))
    return False


def all_trips_known(task):
    return all(_trips(s, 1) is not None for s in inner_loops(task))


def _size(block):
    return sum(1 for _ in ir.walk(block))


def plan_unroll(task, per_parfor):
    """Set attrs['unroll'] on the task's for/while loops (greedy: double the factor of the loop
    contributing most back-edges while that helps and the code budget allows)."""
    loops = [s for s in ir.walk(task.body) if s.op in ('for', 'while', 'parfor')]
    if not any(s.op != 'parfor' for s in loops):
        return 0
    info, cap = {}, {}
    for s in loops:
        t = _trips(s, per_parfor)
        outer, p = 1, s.parent.owner if s.parent is not None else None
        while p is not None:
            if p.op in ('for', 'while', 'parfor'):
                pt = _trips(p, per_parfor)
                outer *= UNKNOWN_TRIPS if pt is None else max(pt, 1)
            p = p.parent.owner if p.parent is not None else None
        info[s] = (UNKNOWN_TRIPS if t is None else t, outer, t is None)
        cap[s] = (1 if _per_element_bound(s) else MAX_UNROLL_UNKNOWN) if t is None else \
            MAX_UNROLL
        s.attrs['unroll'] = 1

    def backedges(s):
        t, outer, _ = info[s]
        return outer * (-(-t // s.attrs['unroll']) if t else 0)

    def code():
        total = 0
        for s in every:
            if s.op != 'parfor':  # each copy: its statements, the exit test and the step
                own = sum(1 for x in s.blocks[0].stmts) + 6
                total += own * _product_unroll(s)
        return total

    every = list(loops)
    for _ in range(64):
        if sum(backedges(s) for s in every) <= TARGET:
            break
        cands = [s for s in loops if s.op != 'parfor' and info[s][0] > s.attrs['unroll'] and
                 s.attrs['unroll'] < cap[s]]
        if not cands:
            break
        best = max(cands, key=backedges)
        prev = best.attrs['unroll']
        best.attrs['unroll'] = min(prev * 2, info[best][0])  # at most t: unrolled in full
        if code() > CODE_BUDGET:
            best.attrs['unroll'] = prev
            loops.remove(best)  # no further unrolling of this one
    return sum(backedges(s) for s in every)


def _product_unroll(s):
    """How many copies of s's own body codegen emits (its and its enclosing loops' factors)."""
    n = 1
    while s is not None:
        n *= s.attrs.get('unroll', 1) if s.op in ('for', 'while') else 1
        s = s.parent.owner if s.parent is not None else None
    return n


def guard_loops(task, flag):
    """Count each loop's back-edges (the grid-stride loop's included) in a local of its own; at
    the end of the task, a total at the limit means the driver ended a loop early: store the code
    of the loop with the most back-edges into `flag`. (Counters, not an `exited` flag: optimizers
    that do not know about the limiter prove such a flag always true and delete the check; and
    after a limiter exit only plain counters were seen to hold their values.)"""
    loops = [s for s in ir.walk(task.body) if s.op in ('for', 'while', 'parfor')]
    if not any(s.op != 'parfor' for s in loops):
        return False
    zero = ir.const(0, T.i32)
    head, tail = [zero], []
    total = best = most = None
    for s in loops:
        LOCATIONS.append(s.loc)
        var = ir.Stmt('alloca', T.i32)
        head += [var, ir.Stmt('store', None, [var, zero])]
        s.attrs['count'] = var
        n = ir.Stmt('load', T.i32, [var])
        code = ir.const(len(LOCATIONS) - 1, T.i32)
        tail += [n, code]
        if total is None:
            total, best, most = n, code, n
            continue
        more = ir.Stmt('gt', T.u1, [n, most])
        total = ir.Stmt('add', T.i32, [total, n])
        best = ir.Stmt('select', T.i32, [more, code, best])
        most = ir.Stmt('select', T.i32, [more, n, most])
        tail += [more, total, best, most]
    limit = ir.const(LIMIT, T.i32)
    hit = ir.Stmt('ge', T.u1, [total, limit])
    then = ir.Block([ir.Stmt('gstore', None, [best], {'buf': flag, 'comp': 0})])
    tail += [limit, hit, ir.Stmt('if', None, [hit], blocks=[then, ir.Block()])]
    for k, x in enumerate(head):
        task.body.insert(k, x)
    for x in tail:
        task.body.append(x)
    return True


def drop_empty_loops(block):
    """Remove `for` loops whose bodies are (after this, recursively) empty: the adjoint replays
    forward loops whose every statement was dead, and each costs back-edges."""
    for s in list(block.stmts):
        for b in s.blocks:
            drop_empty_loops(b)
        if s.op == 'for' and not s.blocks[0].stmts:
            block.stmts.remove(s)


def apply(task, per_thread, driver_id, status_field):
    """The pass on one task about to be compiled for the driver `driver_id`: plans the
    unrolling and guards the loops (storing into `status_field()`, the device status field the
    launcher reads back) where the device has a limiter. Returns the grid-stride iterations per
    invocation to use (1 when the task's inner loops are long, so that each invocation stays
    under the limit)."""
    if not has_limiter(driver_id) or not inner_loops(task):
        return per_thread
    drop_empty_loops(task.body)
    if not inner_loops(task):
        return per_thread
    est = plan_unroll(task, per_thread)
    if est > TARGET and per_thread > 1:
        per_thread = 1
        plan_unroll(task, 2)
    if est <= TARGET and all_trips_known(task):
        return per_thread  # provably far below the limit: no counters, no status read-back
    guard_loops(task, status_field())
    return per_thread
