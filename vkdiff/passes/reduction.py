"""Pass: fast, precise accumulation into contended field elements (after autodiff, before codegen).

`U[None] += e` in a parallel loop is N atomic adds on one address: slow under contention and,
in f32, inaccurate. In a task whose atomic adds have loop-invariant indices, each thread sums into
a private accumulator (f64 where the device has it) over a contiguous chunk of iterations, the
workgroup sums those in shared memory (`wg_sum`), each workgroup writes one partial, and a small
serial task adds the partials in order and does a single atomic add: deterministic and exact to
the last f32 rounding (Taichi leaves the order of such adds unspecified).

Atomic adds whose index varies (`x.grad[i] += ...` in an (i, j) loop) are accumulated per thread
while the index stays the same, and flushed with one atomic when it changes ("segmented"); with
contiguous chunks of iterations per thread that removes most atomics on i-major loops."""
import os

from .. import ir
from .. import types as T
from ..irbuild import Builder
from .host_eval import host_eval
from .loop_unique import loop_unique_buffers
from .simplify import simplify
from .tasks import Task


def _invariant(s, loop):
    """True if s does not depend on anything computed inside the parallel loop."""
    for x in ir.upstream([s], descend=lambda x: x.op != 'const'):
        if x.op != 'const' and (x.op not in ir.PURE or _inside(x, loop)):
            return False
    return True


def _inside(x, loop):
    """x is the loop or a statement nested in its body (found through the parent chain, not a
    walk of the body: reductions ask this for every index of every atomic)."""
    while x is not None:
        if x is loop:
            return True
        b = x.parent
        x = b.owner if b is not None else None
    return False


def _candidates(task):
    loop = task.loop
    body = list(ir.walk(loop.blocks[0]))
    users = {}
    for s in body:
        for a in s.args:
            users[a] = users.get(a, 0) + 1
    touched_otherwise = {s.buf for s in body if s.op in ('gload', 'gstore') or
                         (s.op == 'atomic' and (s.attrs['fn'] not in ('add', 'sub') or users.get(s)))}
    out = []
    for s in body:
        if s.op == 'atomic' and s.attrs['fn'] in ('add', 'sub') and not users.get(s) \
                and s.buf not in touched_otherwise and not s.buf.dtype.is_bool \
                and not (s.buf.dtype.is_float and s.buf.dtype.is_narrow):
            out.append(s)  # (f16 adds stay atomic: each one rounds to f16, as in Taichi)
    return out


def optimize_reductions(task, features, groups, cpu=True, max_fields=None, one_group=None):
    """Returns the list of tasks replacing `task` (itself, plus finishing tasks). Iterations are
    walked in contiguous chunks per invocation where that pays: always on a CPU driver (repeated
    indices, cached loads), and on a GPU only for segmented accumulation (otherwise the grid
    stride keeps neighbouring invocations on neighbouring elements: coalesced loads).
    one_group: a loop whose trip count is known at compile time and at most this always runs as
    one workgroup (compiler.fitted_local_size): it applies its sums itself, with no partials and
    no finishing task."""
    if task.kind != 'parallel' or task.loop.attrs.get('groups') or \
            task.loop.attrs.get('block_dim'):  # ti.simt.block: iterations stay in their blocks
        return [task]
    total = task.loop.args[0]
    if total.op == 'const' and total.attrs['value'] <= 1:
        return [task]  # `for _ in range(1)`: one invocation runs everything in order, in f32
    cands = _candidates(task)
    owned = _owned_by_one_iteration(task.loop, cands)
    cands = [s for s in cands if s not in owned]  # owned: summed in order, or left atomic
    in_order = [s for s in owned if owned[s] and not _fresh_every_iteration(s, task.loop)]
    if not cands and not in_order:
        return [task]
    _hoist_invariant_loads(task)
    loop = task.loop
    known = _known_total(loop) if one_group is not None else None
    # a loop that runs as one workgroup is not split: the copy would double its code, its
    # pipelines and its launches (gravity at N=8) for a few atomics saved
    if not loop.attrs.get('transposed') and (known is None or known > one_group):
        split = _split_by_rate(task, cands)
        if split is not None:
            return [t for part in split
                    for t in optimize_reductions(part, features, groups, cpu, max_fields,
                                                 one_group)]
    loop.attrs['groups'] = groups
    uniform = [s for s in cands if all(_invariant(i, loop) for i in s.indices)]
    blocked = cpu or len(uniform) < len(cands) or bool(in_order)
    loop.attrs['blocked'] = blocked
    body = task.body
    pos = body.stmts.index(loop)
    finishing = []
    acc_types = [T.f64 if s.buf.dtype.is_float and features.get('float64') else s.buf.dtype
                 for s in uniform]
    # one partials field per accumulator type, `groups` slots per accumulator: a task with many
    # accumulators (the tangent of an adjoint has dozens) must stay within the device's
    # maxPerStageDescriptorStorageBuffers (32 on lavapipe), or the dispatch crashes
    # run as one workgroup, the task applies its sums itself, if it may bind their targets too
    direct = max_fields is None or len(task.buffers()) + len(set(acc_types)) <= max_fields
    single = direct and known is not None and known <= one_group
    partials = {}
    for acc_t in acc_types:
        if acc_t not in partials and not single:
            n = acc_types.count(acc_t)
            partials[acc_t] = (_partials_field(task, len(partials), acc_t, groups * n), [0])
    sums = []  # (accumulator, its type, target, partials field, base slot)
    b = Builder()
    for k, s in enumerate(uniform):
        acc_t = acc_types[k]
        with b.open(body, pos):
            acc = b.emit('alloca', acc_t)
            b.emit('store', None, [acc, b.const(0, acc_t)])
        pos += 3
        target = (s.buf, s.attrs['comp'], s.attrs['fn'], list(s.indices))
        _replace_with_accumulate(s, acc, acc_t)
        pf, used = partials.get(acc_t, (None, [0]))
        base = used[0] * groups
        used[0] += 1
        sums.append((acc, acc_t, target, pf, base))
        finishing.append((target, pf, acc_t, base))
    for batch, chunk in enumerate(_batches(sums)):
        # the workgroup sums of a batch share their barriers (codegen.workgroup): a task with
        # dozens of contended sums (an adjoint's input gradients) pays two barriers per batch,
        # not two per sum
        with b.open(body):
            loads = [b.emit('load', acc_t, [acc]) for acc, acc_t, *_ in chunk]
            totals = [b.emit('wg_sum', acc_t, [v], {'batch': batch})
                      for v, (acc, acc_t, *_) in zip(loads, chunk)]
            for total, (acc, acc_t, target, pf, base) in zip(totals, chunk):
                is0 = b.eq(b.emit('local_index', T.i32), 0)
                if single:
                    then = ir.Block()
                    _apply(then, target, total, acc_t)
                else:
                    then = _store_partial(target, total, acc_t, pf, base, groups, direct)
                b.emit('if', None, [is0], blocks=[then, ir.Block()])
    for s in cands:
        if s not in uniform and not _fresh_every_iteration(s, loop):
            pos = _segmented(task, s, pos)
    for s in in_order:
        pos = _segmented(task, s, pos, exclusive=True)
    if CACHE_LOADS and blocked:
        _cache_repeated_loads(task, pos)
    return [task] + ([] if single else _finish_tasks(task, finishing, groups, direct))


def _known_total(loop):
    """The loop's trip count when it is known at compile time (no loads, no arguments)."""
    total = loop.args[0]
    if any(x.op in ('gload', 'arg') for x in ir.dependencies([total])):
        return None
    return host_eval(total, ())


def _batches(sums):
    """The workgroup sums grouped by type (codegen splits a batch to fit shared memory)."""
    by_type = {}
    for x in sums:
        by_type.setdefault(x[1], []).append(x)
    return list(by_type.values())


# VKDIFF_CACHE_LOADS=0 turns the load cache off (to measure it).
CACHE_LOADS = os.environ.get('VKDIFF_CACHE_LOADS', '1') != '0'


class _LastIndex:
    """Per-invocation memory of an index tuple (initially -1): `changed(block)` emits the test
    `index != remembered`, `remember(block)` stores the current one."""

    def __init__(self, prologue, indices):
        self.indices = list(indices)
        self.vars = []
        for _ in self.indices:
            var = prologue.append(ir.Stmt('alloca', T.i32))
            prologue.append(ir.Stmt('store', None, [var, prologue.append(ir.const(-1, T.i32))]))
            self.vars.append(var)

    def changed(self, block):
        cond = None
        for var, ix in zip(self.vars, self.indices):
            ne = block.append(ir.Stmt('ne', T.u1, [block.append(ir.Stmt('load', T.i32, [var])), ix]))
            cond = ne if cond is None else block.append(ir.Stmt('lor', T.u1, [cond, ne]))
        return cond

    def remember(self, block):
        for var, ix in zip(self.vars, self.indices):
            block.append(ir.Stmt('store', None, [var, ix]))


def _insert(block, at, stmts):
    for k, st in enumerate(list(stmts)):
        block.insert(at + k, st)
    return at + len(stmts)


def _cache_repeated_loads(task, pos):
    """In a blocked reduction loop each invocation walks consecutive iterations, so an index like
    i in an (i, j) loop repeats for long runs. Loads of read-only fields are kept per invocation
    and redone only when their index changes (`x[i]` in the gravity kernels: half the loads)."""
    loop = task.loop
    body = loop.blocks[0]
    written = {s.buf for s in ir.walk(task.body) if s.op in ('gstore', 'atomic')}
    groups = {}
    for s in body.stmts:
        if s.op == 'gload' and s.buf not in written and s.indices and \
                not all(_invariant(i, loop) for i in s.indices) and \
                not _fresh_every_iteration(s, loop):
            groups.setdefault((s.buf, tuple(s.indices)), []).append(s)
    for (field, indices), loads in groups.items():
        pro = ir.Block()
        last = _LastIndex(pro, indices)
        vals = [pro.append(ir.Stmt('alloca', s.dtype)) for s in loads]
        pos = _insert(task.body, pos, pro.stmts)
        pre = ir.Block()
        changed = last.changed(pre)
        then = ir.Block()
        for s, v in zip(loads, vals):
            then.append(ir.Stmt('store', None, [v, then.append(ir.Stmt('gload', s.dtype, list(indices),
                                                                        dict(s.attrs)))]))
        last.remember(then)
        pre.append(ir.Stmt('if', None, [changed], blocks=[then, ir.Block()]))
        _insert(body, body.stmts.index(loads[0]), pre.stmts)
        for s, v in zip(loads, vals):  # the loads become reads of the cache, in place
            s.op, s.args, s.attrs = 'load', [v], {}


def _hoist_invariant_loads(task):
    """Loads of fields the task never writes, at loop-invariant indices (`U.grad[None]` in an
    adjoint), move out of the parallel loop: one load per thread instead of per iteration."""
    loop = task.loop
    written = {s.buf for s in ir.walk(task.body) if s.op in ('gstore', 'atomic')}
    pos = task.body.stmts.index(loop)
    for s in list(loop.blocks[0].stmts):  # top level of the body: executed every iteration
        if s.op == 'gload' and s.buf not in written and \
                all(_invariant(i, loop) for i in s.indices):
            loop.blocks[0].stmts.remove(s)
            for i in reversed(ir.dependencies(s.indices)):
                if i.parent is loop.blocks[0]:
                    loop.blocks[0].stmts.remove(i)
                    task.body.insert(pos, i)
            task.body.insert(task.body.stmts.index(loop), s)
            pos = task.body.stmts.index(loop)


def _fast_modulus(s, loop):
    """B if an index of atomic s depends on `loop % B` (the fastest-varying ndrange index)."""
    found = None
    for x in ir.upstream(s.indices, descend=lambda x: x is not loop):
        if x.op == 'mod' and x.args[0] is loop and x.args[1].op == 'const':
            found = x.args[1].attrs['value']
    return found


def _split_by_rate(task, cands):
    """Atomic adds indexed by the fastest ndrange index (`x.grad[j]` in an (i, j) loop) change
    address every iteration, so segmented accumulation cannot help them. They move to a copy of
    the task that walks the iterations in transposed order (j-major), where their index is the
    slow one; the other atomics stay. Each copy drops the other's writes; dead code goes."""
    loop = task.loop
    total = loop.args[0]
    if total.op != 'const':
        return None
    varying = [s for s in cands if not all(_invariant(i, loop) for i in s.indices)]
    mods = {s: _fast_modulus(s, loop) for s in varying}
    fast = [s for s in varying if mods[s]]
    if not fast or len({mods[s] for s in fast}) != 1:
        return None
    B = mods[fast[0]]
    T_ = total.attrs['value']
    if B <= 1 or T_ % B or T_ // B <= 1:
        return None
    A = T_ // B
    # the copy runs after the original: it must not read what the original writes, nor draw
    # different random numbers
    written = {st.buf for st in ir.walk(task.body) if st.op in ('gstore', 'atomic')}
    if any(st.op == 'random' or (st.op == 'gload' and st.buf in written)
           for st in ir.walk(task.body)):
        return None
    mapping = {}
    body_f = ir.clone_block(task.body, mapping)
    keep_f = {mapping[s] for s in fast}
    for st in list(ir.walk(body_f)):
        if st.op in ('gstore', 'atomic') and st not in keep_f:
            if st.op == 'atomic' and any(st in u.args for u in ir.walk(body_f)):
                return None
            st.parent.stmts.remove(st)
    for st in fast:
        st.parent.stmts.remove(st)
    loop_f = mapping[loop]
    loop_f.attrs = dict(loop_f.attrs, transposed=True)
    inner = loop_f.blocks[0]
    users = list(ir.walk(inner))
    a_c, b_c = ir.const(A, T.i32), ir.const(B, T.i32)
    q = ir.Stmt('floordiv', T.i32, [loop_f, a_c])
    r = ir.Stmt('mod', T.i32, [loop_f, a_c])
    lin = ir.Stmt('add', T.i32, [ir.Stmt('mul', T.i32, [r, b_c]), q])
    for k, st in enumerate([a_c, b_c, q, r, lin.args[0], lin]):
        inner.insert(k, st)
    for st in users:
        st.args = [lin if a is loop_f else a for a in st.args]
    simplify(task.body)
    simplify(body_f)
    return [task, Task('parallel', body_f, task.name + '_t')]


def _replace_with_accumulate(s, acc, acc_t):
    """atomic F[I] (+|-)= v  ->  acc = acc (+|-) v   (in place)."""
    blk = s.parent
    i = blk.stmts.index(s)
    v = s.value_arg
    if v.dtype is not acc_t:
        v = ir.Stmt('cast', acc_t, [v])
        blk.insert(i, v)
        i += 1
    old = ir.Stmt('load', acc_t, [acc])
    blk.insert(i, old)
    new = ir.Stmt('add', acc_t, [old, v])  # the sum of the values; the final atomic applies fn
    blk.insert(i + 1, new)
    s.op, s.dtype, s.args, s.attrs = 'store', None, [acc, new], {}


def _partials_field(task, k, dtype, groups):
    return ir.Buffer(f'{task.name}.partials{k}', dtype, (groups,), role='temp')


def _store_partial(target, total, acc_t, partials, base, groups, direct):
    """Invocation 0 of each workgroup: launched as one workgroup (a short loop), apply the sum
    to the target itself (the finishing tasks are then not launched, launch.compiled); otherwise
    store this workgroup's partial, and workgroup 0 zeroes the slots of workgroups not launched
    (the geometry follows the trip count: fewer than `groups` may run)."""
    then, split, zero_body = ir.Block(), ir.Block(), ir.Block()
    b = Builder()
    with b.open(then):
        ng = b.emit('group_count', T.i32)
    with b.open(split):
        gid = b.emit('group_index', T.i32)
        slot = b.add(gid, base) if base else gid
        b.emit('gstore', None, [slot, total], {'buf': partials, 'comp': 0})
        first = b.eq(gid, 0)
        k = ir.Stmt('for', T.i32, [ng, b.const(groups, T.i32).stmt], {'step': 1}, [zero_body])
    with b.open(zero_body):
        slot = b.add(k, base) if base else k
        b.emit('gstore', None, [slot, b.const(0, acc_t)], {'buf': partials, 'comp': 0})
    zero = ir.Block()
    zero.append(k)
    with b.open(split):
        b.emit('if', None, [first], blocks=[zero, ir.Block()])
    if not direct:
        then.stmts += split.stmts
        for st in split.stmts:
            st.parent = then
        return then
    apply = ir.Block()
    _apply(apply, target, total, acc_t)
    with b.open(then):
        b.emit('if', None, [b.eq(ng, 1)], blocks=[apply, split])
    return then


def _apply(body, target, total, acc_t):
    """F[I] (+|-)= total, in `body` (the target's index expressions cloned into it)."""
    field, comp, fn, indices = target
    mapping = {}
    for st in ir.dependencies(indices):
        body.append(ir.clone_stmt(st, mapping))
    b = Builder(body)
    b.emit('atomic', field.dtype, [mapping[i] for i in indices] + [b.cast(total, field.dtype)],
           {'buf': field, 'comp': comp, 'fn': fn})


def _finish_tasks(task, finishing, groups, direct, max_fields=16):
    """Serial tasks that sum each accumulator's per-workgroup partials in order and do one
    atomic add into its target: as few dispatches as the binding limit allows. With `direct`,
    they are skipped when `task` ran as one workgroup."""
    out, body, fields = [], None, set()
    for target, partials, acc_t, base in finishing:
        need = {target[0], partials}
        if body is None or len(fields | need) > max_fields:
            body, fields = ir.Block(), set()
            out.append(Task('serial', body, f'{task.name}_sum{len(out)}'))
            out[-1].finishes = task if direct else None
        fields |= need
        _finish_one(body, target, partials, acc_t, groups, base)
    return out


def _finish_one(body, target, partials, acc_t, groups, base):
    """acc = sum of partials[base .. base + groups - 1], in order; F[I] (+|-)= acc.
    f32 partials (a device without f64) are summed with Neumaier's compensation: a plain f32 sum
    rounds at every step once the total outgrows the partials (test_reductions' histogram total,
    2.5e7 from 64 exact partials: 2 ulp off on SwiftShader and on lavapipe without f64); the
    compensated sum is the correctly rounded sum of the partials but for O(groups * eps**2)."""
    b = Builder(body)
    compensate = acc_t is T.f32
    acc = b.emit('alloca', acc_t)
    b.emit('store', None, [acc, b.const(0, acc_t)])
    if compensate:
        lost = b.emit('alloca', acc_t)  # the low-order parts the running sum dropped
        b.emit('store', None, [lost, b.const(0, acc_t)])
    loop_body = ir.Block()
    loop = b.emit('for', T.i32, [b.const(base, T.i32), b.const(base + groups, T.i32)], {'step': 1},
                  blocks=[loop_body])
    with b.open(loop_body):
        p = b.emit('gload', acc_t, [loop], {'buf': partials, 'comp': 0})
        s = b.emit('load', acc_t, [acc])
        t = b.add(s, p)
        if compensate:  # (s - t) + p is exact when |s| >= |p|, (p - t) + s otherwise
            err = b.select(b.ge(b.abs(s), b.abs(p)), b.add(b.sub(s, t), p), b.add(b.sub(p, t), s))
            b.emit('store', None, [lost, b.add(b.emit('load', acc_t, [lost]), err)])
        b.emit('store', None, [acc, t])
    total = b.emit('load', acc_t, [acc])
    if compensate:
        total = b.add(total, b.emit('load', acc_t, [lost]))
    _apply(body, target, total, acc_t)


def _owned_by_one_iteration(loop, cands):
    """The float atomic adds whose target element only one iteration of the parallel loop
    touches: every atomic on the field in the loop has the same index tuple, and that tuple
    determines the iteration (`row[i] += a[i, j]` in a serial j loop inside the loop over i).
    Taichi runs their adds in order, with the field's rounding at every step: they are not
    contended, so they are either left atomic or (value True: the only atomic on their element)
    summed in order from the element's own value, with one store per run (_segmented)."""
    by_buf = {}
    for s in ir.walk(loop.blocks[0]):
        if s.op == 'atomic':
            by_buf.setdefault(s.buf, []).append(s)
    floats = {s.buf for s in cands if s.buf.dtype.is_float}  # (integer sums: any order)
    unique = loop_unique_buffers(loop, floats) if floats else ()
    owned = {}
    for s in cands:
        if s.buf in unique:
            owned[s] = sum(a.attrs['comp'] == s.attrs['comp'] for a in by_buf[s.buf]) == 1
    return owned


def _fresh_every_iteration(s, loop):
    """True if statement s (an access) runs at most once per iteration of the parallel loop
    (no serial loop around it inside the body) and indexes with the loop's own variable: its
    index differs in every iteration, so run-length accumulation or a load cache would only add
    a test and a branch per iteration (the robot's nn1 adjoint had ~280 of them: `w.grad[i, k]`,
    `w[i, k]` in a loop over i)."""
    if not any(i is loop for i in s.indices):
        return False
    b = s.parent
    while b is not None and b.owner is not None and b.owner is not loop:
        if b.owner.op in ('for', 'while'):
            return False
        b = b.owner.parent
    return b is not None and b.owner is loop


def _segmented(task, s, pos, exclusive=False):
    """Per-thread run-length accumulation of atomic adds whose index varies. `exclusive`: the
    element is this iteration's alone (_owned_by_one_iteration): a run starts from the element's
    value and adds in order in the field's type (Taichi's sequential rounding), and ends with a
    plain store."""
    body = task.body
    dt, target = s.buf.dtype, (s.buf, s.attrs['comp'], s.attrs['fn'])
    indices, v = s.indices, s.value_arg
    # prologue: acc = 0; last index = -1
    pro = ir.Block()
    acc = pro.append(ir.Stmt('alloca', dt))
    pro.append(ir.Stmt('store', None, [acc, pro.append(ir.const(0, dt))]))
    last = _LastIndex(pro, indices)
    pos = _insert(body, pos, pro.stmts)
    # in the loop: if index != last: flush; last = index; acc = 0 (F[index]).   acc += v
    pre = ir.Block()
    changed = last.changed(pre)
    then = _flush_block(acc, last.vars, dt, target, exclusive)
    last.remember(then)
    start = ir.Stmt('gload', dt, list(indices), {'buf': s.buf, 'comp': s.attrs['comp']}) \
        if exclusive else ir.const(0, dt)
    then.append(ir.Stmt('store', None, [acc, then.append(start)]))
    pre.append(ir.Stmt('if', None, [changed], blocks=[then, ir.Block()]))
    op = s.attrs['fn'] if exclusive else 'add'  # (else the sum; the flush applies fn)
    new = pre.append(ir.Stmt(op, dt, [pre.append(ir.Stmt('load', dt, [acc])), v]))
    _insert(s.parent, s.parent.stmts.index(s), pre.stmts)
    s.op, s.dtype, s.args, s.attrs = 'store', None, [acc, new], {}
    # after the loop: flush what is left
    for st in _flush_block(acc, last.vars, dt, target, exclusive).stmts:
        body.append(st)
    return pos


def _flush_block(acc, last, dt, target, exclusive=False):
    """if the current run is valid (last index >= 0): atomic F[last] (+|-)= acc (exclusive:
    F[last] = acc)."""
    field, comp, fn = target
    b = ir.Block()
    lv = [b.append(ir.Stmt('load', T.i32, [v])) for v in last]
    valid = b.append(ir.Stmt('ge', T.u1, [lv[0], b.append(ir.const(0, T.i32))]))
    inner = ir.Block()
    a = inner.append(ir.Stmt('load', dt, [acc]))
    if exclusive:
        inner.append(ir.Stmt('gstore', None, lv + [a], {'buf': field, 'comp': comp}))
    else:
        inner.append(ir.Stmt('atomic', dt, lv + [a], {'buf': field, 'comp': comp, 'fn': fn}))
    b.append(ir.Stmt('if', None, [valid], blocks=[inner, ir.Block()]))
    return b
