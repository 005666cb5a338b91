"""Pass: reuse global values an invocation already has (Taichi's store-to-load forwarding and
identical-load elimination on global pointers), and demote an atomic whose old value is already
known to a plain store.

Within one task, in program order: a `gload` of an element the invocation loaded or stored
before (same Buffer, component and index values, nothing since that may have changed it) takes
that value instead of reading memory again; an atomic on such an element of a Buffer no other
invocation touches (passes/loop_unique.py: a loop-unique index, or a serial task) becomes
`old OP v` and a store. On lavapipe every global load or store is a loop over the SIMD lanes
(Mesa 22.3's gallivm), so `v = x[i]; x[i] = v * 2` then `... x[i] ...` reading x[i] again, or
`grid_v[i, j] /= m` followed by tests of grid_v[i, j], cost several such loops per element.

Facts (element -> value) flow forward: into the branches of an `if` (and out of it only those
established before it, minus the Buffers either branch writes), never into a loop from outside
(another invocation may write what a loop polls), dropped at barriers and workgroup sums. A
store or atomic forgets the Buffer's facts at other indices (they may be the same element).
Kernel-argument arrays (two parameters may be one array), 8/16-bit and workgroup Buffers are
left alone. Runs after `reductions`."""
from .. import ir
from .loop_unique import loop_unique_buffers
from .simplify import _resolve, replace_uses

_ROLES = ('field', 'grad', 'dual', 'temp')
_CLEARS = ('wg_sum', 'barrier', 'sg_reduce', 'sg_elect', 'sg_barrier', 'device_fence')
_FN_OP = frozenset(('add', 'sub', 'mul', 'min', 'max', 'band', 'bor', 'bxor'))  # atomic fn = op


def forward_globals(task):
    """Rewrite `task` in place; returns (loads removed, atomics demoted)."""
    if task.kind == 'parallel':
        loop = task.loop
        if loop.attrs.get('block_dim'):
            return 0, 0  # ti.simt.block: shared memory and barriers, left as written
    f = _Forwarder(task)
    f.block(task.body, {})
    if f.replace:
        replace_uses(task.body, f.replace)
        for s in f.dead:
            s.parent.stmts.remove(s)
    return len(f.dead), f.demoted


def _ok(buf):
    return buf is not None and buf.role in _ROLES and not buf.dtype.is_narrow and \
        not buf.dtype.is_bool and buf.shape is not None


class _Forwarder:
    def __init__(self, task):
        self.task = task
        self._owned = ()        # not yet computed (most tasks never ask)
        self.keys = {}          # index statement -> structural key (value numbering)
        self.replace = {}       # removed gload -> the value it takes
        self.dead = []
        self.demoted = 0

    def resolve(self, a):
        return _resolve(self.replace, a)

    def owns(self, buf):
        """No other invocation touches `buf` (a serial task: every Buffer is its own); the
        loop-unique analysis runs the first time an atomic's old value is known."""
        if self.task.kind != 'parallel':
            return True
        if self._owned == ():
            self._owned = loop_unique_buffers(self.task.loop)
        return buf in self._owned

    # ---------------------------------------------------------------- keys
    def key(self, x, depth=0):
        """Equal keys: the same value (pure expressions of the same operands)."""
        x = self.resolve(x)
        k = self.keys.get(x)
        if k is not None:
            return k
        if x.op == 'const':
            k = ('c', repr(x.attrs.get('value')), str(x.dtype))
        elif x.op == 'arg':
            k = ('a', x.attrs.get('index'), str(x.dtype))
        elif x.op in ir.PURE and depth < 12 and not x.blocks:
            k = (x.op, str(x.dtype), tuple(sorted((n, repr(v)) for n, v in x.attrs.items()
                                                 if n != 'loc'))) + \
                tuple(self.key(a, depth + 1) for a in x.args)
        else:
            k = ('s', x.id)
        self.keys[x] = k
        return k

    def element(self, s):
        return (s.buf, s.attrs.get('comp', 0), tuple(self.key(i) for i in s.indices))

    # ---------------------------------------------------------------- walk
    def block(self, block, facts):
        for s in list(block.stmts):
            self.stmt(s, facts)

    def stmt(self, s, facts):
        op = s.op
        if op == 'gload' and _ok(s.buf):
            e = self.element(s)
            v = facts.get(e)
            if v is not None:
                self.replace[s] = v
                self.dead.append(s)
            else:
                facts[e] = s
        elif op == 'gstore' and _ok(s.buf):
            e = self.element(s)
            _forget(facts, s.buf, e[2])
            v = self.resolve(s.value_arg)
            if v.dtype is s.buf.dtype:
                facts[e] = v
        elif op == 'atomic' and s.buf is not None:
            e = self.element(s) if _ok(s.buf) else None
            old = facts.get(e) if e is not None else None
            if old is not None and self.owns(s.buf) and \
                    s.attrs.get('fn') in _FN_OP and old.dtype is s.dtype and \
                    not s.buf.is_bookkeeping:
                self.demote(s, old)
                facts[e] = s.args[-1]
            else:
                _forget(facts, s.buf, None)
        elif op in ('if',):
            written = _written(s)
            for b in s.blocks:
                self.block(b, dict(facts))
            for buf in written:
                _forget(facts, buf, None)
        elif op in ('for', 'while', 'parfor'):
            written = _written(s)
            for b in s.blocks:
                self.block(b, {})
            if op == 'while':  # (it may have waited for other invocations' writes)
                facts.clear()
            for buf in written:
                _forget(facts, buf, None)
        elif op in _CLEARS:
            facts.clear()
        elif s.blocks:  # any other statement with a body: nothing known inside or after
            for b in s.blocks:
                self.block(b, {})
            facts.clear()

    def demote(self, s, old):
        """atomic(I, v) with the element's value `old` known -> new = old OP v; x[I] = new; the
        atomic's users read `old`."""
        parent = s.parent
        new = ir.Stmt(s.attrs['fn'], s.dtype, [old, self.resolve(s.value_arg)],
                      loc=s.loc)
        parent.insert(parent.stmts.index(s), new)
        self.replace[s] = old  # users of the atomic's result: the old value
        # the atomic statement becomes the store (kept in place; not in self.dead)
        idx = list(s.indices)
        s.op, s.dtype, s.args = 'gstore', None, idx + [new]
        s.attrs = {'buf': s.buf, 'comp': s.attrs.get('comp', 0)}
        self.demoted += 1


def _forget(facts, buf, keep_index):
    """Forget what is known of `buf`'s elements, except those at index key `keep_index` (the
    same element's other components: a different address)."""
    for e in [e for e in facts if e[0] is buf and (keep_index is None or e[2] != keep_index)]:
        del facts[e]


def _written(s):
    """The Buffers the statements nested in `s` store into."""
    return {x.buf for b in s.blocks for x in ir.walk(b) if x.op in ('gstore', 'atomic') and
            x.buf is not None}
