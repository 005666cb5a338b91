"""Frontend floor: the IR of pooled pointer SNodes (layout and allocator: lang/blockpool.py). An
element of a field under pooled pointer P lives at pool index (id - 1) * B + e, id the cell's
slot-table word and e the element's place in its block. A load gives 0 where the cell has no
block; a store or atomic first claims one (take, publish with one compare-exchange, the loser
parks its own: no invocation waits on another) and is dropped when the pool is full (flagged;
the sync after the launch raises). A struct-for walks the blocks given out (`owner`), so its
time follows the blocks, not the virtual domain."""
import contextlib

from .. import ir
from .. import types as T
from ..lang import blockpool as BP
from ..lang.dynpool import elects
from ..lang import sparse as S
from . import ops
from .context import Value, current, emit, error

# (this module imports nothing of frontend/sparse, dynpool, lvalues or loops, which import it:
# so it stays outside their import circle, with small copies of what it needs from them)


def _ival(x):
    return ops.as_value(x, T.i32)


@contextlib.contextmanager
def _if(cond):
    then_b, else_b = ir.Block(), ir.Block()
    emit('if', None, [ops.to_bool(cond)], blocks=[then_b, else_b])
    with current().open(then_b):
        yield


class _Local:
    """A scalar i32 (or the given type) local variable (as lvalues.LocalVar)."""

    def __init__(self, dtype=T.i32):
        self.dtype, self.stmt = dtype, emit('alloca', dtype)

    def load(self):
        return Value(emit('load', self.dtype, [self.stmt]))

    def store(self, value):
        emit('store', None, [self.stmt, ops.as_value(value, self.dtype)])


class _Word:
    """An i32 word of a bookkeeping field (no sparse guards, no pool: plain loads and stores)."""

    def __init__(self, field, idx):
        self.field = field
        self.indices = [ops.as_value(i, T.i32).stmt for i in idx]

    def load(self):
        return Value(emit('gload', T.i32, self.indices, attrs={'buf': self.field.buffer, 'comp': 0}))

    def store(self, value):
        emit('gstore', None, self.indices + [_ival(value).stmt],
             attrs={'buf': self.field.buffer, 'comp': 0})


_word = _Word


def _raw_atomic(elem, fn, value, **attrs):
    """An allocator's integer atomic on a bookkeeping word ('cas' with expect=, 'xchg', 'add'):
    the old word. An adjoint replays it as a load of the word (autodiff/reverse.py): the block
    the primal published."""
    return Value(emit('atomic', T.i32, elem.indices + [_ival(value).stmt],
                      attrs={'buf': elem.field.buffer, 'comp': 0, 'fn': fn, 'replay_load': True,
                             **attrs}))


def pooled(field):
    return BP.node_of(field) is not None


def _flat(shape, idx):
    flat = _ival(0)
    for n, k in zip(shape, idx):
        flat = ops.binary('add', ops.binary('mul', flat, n), k)
    return flat


def _key(pool, field):
    return field if field in pool.B else S.layout_of(field)


def _prologue(pool):
    """Once per kernel that may claim blocks: at its start, the ring's entries pushed by
    earlier launches become available (`ctr[0] = min(ctr[0], ctr[2]); ctr[2] = ctr[1]`)."""
    em = current()
    done = em.__dict__.setdefault('_blockpool_prologue', set())
    if id(pool) in done or not em.blocks:
        return
    done.add(id(pool))
    with em.open(em.blocks[0], 0):
        taken, avail = _word(pool.ctr, [0]), _word(pool.ctr, [2])
        taken.store(ops.binary('min', taken.load(), avail.load()))
        avail.store(_word(pool.ctr, [1]).load())


def _take(pool):
    """A block of our own: the spare word's, else the ring's next available entry, else a fresh
    one from top. Its id, 0 when the pool is full."""
    got = _Local()
    got.store(ops.binary('max', _raw_atomic(_word(pool.spare, [0]), 'xchg', 0), 0))
    with _if(ops.binary('land', ops.binary('eq', got.load(), 0),
                        ops.binary('lt', _word(pool.ctr, [0]).load(),
                                   _word(pool.ctr, [2]).load()))):
        k = _raw_atomic(_word(pool.ctr, [0]), 'add', 1)
        with _if(ops.binary('lt', k, _word(pool.ctr, [2]).load())):
            got.store(_word(pool.ring, [ops.binary('mod', k, pool.capacity)]).load())
    top = _word(pool.top, [0])
    with _if(ops.binary('land', ops.binary('eq', got.load(), 0),
                        ops.binary('lt', top.load(), pool.capacity))):
        s = _raw_atomic(top, 'add', 1)
        got.store(ops.select(ops.binary('lt', s, pool.capacity), ops.binary('add', s, 1),
                             _ival(0)))
    return got.load()


def _claim(pool, tbl, flat):
    v = _Local()
    mine = _take(pool)
    prev = _raw_atomic(tbl, 'cas', mine, expect=0)
    won = ops.binary('eq', prev, 0)
    v.store(ops.select(won, mine, prev))
    with _if(ops.binary('land', won, ops.binary('gt', mine, 0))):
        _word(pool.owner, [ops.binary('sub', mine, 1)]).store(flat)
    with _if(ops.binary('land', ops.unary('not', won), ops.binary('gt', mine, 0))):
        with _if(ops.binary('ne', _raw_atomic(_word(pool.spare, [0]), 'cas', mine, expect=0), 0)):
            _push(pool, mine)  # (the spare word was taken: the ring, for the next launch)
    with _if(ops.binary('le', v.load(), 0)):
        _word(pool.top, [1]).store(1)
    return v.load()


def block_id(pool, cell, allocate):
    """The block id of the pointer cell `cell` (index Values), claiming one if `allocate`."""
    tbl = _word(pool.table, cell)
    if not allocate:
        return tbl.load()
    _prologue(pool)
    v = _Local()
    v.store(tbl.load())
    flat = _flat(pool.table.shape, cell)
    with _if(ops.binary('le', v.load(), 0)):
        if elects():  # (as the dynamic pool: the lanes of a subgroup needing the same
            # block elect one claimer, a subgroup min picking the cell and a max sharing the id)
            lead = Value(emit('sg_reduce', T.i32, [flat.stmt], attrs={'fn': 'min'}))
            with _if(ops.binary('eq', flat, lead)):
                r = _Local()
                r.store(0)
                with _if(Value(emit('sg_elect', T.u1))):
                    r.store(_claim(pool, tbl, flat))
                v.store(Value(emit('sg_reduce', T.i32, [r.load().stmt], attrs={'fn': 'max'})))
            with _if(ops.binary('le', v.load(), 0)):  # (not elected, or a full pool)
                v.store(_claim(pool, tbl, flat))
        else:
            v.store(_claim(pool, tbl, flat))
    return v.load()


def _shape_key(s, depth):
    """A key equal for index statements that compute the same value from the same operands
    (grid_v[base + offset] and grid_m[base + offset]: two `add`s of the same statements), so
    the fields of one cell share one block lookup."""
    if not isinstance(s, ir.Stmt):
        return ('py', s)
    if s.op == 'const':
        return ('const', str(s.dtype), repr(s.attrs.get('value')))
    if s.op == 'load' and s.args and s.args[0].op == 'alloca':
        return ('load', id(s.args[0]))  # (a hit checks that no store came in between)
    if depth == 0 or s.op not in ir.PURE or s.blocks:
        return id(s)
    return (s.op, str(s.dtype), repr(sorted((k, repr(v)) for k, v in (s.attrs or {}).items())),
            tuple(_shape_key(a, depth - 1) for a in s.args))


def _loaded_locals(stmts, depth=6):
    out = set()
    for s in stmts:
        if isinstance(s, ir.Stmt) and depth:
            if s.op == 'load' and s.args and s.args[0].op == 'alloca':
                out.add(s.args[0])
            elif s.op in ir.PURE:
                out |= _loaded_locals(s.args, depth - 1)
    return out


def _unchanged(block, hit, indices):
    """A memo hit found by _shape_key holds when no local the index reads was stored since the
    hit's lookup (its address statement, in this block)."""
    allocas = _loaded_locals(indices)
    if not allocas:
        return True
    at = hit[0].stmt
    stmts = block.stmts
    for k in range(len(stmts) - 1, -1, -1):
        if stmts[k] is at:
            break
    else:
        return False
    tail = ir.Block()
    tail.stmts = stmts[k + 1:]  # (a view for the walk; the statements keep their block)
    return not any(x.op == 'store' and x.args[0] in allocas for x in ir.walk(tail))


def address(field, indices, allocate):
    """(pool Field, flat index stmt, valid Value) of field[indices] (index stmts); the members
    of one element share one lookup (as frontend/dynpool.address)."""
    pool = BP.pool_of(BP.node_of(field))
    key = _key(pool, field)
    if field not in pool.pools:
        raise error(f'field {field.name} was placed under pointer SNode {pool.node} after a '
                    'kernel used its block pool: place every field of the node first')
    em = current()
    memo = em.__dict__.setdefault('_blockpool_memo', {})
    mk = (em.blocks[-1], id(pool), tuple(_shape_key(s, 6) for s in indices))
    usable = em.at_index[-1] is None
    hit = memo.get(mk + (True,)) or (None if allocate else memo.get(mk + (False,)))
    if hit is not None and not _unchanged(em.blocks[-1], hit, indices):
        hit = None
    if hit is None or not usable:
        if allocate:
            for k in [k for k in memo if k[1] == id(pool) and not k[3]]:
                del memo[k]
        g = pool.guard[key]
        idx = [Value(s) if isinstance(s, ir.Stmt) else s for s in indices]
        ident = block_id(pool, g.cell_index(idx), allocate)
        cellpos = {p for p, _ in g.cell}
        res = [ops.binary('mod', idx[p], s) if p in cellpos else idx[p]
               for p, s in enumerate(pool.steps[key])]
        e = _flat(pool.steps[key], res)
        valid = ops.binary('gt', ident, 0)
        at = ops.binary('add', ops.binary('mul', ops.binary('sub', ident, 1), pool.B[key]), e)
        hit = (ops.select(valid, at, _ival(0)), valid)
        if usable:
            memo[mk + (allocate,)] = hit + (indices,)
    return pool.pools[field], hit[0].stmt, hit[1]


def load(elem, attrs):
    pf, at, valid = address(elem.field, elem.indices, False)
    v = Value(emit('gload', elem.dtype, [at], attrs={**attrs, 'buf': pf.buffer}))
    return ops.select(valid, v, ops.as_value(0, elem.dtype))


def store(elem, value):
    v = ops.as_value(value, elem.dtype)
    pf, at, valid = address(elem.field, elem.indices, True)
    with _if(valid):
        emit('gstore', None, [at, v.stmt], attrs={'buf': pf.buffer, 'comp': elem.comp})


def atomic(elem, fn, value):
    v = ops.as_value(value, elem.dtype)
    pf, at, valid = address(elem.field, elem.indices, True)
    zero = ops.as_value(0, elem.dtype)
    attrs = {'buf': pf.buffer, 'comp': elem.comp, 'fn': fn}
    if fn in ('add', 'sub'):
        r = Value(emit('atomic', elem.dtype, [at, ops.select(valid, v, zero).stmt], attrs=attrs))
        return ops.select(valid, r, zero)
    res = _Local(elem.dtype)
    res.store(zero)
    with _if(valid):
        res.store(Value(emit('atomic', elem.dtype, [at, v.stmt], attrs=attrs)))
    return res.load()


def activate(node, idx):
    """ti.activate of a pooled pointer cell: claim its block."""
    block_id(BP.pool_of(node), idx, True)


def deactivate(node, idx):
    """ti.deactivate of a pooled pointer cell: the invocation that clears the table word zeroes
    the block in every pool and pushes it onto the free ring (reused from the next launch)."""
    pool = BP.pool_of(node)
    old = _raw_atomic(_word(pool.table, idx), 'xchg', 0)
    with _if(ops.binary('gt', old, 0)):
        for f, pf in pool.pools.items():
            B = pool.B[f]
            body = ir.Block()
            base = ops.binary('mul', ops.binary('sub', old, 1), B)
            loop = emit('for', T.i32, [_ival(0), _ival(B)], attrs={'step': 1}, blocks=[body])
            with current().open(body):
                at = ops.binary('add', base, Value(loop))
                for comp in range(f.ncomp):
                    emit('gstore', None, [at.stmt, ops.as_value(0, f.dtype).stmt],
                         attrs={'buf': pf.buffer, 'comp': comp})
        _push(pool, old)


def _push(pool, ident):
    """Put block `ident` (zero) on the free ring: taken from the next launch on."""
    _raw_atomic(_word(pool.top, [2]), 'add', 1)
    k = _raw_atomic(_word(pool.ctr, [1]), 'add', 1)
    _word(pool.ring, [ops.binary('mod', k, pool.capacity)]).store(ident)


def struct_for_plan(guards, dims):
    """The pooled guard of a struct-for whose deepest sparse node is a pooled pointer (over a
    field under it, or a node at or under it), else None."""
    if not guards or guards[-1].kind != 'pointer' or \
            not guards[-1].node.__dict__.get('_block_pool_mode') or \
            any(lo != 0 or st != 1 for lo, _, st in dims):
        return None
    return guards[-1]


def walk_blocks(g, shape):
    """A struct-for over the blocks given out: (trip count Value, blocks(k)), where blocks(k)
    gives for iteration k (a Value) the condition that its block is live and the loop's
    indices there. Block b = k // Bl is live when table[owner[b]] == b + 1 (active, not
    freed); its cell comes from owner[b]. The count is snapshot first (`listed`), so blocks
    claimed by the loop itself are not visited."""
    pool = BP.pool_of(g.node)
    steps = BP.steps_of(g, shape)
    Bl = 1
    for s in steps:
        Bl *= s
    _word(pool.listed, [0]).store(ops.binary('min', _word(pool.top, [0]).load(), pool.capacity))
    total = ops.binary('mul', _word(pool.listed, [0]).load(), Bl)
    cells = list(pool.table.shape)

    def blocks(k, unflatten):
        b = ops.binary('floordiv', k, Bl) if Bl != 1 else k
        e = ops.binary('mod', k, Bl) if Bl != 1 else _ival(0)
        c = _word(pool.owner, [b]).load()
        cell = unflatten(c, cells) if cells else []
        live = ops.binary('eq', _word(pool.table, cell).load(), ops.binary('add', b, 1))
        r = unflatten(e, steps) if steps else []
        idx = list(r)
        for (p, s), cc in zip(g.cell, cell):
            idx[p] = ops.binary('add', ops.binary('mul', cc, s), r[p]) if s != 1 else cc
        return live, idx
    return total, blocks
