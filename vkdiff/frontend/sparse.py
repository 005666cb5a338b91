"""Frontend floor: the IR of sparse SNodes (layout and semantics: lang/sparse.py). A write to a field
under pointer/bitmasked nodes also stores 1 into each ancestor's mask word (a dynamic one: an
atomic max of its length); a read under a dynamic node gives 0 past the list's length;
struct-fors skip inactive cells; `ti.activate/deactivate/is_active/append/length` and the
dynamic field methods `x[i].append(v)`, `x[i].length()`, `x[i].deactivate()`."""
import contextlib

from .. import ir
from .. import types as T
from ..errors import TaichiIndexError
from ..lang import sparse as S
from . import ops
from .context import Value, current, emit, error
from ..lang.matrix import Matrix
from ..lang.field import Field

_suppressed = [0]


@contextlib.contextmanager
def no_activation():
    """Stores emitted inside do not activate (they write cells known to be active)."""
    _suppressed[0] += 1
    try:
        yield
    finally:
        _suppressed[0] -= 1


def _vals(indices):
    return [Value(s) if isinstance(s, ir.Stmt) else s for s in indices]


def _word(field, idx):
    return lvalues.FieldElem(field, [ops.as_value(i, T.i32).stmt for i in idx])


def on_write(field, indices):
    """Activate the sparse ancestors of field[indices] (before a store or atomic)."""
    if _suppressed[0]:
        return
    guards = S.guards_of(field)
    if not guards:
        return
    idx = _vals(indices)
    for g in guards:
        if g.node.__dict__.get('_block_pool_mode'):
            continue  # a pooled pointer: the store claims the cell's block (frontend/blockpool.py)
        w = _word(g.store, g.cell_index(idx))
        if g.kind == 'dynamic':
            w.atomic('max', ops.binary('add', g.position(idx), 1))
        else:
            w.store(1)


def on_read(field, indices, value):
    """A read past a dynamic list's length gives 0."""
    for g in S.guards_of(field):
        if g.kind == 'dynamic':
            idx = _vals(indices)
            inside = ops.binary('lt', g.position(idx), _word(g.store, g.cell_index(idx)).load())
            value = ops.select(inside, value, ops.as_value(0, value.dtype))
    return value


def active_condition(guards, idx):
    """A u1 Value: every guard's cell at idx is active (None when there are no guards)."""
    cond = None
    for g in guards:
        w = _word(g.store, g.cell_index(idx)).load()
        c = ops.binary('lt', g.position(idx), w) if g.kind == 'dynamic' else \
            ops.binary('ne', w, 0)
        cond = c if cond is None else ops.binary('land', cond, c)
    return cond


@contextlib.contextmanager
def only_active(guards, idx):
    """Emit what follows inside `if (cells at idx are active)` (a struct-for body)."""
    cond = active_condition(guards, idx) if guards else None
    if cond is None:
        yield
        return
    then_b, else_b = ir.Block(), ir.Block()
    emit('if', None, [ops.to_bool(cond)], blocks=[then_b, else_b])
    with current().open(then_b):
        yield


def _index_list(node, indices, what, container=False):
    """The indices as a list (ints and Values): of a cell of `node`, or with container=True of
    the dynamic node's container cell (its list). Either is accepted for a dynamic node when
    container is None."""
    if isinstance(indices, Matrix):
        idx = list(indices.entries)
    elif isinstance(indices, (list, tuple)):
        idx = []
        for k in indices:
            idx.extend(k.entries if isinstance(k, Matrix) else [k])
    elif indices is None:
        idx = []
    else:
        idx = [indices]
    wants = {len(node.shape)}
    if node._kind == 'dynamic' and container is not False:
        wants = {len(node._parent.shape)} | (wants if container is None else set())
    if len(idx) not in wants:
        want = ' or '.join(str(w) for w in sorted(wants))
        raise error(f'{what}: the node takes {want} indices, got {len(idx)}', TaichiIndexError)
    for k in idx:
        if not (isinstance(k, Value) and (k.dtype.is_int or k.dtype is T.u1) or
                ops.is_number(k) and int(k) == k):
            raise error(f'{what}: an index must be an integer, got {k!r}')
    return [k if isinstance(k, Value) else int(k) for k in idx]


def _rescaled(node, anc, idx):
    """The index of `anc`'s cell holding cell idx of `node` (anc above node)."""
    axes = sorted({a for a, _ in node.levels})
    out = []
    for a, n in zip(sorted({a for a, _ in anc.levels}), anc.shape):
        k = idx[axes.index(a)]
        r = node.shape[axes.index(a)] // n
        out.append(ops.binary('floordiv', k, r) if r != 1 else k)
    return out


def _set(node, idx, on):
    """Store 1/0 into the mask of a pointer/bitmasked node, or set a dynamic list's length."""
    if node._kind == 'dynamic':
        cell, j = idx[:-1], idx[-1]
        w = _word(node._sparse_store, cell)
        w.atomic('max', ops.binary('add', j, 1)) if on else w.store(0)
    elif node.__dict__.get('_block_pool_mode'):  # a pooled pointer: claim / free its block
        (blockpool.activate if on else blockpool.deactivate)(node, idx)
    else:
        _word(node._sparse_store, idx).store(1 if on else 0)


def activate(node, indices):
    idx = _index_list(node, indices, 'ti.activate', None)
    if node._kind not in S.SPARSE:
        return
    _activate_ancestors(node, node, idx)
    if node._kind == 'dynamic':
        idx = idx if len(idx) == len(node.shape) else idx + [0]
    _set(node, idx, True)


def _activate_ancestors(node, cell_node, idx):
    """Activate the cells above `node` of its pointer/bitmasked ancestors that hold the cell
    `idx` of `cell_node` (node itself, or a dynamic node's parent for the list at idx)."""
    for anc in node._path_from_root()[1:-1]:
        if anc._kind in ('pointer', 'bitmasked'):
            _set(anc, _rescaled(cell_node, anc, idx), True)


def deactivate(node, indices):
    idx = _index_list(node, indices, 'ti.deactivate', node._kind == 'dynamic')
    kind = node._kind
    if kind not in S.SPARSE:
        raise error(f'ti.deactivate: a {kind} node cannot be deactivated (pointer, bitmasked or '
                    'dynamic only)')
    if kind == 'bitmasked':
        _word(node._sparse_store, idx).store(0)
        return
    # a pointer cell or a dynamic list: Taichi frees it, so its data (and every mask under a
    # pointer) reads 0 afterwards, also below a later write past a list's new length. The one
    # invocation that clears a nonzero word zeroes them (the rest find it cleared already)
    if node.__dict__.get('_block_pool_mode'):
        return blockpool.deactivate(node, idx)  # (frontend/blockpool.py: onto the free ring)
    cell = node._parent if kind == 'dynamic' else node
    old = _word(node._sparse_store, idx).atomic('band', 0)
    if node.__dict__.get('_pool_mode'):  # its chunks stay with it, zeroed (lang/dynpool.py)
        return dynpool.clear_list(node, idx, old)
    then_b, else_b = ir.Block(), ir.Block()
    emit('if', None, [ops.to_bool(ops.binary('ne', old, 0))], blocks=[then_b, else_b])
    with current().open(then_b):
        for f in S.fields_under(node):
            if not blockpool.pooled(f):  # (a pooled pointer under it: its table words are
                _zero_region(f, f.shape, S.layout_of(f), cell, idx)  # zeroed below, so it reads 0)
        for d in S.sparse_under(node):
            st = d._sparse_store
            _zero_region(st, st.shape, None, cell, idx,
                         (d._parent if d._kind == 'dynamic' else d).levels)


def _zero_region(field, shape, placed, node, idx, levels=None):
    """Zero field's elements inside cell idx of `node` (a serial loop)."""
    if levels is None:
        levels = placed._snode_leaf.levels
    node_axes = sorted({a for a, _ in node.levels})
    starts, counts = [], []
    for pos, a in enumerate(sorted({a for a, _ in levels})):
        if a in node_axes:
            r = 1
            for b, n in levels[len(node.levels):]:
                if b == a:
                    r *= n
            starts.append(ops.binary('mul', idx[node_axes.index(a)], r))
            counts.append(r)
        else:
            starts.append(0)
            counts.append(shape[pos])
    total = 1
    for c in counts:
        total *= c
    body = ir.Block()
    loop = emit('for', T.i32, [ops.as_value(0, T.i32), ops.as_value(total, T.i32)],
                attrs={'step': 1}, blocks=[body])
    with current().open(body), no_activation():
        k, out = Value(loop), []
        for d in reversed(range(len(counts))):
            q = ops.binary('mod', k, counts[d]) if d > 0 else k
            out.append(ops.binary('add', starts[d], q))
            k = ops.binary('floordiv', k, counts[d])
        out.reverse()
        stmts = [ops.as_value(i, T.i32).stmt for i in out]
        for c in range(field.ncomp):
            lvalues.FieldElem(field, stmts, c).store(ops.as_value(0, field.dtype))


def is_active(node, indices):
    idx = _index_list(node, indices, 'ti.is_active', None)
    if node._kind in ('pointer', 'bitmasked'):
        return ops.cast(ops.binary('ne', _word(node._sparse_store, idx).load(), 0), T.i32)
    if node._kind == 'dynamic':
        cell, j = (idx[:-1], idx[-1]) if len(idx) == len(node.shape) else (idx, 0)
        return ops.cast(ops.binary('lt', j, _word(node._sparse_store, cell).load()), T.i32)
    return ops.as_value(1, T.i32)


def _dynamic(node, what):
    if node._kind != 'dynamic':
        raise error(f'ti.{what} takes a dynamic SNode, got a {node._kind} one')


def length(node, indices):
    _dynamic(node, 'length')
    idx = _index_list(node, indices, 'ti.length', True)
    n = node.levels[-1][1]
    return ops.binary('min', _word(node._sparse_store, idx).load(), n)


def append(node, indices, value):
    """Append to the list at `indices`; returns the list's old length (Taichi's)."""
    _dynamic(node, 'append')
    idx = _index_list(node, indices, 'ti.append', True)
    n = node.levels[-1][1]
    _activate_ancestors(node, node._parent, idx)  # (idx: the list's cell)
    k = _word(node._sparse_store, idx).atomic('add', 1)
    placed = [c for c in node._get_children() if c._kind == 'place' and
              (c._field is None or c._field.is_grad_of is None)]  # (not place(x, x.grad)'s)
    if len(placed) != 1:
        raise error('ti.append: place exactly one field (or one struct field) in the dynamic '
                    f'node, found {len(placed)}')
    leaf = placed[0]
    target = leaf._field or leaf._struct_field
    then_b, else_b = ir.Block(), ir.Block()
    emit('if', None, [ops.to_bool(ops.binary('lt', k, n))], blocks=[then_b, else_b])
    with current().open(then_b), no_activation():
        full = [ops.as_value(i, T.i32).stmt for i in _full_index(node, leaf, idx, k)]
        lv = target._lvalue(full) if hasattr(target, '_lvalue') else lvalues.field_lvalue(target, full)
        lv.store(value)
    return k


def _full_index(node, leaf, cell, j):
    """The index of list element j of the list at `cell` (the field's own index order)."""
    owner_axes = sorted({a for a, _ in node._parent.levels})
    dyn_axis = node.levels[-1][0]
    out = []
    for a in sorted({a for a, _ in leaf.levels}):
        if a == dyn_axis:
            out.append(j)
        else:
            out.append(cell[owner_axes.index(a)])
    return out


METHODS = ('append', 'length', 'deactivate')


def dynamic_method(base, key, attr):
    """`x[i, j].append`, `x.length`, `x[i].deactivate` (`base[key].attr`, key None for
    `base.attr`) on a field placed in a dynamic node, named with one index fewer than the field
    has: the method, as a function of the call's arguments; else None."""
    if attr not in METHODS or not (isinstance(base, Field) or compiletime._is_struct_field(base)):
        return None
    try:
        dyn = base.parent()
    except Exception:
        return None
    key = list(key) if isinstance(key, tuple) else [] if key is None else [key]
    if getattr(dyn, '_kind', None) != 'dynamic' or len(base.shape) != len(_flat(key)) + 1:
        return None
    if attr == 'append':
        return lambda *args: append(dyn, key, *args)
    return lambda: (length if attr == 'length' else deactivate)(dyn, key)


def _flat(key):
    return [e for k in key for e in (k.entries if isinstance(k, Matrix) else [k])]


# cycles inside the frontend: lvalues.py, dynpool.py, blockpool.py and compiletime.py import this module
from . import blockpool, compiletime, dynpool, lvalues  # noqa: E402
