"""Frontend floor: the IR of the pool layout of dynamic SNodes (layout and allocator: lang/dynpool.py).
An element (list at `cell`, position j) lives at pool index (id - 1) * B + o, where chunk class
c and offset o follow from j and id is the list's table word for c. A load gives 0 where the
chunk is missing (or j is outside the list's extent); a store or atomic first allocates the
chunk (a compare-exchange claims the table word, an atomic add takes slots from the pool's
top) and is dropped
when the pool is full (the allocation flags it; the sync after the launch raises)."""
import contextlib

from .. import ir
from .. import types as T
from ..lang import dynpool as D
from ..lang import sparse as S
from . import ops
from .context import Value, current, emit, error
from .sparse import _word, only_active


def pooled(field):
    return D.node_of(field) is not None


@contextlib.contextmanager
def _if(cond, otherwise=None):
    """Emit the body inside `if cond`; `otherwise()` (if given) emits the else branch."""
    then_b, else_b = ir.Block(), ir.Block()
    emit('if', None, [ops.to_bool(cond)], blocks=[then_b, else_b])
    if otherwise is not None:
        with current().open(else_b):
            otherwise()
    with current().open(then_b):
        yield


def _ival(x):
    return ops.as_value(x, T.i32)


def slot(pool, cell, j, allocate):
    """(flat pool index Value, valid Value) of position j of the list at `cell`."""
    B, n = pool.B, pool.n
    j = _ival(j)
    c = _ival(0)
    for k in range(1, pool.K):
        c = ops.binary('add', c, ops.cast(ops.binary('ge', j, B * ((1 << k) - 1)), T.i32))
    first = ops.binary('mul', ops.binary('sub', ops.binary('shl', _ival(1), c), 1), B)
    o = ops.binary('sub', j, first)
    tbl = _word(pool.table, list(cell) + [c])
    ident = _allocate(pool, tbl, c) if allocate else tbl.load()
    valid = ops.binary('land', ops.binary('gt', ident, 0),
                       ops.binary('land', ops.binary('ge', j, 0), ops.binary('lt', j, n)))
    at = ops.binary('add', ops.binary('mul', ops.binary('sub', ident, 1), B), o)
    return ops.select(valid, at, _ival(0)), valid


def _allocate(pool, tbl, c):
    """The table word's chunk id, allocating the chunk when it has none: the invocation that
    claims the word (0 -> -1, a compare-exchange) takes the slots and installs them; one that
    finds it claimed waits for the id (Taichi's lock around Dynamic_allocate). 0 when the pool
    is full (then its failure word is set)."""
    v = lvalues.LocalVar(T.i32)
    v.store(tbl.load())
    with _if(ops.binary('le', v.load(), 0)):
        prev = Value(emit('atomic', T.i32, tbl.indices + [_ival(-1).stmt],
                          attrs={'buf': pool.table.buffer, 'comp': 0, 'fn': 'cas', 'expect': 0}))

        def wait():
            v.store(prev)
            body = ir.Block()
            emit('while', None, blocks=[body])
            with current().open(body):
                with _if(ops.binary('ne', v.load(), -1)):
                    emit('break')
                v.store(tbl.atomic('bor', 0))
        with _if(ops.binary('eq', prev, 0), wait):
            new = _take(pool, c)
            tbl.atomic('max', new)
            v.store(new)
    return v.load()


def _take(pool, c):
    """2^c slots from the pool's top: the first one's id (1-based), or 0 when the pool is full
    (and its failure word set)."""
    size = ops.binary('shl', _ival(1), c)
    room = ops.binary('sub', _ival(pool.capacity), size)
    top = _word(pool.top, [0])
    start = lvalues.LocalVar(T.i32)
    start.store(-1)
    with _if(ops.binary('le', top.load(), room)):
        start.store(top.atomic('add', size))
    s = start.load()
    ok = ops.binary('land', ops.binary('ge', s, 0), ops.binary('le', s, room))
    with _if(ops.unary('not', ok)):
        _word(pool.top, [1]).store(1)
    return ops.select(ok, ops.binary('add', s, 1), _ival(0))


def address(field, indices, allocate):
    """(pool Field, flat index stmt, valid Value) of field[indices] (index stmts). The members
    of one struct element (the same index statements, in the same block) share one lookup: a
    chunk id, once allocated, stays for the launch; a lookup that did not allocate is forgotten
    at the next allocation in the pool."""
    pool = D.pool_of(D.node_of(field))
    if field not in pool.pools:
        raise error(f'field {field.name} was placed in dynamic SNode {pool.node} after a kernel '
                    'used the node: place every field of a dynamic node before the first kernel')
    em = current()
    memo = em.__dict__.setdefault('_dynpool_memo', {})
    key = (em.blocks[-1], pool, tuple(id(s) for s in indices))
    usable = em.at_index[-1] is None  # (emitting at a block's end: earlier values dominate)
    hit = memo.get(key + (True,)) or (None if allocate else memo.get(key + (False,)))
    if hit is None or not usable:
        if allocate:
            for k in [k for k in memo if k[1] is pool and not k[3]]:
                del memo[k]
        g = [g for g in S.guards_of(field) if g.kind == 'dynamic'][-1]
        idx = [Value(s) if isinstance(s, ir.Stmt) else s for s in indices]
        hit = slot(pool, g.cell_index(idx), g.position(idx), allocate)
        if usable:
            memo[key + (allocate,)] = hit + (indices,)  # (holds the statements alive)
    return pool.pools[field], hit[0].stmt, hit[1]


def load(elem, attrs):
    """FieldElem.load of a pooled field (before the list-length check)."""
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
    if fn in ('add', 'sub'):  # adding 0 where the pool is full: no branch (nor one to reverse)
        r = Value(emit('atomic', elem.dtype, [at, ops.select(valid, v, zero).stmt], attrs=attrs))
        return ops.select(valid, r, zero)
    res = lvalues.LocalVar(elem.dtype)
    res.store(zero)
    with _if(valid):
        res.store(Value(emit('atomic', elem.dtype, [at, v.stmt], attrs=attrs)))
    return res.load()


def clear_list(node, cell, old):
    """After a list's length went from `old` to 0: zero its first min(old, n) elements in every
    pool of the node (the chunks stay with the list for its next appends)."""
    pool = D.pool_of(node)
    end = ops.binary('min', _ival(old), pool.n)
    body = ir.Block()
    loop = emit('for', T.i32, [_ival(0), end], attrs={'step': 1}, blocks=[body])
    with current().open(body):
        at, valid = slot(pool, cell, Value(loop), False)
        with _if(valid):
            for f, pf in pool.pools.items():
                for comp in range(f.ncomp):
                    emit('gstore', None, [at.stmt, ops.as_value(0, f.dtype).stmt],
                         attrs={'buf': pf.buffer, 'comp': comp})


TILE = 256  # list positions per invocation of a struct-for over a pooled field


def struct_for_plan(guards, dims):
    """The dynamic guard of a struct-for over a pooled node's field (or the node), whose
    indices are its list's cell and position: then the loop runs over (list, tile of TILE
    positions) and each invocation over its tile's positions below the length, instead of over
    the whole extent (oit_renderer's: 2e9 indices). None otherwise."""
    if not guards or guards[-1].kind != 'dynamic' or \
            not guards[-1].node.__dict__.get('_pool_mode'):
        return None
    g = guards[-1]
    p, s, _, wrap = g.dyn
    if wrap or s != 1 or any(st != 1 for _, st in g.cell) or \
            len(g.cell) + 1 != len(dims) or any(lo != 0 or st != 1 for lo, _, st in dims):
        return None
    return g


def struct_for(fb, node, names, grouped, guards, g, offset):
    p, _, n, _ = g.dyn
    cells = list(g.store.shape)
    tile = min(TILE, n)
    tiles = -(-n // tile)
    total = tiles
    for c in cells:
        total *= c
    body = ir.Block()
    loop = emit('parfor', T.i32, [_ival(total)], blocks=[body])
    from . import loops  # cycle: loops.py imports this module (here, not at the end of this file:
    # there loops would load while compiletime, which it needs, is half loaded)
    with current().open(body), loops._loop_body(fb, 'parallel'):
        dims = [(0, c, 1) for c in cells + [tiles]]
        *cell, t = loops._unflatten(Value(loop), dims, cells + [tiles])
        length = ops.binary('min', _word(g.store, cell).load(), n)
        start = ops.binary('mul', t, tile)
        end = ops.binary('min', ops.binary('add', start, tile), length)
        inner = ir.Block()
        loop2 = emit('for', T.i32, [start, end], attrs={'step': 1}, blocks=[inner])
        with current().open(inner):
            idx = [None] * (len(cells) + 1)
            for (pos, _), c in zip(g.cell, cell):
                idx[pos] = c
            idx[p] = Value(loop2)
            loops._bind_indices(fb, names, idx, grouped, offset)
            with only_active(guards[:-1], idx):  # (a bitmasked node above the lists)
                fb.build_body(node.body)


# a cycle inside the frontend: lvalues.py imports this module
from . import lvalues  # noqa: E402
