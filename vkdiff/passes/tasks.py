"""Pass: split a kernel body into tasks, each one compute dispatch. Every top-level `parfor` is a
parallel task; each run of other top-level statements is a serial task (one invocation). Pure
values a task needs from elsewhere are cloned into it; locals shared between tasks become 0-D
global temporaries (Buffers with role 'temp'), so a kernel may mix loops and serial code freely."""
from .. import ir
from .. import types as T
from .simplify import simplify
from ..errors import CompileError, located


class Task:
    def __init__(self, kind, body, name):
        self.kind = kind          # 'parallel' | 'serial'
        self.body = body          # Block; for 'parallel' it holds one parfor statement
        self.name = name

    def clone(self):
        return Task(self.kind, ir.clone_block(self.body, {}), self.name)

    @property
    def loop(self):
        if self.kind != 'parallel':
            return None
        return next(s for s in self.body.stmts if s.op == 'parfor')

    def accesses(self):
        """(Buffers read, Buffers written) by this task."""
        reads, writes = [], []
        for s in ir.walk(self.body):
            f = s.attrs.get('buf')
            if f is None or f.role == 'shared':  # workgroup memory: nothing to bind
                continue
            if s.op == 'gload' or s.op == 'atomic':
                if f not in reads:
                    reads.append(f)
            if s.op in ('gstore', 'atomic'):
                if f not in writes:
                    writes.append(f)
        return reads, writes

    def buffers(self):
        """The Buffers this task binds, in binding order (those read first)."""
        r, w = self.accesses()
        return r + [f for f in w if f not in r]

    def ir(self, names=None):
        """This task as text (`names`: an ir.Names shared by the tasks printed together)."""
        return f'task {self.name} ({self.kind}):\n' + ir.format_ir(self.body, names)


_SIDE_EFFECTS = {'gstore', 'atomic', 'store', 'if', 'for', 'while', 'ret', 'random', 'parfor',
                 'check', 'print',
                 'sg_reduce', 'sg_elect', 'sg_invocation_id', 'sg_size', 'sg_shuffle',
                 'sg_broadcast_first', 'sg_ballot', 'sg_vote', 'sg_all_equal', 'sg_barrier',
                 'device_fence', 'global_index',  # subgroup ops (codegen/subgroup.py)
                 'barrier'}  # and workgroup barriers stay put


def _owner_task(stmt, top_index):
    """Index of the top-level statement containing stmt."""
    s = stmt
    while s.parent is not None and s.parent.owner is not None:
        s = s.parent.owner
    return top_index.get(s)


def promote_shared_locals(body, kernel_name):
    """Locals declared at kernel top level and used by statements of different tasks become
    0-D temporaries (Buffers with role 'temp'); local arrays 1-D ones."""
    groups = _group(body)
    group_of = {}
    for g, stmts in enumerate(groups):
        for s in stmts:
            group_of[s] = g
    top_index = {s: group_of[s] for s in body.stmts}
    users = {}
    for s in ir.walk(body):
        if s.op in ('load', 'store', 'aload', 'astore'):
            users.setdefault(s.args[0], set()).add(_owner_task(s, top_index))
    promoted = 0
    for a in [s for s in body.stmts if s.op == 'alloca']:
        if len(users.get(a, ())) <= 1 and not a.attrs.get('spill'):
            continue
        size = a.attrs.get('size')  # a local array (frontend ArrayLValue): a 1-D temporary
        f = ir.Buffer(f'{kernel_name}.local{promoted}', a.dtype, () if size is None else (size,),
                      role='temp', meta={'user_array': True} if size is not None else None)
        promoted += 1
        stmts = list(ir.walk(body))
        for s in stmts:
            if s.op in ('store', 'astore') and s.args[0] is a:
                _shared_store(s, a, f, stmts)
        for s in stmts:
            if s.op in ('load', 'aload') and s.args[0] is a:
                s.op, s.args, s.attrs = 'gload', s.args[1:], {'buf': f, 'comp': 0}
        body.stmts.remove(a)


def _shared_store(s, var, f, stmts=()):
    """A store into a promoted local. `v += x` inside a parallel loop becomes an atomic add
    (`ti.atomic_add(v, x)` too: what used the old value it loaded now uses the atomic's)."""
    index = s.args[1:-1]  # an array's entry (astore: array, index, value)
    val = s.args[-1]
    fn = s.attrs.get('aug')
    op = val.args[0] if val.op == 'cast' else val  # `s += x` with x wider than s
    if fn and ir.enclosing(s, ('parfor',)) is not None and op.op == fn and \
            _loads(op.args[0], var):
        amount = op.args[1]
        if amount.dtype is not var.dtype:
            amount = s.parent.insert(s.parent.stmts.index(s), ir.Stmt('cast', var.dtype, [amount]))
        s.op, s.dtype, s.args, s.attrs = 'atomic', var.dtype, index + [amount], {
            'buf': f, 'comp': 0, 'fn': fn}
        feed = op.args[0]
        old = feed.args[0] if feed.op == 'cast' else feed
        for t in stmts:
            if t is not op and t is not feed and old in t.args:
                t.args = [s if x is old else x for x in t.args]
    else:
        s.op, s.args, s.attrs = 'gstore', index + [val], {'buf': f, 'comp': 0}


def _loads(x, var):
    """x is a load of the local var (possibly widened by a cast; of an array: of any entry,
    the atomic then goes to the stored entry)."""
    if x.op == 'cast':
        x = x.args[0]
    return x.op in ('load', 'aload') and x.args[0] is var


def _group(body):
    """Top-level statements grouped into tasks, in order."""
    groups, run = [], []
    for s in body.stmts:
        if s.op == 'parfor':
            if run:
                groups.append(run)
                run = []
            groups.append([s])
        else:
            run.append(s)
    if run:
        groups.append(run)
    return groups


def _needs(stmts):
    """Statements referenced by `stmts` (recursively) but defined outside them."""
    inside = set()
    for s in stmts:
        inside.add(s)
        for b in s.blocks:
            inside.update(ir.walk(b))
    need = []
    for s in stmts:
        for t in [s, *[x for b in s.blocks for x in ir.walk(b)]]:
            for a in t.args:
                if a not in inside and a not in need:
                    need.append(a)
    return need


def _clone_pure_closure(roots):
    """Clones of the pure statements `roots` depend on, in dependency order."""
    order = ir.dependencies(roots)
    mapping = {}
    out = []
    for s in order:
        # an alloca gets here only when this task alone uses it (shared ones were promoted)
        if s.op not in ir.PURE and s.op not in ('gload', 'alloca'):
            raise ir_error(s)
        c = ir.clone_stmt(s, mapping)
        out.append(c)
    return out, mapping


def ir_error(s):
    return located(CompileError, f'internal: value {s.op} cannot cross task boundaries', s.loc)


def spill_cross_task_values(body):
    """A value one task computes and a later task uses is normally recomputed there (its pure
    closure is cloned). That is wrong when the closure reads a field that is written in between
    (`a = x[None]; x[None] = 1; for i in y: y[i] = a`), and impossible when it holds a random
    number, an atomic's old value or a local's load: such a value is stored in a fresh local right
    where it is computed, and the later task loads it (promote_shared_locals then turns the local
    into a 0-D temporary)."""
    groups = _group(body)
    group_of = {s: g for g, stmts in enumerate(groups) for s in stmts}
    writes = [{t.attrs['buf'] for s in stmts for t in [s, *_nested(s)]
               if t.op in ('gstore', 'atomic')} for stmts in groups]
    spilled = {}
    for g, stmts in enumerate(groups):
        inside = [t for s in stmts for t in [s, *_nested(s)]]
        for v in _needs(stmts):
            if v in spilled or v.op in ('alloca', 'const', 'arg') or v not in group_of:
                continue
            # a parallel task's prologue runs in every workgroup, some after others have
            # written: a field the loop writes counts as written in between
            end = g + 1 if stmts[0].op == 'parfor' else g
            if not _must_spill(v, end, group_of, writes):
                continue
            # always promoted: a load for the parfor's trip count sits in the defining group
            var = ir.Stmt('alloca', T.i32 if v.dtype.is_bool else v.dtype, attrs={'spill': True})
            stored = v
            pos = body.stmts.index(v) + 1
            if v.dtype.is_bool:
                stored = body.insert(pos, ir.Stmt('cast', T.i32, [v], loc=v.loc))
                pos += 1
            body.insert(pos, ir.Stmt('store', None, [var, stored], loc=v.loc))
            body.insert(0, var)
            spilled[v] = var
        for u in [t for t in inside if any(a in spilled for a in t.args)]:
            for k, a in enumerate(u.args):
                var = spilled.get(a)
                if var is None:
                    continue
                blk = u.parent
                at = blk.stmts.index(u)
                ld = blk.insert(at, ir.Stmt('load', var.dtype, [var], loc=u.loc))
                if a.dtype.is_bool:
                    zero = blk.insert(at + 1, ir.const(0, var.dtype))
                    ld = blk.insert(at + 2, ir.Stmt('ne', a.dtype, [ld, zero], loc=u.loc))
                u.args[k] = ld


def _nested(s):
    return [t for b in s.blocks for t in ir.walk(b)]


def _must_spill(v, end, group_of, writes):
    """Whether the value v (defined at top level) cannot be recomputed by a task that sees the
    writes of groups before `end`."""
    for s in ir.upstream([v]):
        if s.op == 'gload':
            first = group_of.get(s, end)
            if any(s.attrs['buf'] in writes[k] for k in range(first, end)):
                return True
        elif s.op not in ir.PURE:
            return True
    return False


def split_tasks(body, kernel_name):
    simplify(body)
    spill_cross_task_values(body)
    promote_shared_locals(body, kernel_name)
    tasks = []
    for g, stmts in enumerate(_group(body)):
        is_par = stmts[0].op == 'parfor'
        if not is_par and not any(s.op in _SIDE_EFFECTS or s.op == 'gstore' for s in stmts):
            continue  # only pure values: cloned where they are needed
        need = _needs(stmts)
        prologue, mapping = _clone_pure_closure(need)
        tb = ir.Block(prologue)
        for s in stmts:
            s.parent = None
            tb.append(s)
        for s in ir.walk(tb):
            s.args = [mapping.get(a, a) for a in s.args]
        simplify(tb)
        tasks.append(Task('parallel' if is_par else 'serial', tb, f'{kernel_name}_t{len(tasks)}'))
    return tasks
