"""Data floor: `ti.get_addr(f, indices)` in a kernel: the address of a field element, a u64, in
Taichi's layout of the SNode tree (Taichi 1.7.4's LLVM struct compiler, the backends where
Taichi has get_addr):

- a place is its dtype (a matrix field's components and a struct field's members are consecutive
  places of their node, as Taichi's default AOS layout places them);
- a dense node is an array of its cells, a cell a C struct of the node's children (dense nodes
  and places) in the order they were made, each aligned to its element size;
- a cell's index is row-major over the node's axes; an index along an axis split over several
  nodes is divided among them (`(i // below) % size`, the top one undivided).

vkdiff stores each field in its own row-major device buffer, so these are not device pointers
(nothing in a kernel dereferences one): each tree directly under a root (one per top-level
`ti.root.dense(...)` chain, per `shape=` field, per FieldsBuilder child) gets its own virtual
base, a multiple of 2**32, and distances between addresses in it are Taichi's (what
`algorithm/print_offset.py` prints, checked against Taichi in tests/data/test_get_addr.py). As in
Taichi, the indices are the stored ones: a field's `offset=` is not subtracted. Pointer,
bitmasked and dynamic nodes have allocation-dependent addresses and are refused."""
import itertools

import numpy as np

from .. import types as T
from ..errors import CompileError, TaichiIndexError, TaichiSyntaxError, TaichiTypeError, UnsupportedError
from ..frontend import ops
from ..frontend.context import Value, current, error
from .field import Field, SNode
from .matrix import Matrix

_next_base = itertools.count(1)


def get_addr(f, indices):
    """`ti.get_addr(x, [i, j])` or `ti.get_addr(x.snode, I)`: the u64 address of x[i, j]."""
    if current() is None:
        raise TaichiSyntaxError('ti.get_addr can only be called inside a kernel')
    leaf, member = _place_node(f)
    idx = _indices(indices)
    axes = sorted({a for a, _ in leaf.levels})
    if len(idx) != len(axes):
        raise error(f'ti.get_addr: {_what(leaf)} is {len(axes)}-D and needs {len(axes)} '
                    f'indices, got {len(idx)}', TaichiIndexError)
    index = {a: (ops.cast(x, T.i64) if isinstance(x, Value) else int(x))
             for a, x in zip(axes, idx)}
    path = leaf._path_from_root()
    for node in path[1:-1]:
        if node._kind != 'dense':
            raise error(f'ti.get_addr: {_what(leaf)} lies under a {node._kind} SNode, whose '
                        'cells have no fixed address; vkdiff models dense layouts only',
                        UnsupportedError)
    addr = _base(path[1]) if len(path) > 1 else _base(leaf)
    for depth in range(1, len(path)):
        node, parent = path[depth], path[depth - 1]
        if depth > 1:
            addr = addr + _cell_layout(parent)[0][id(node)]
        if node is not leaf:
            addr = addr + _cell_index(node, leaf, index) * _cell_layout(node)[1]
    offsets = _member_offsets(leaf)[0]
    off = offsets.get(id(member))
    owner = getattr(member, '_member_of', None)
    if off is None and owner is not None:  # a member of a matrix field placed as a whole
        off = offsets.get(id(owner), 0) + member._comp * member.dtype.nbytes
    return ops.cast(addr + (off or 0), T.u64)


def _what(leaf):
    return f'field {leaf._field.name}' if leaf._field is not None else 'this field'


def _place_node(f):
    """(the place SNode of a field, the field) or (a place node, None)."""
    if isinstance(f, Field):
        return f.snode, f
    if isinstance(f, SNode) and f._kind == 'place':
        return f, None
    raise error('ti.get_addr takes a field or the SNode it is placed as (x.snode), got '
                f'{type(f).__name__}', TaichiTypeError)


def _indices(indices):
    if indices is None:
        return []
    if isinstance(indices, Matrix):
        return list(indices.entries)
    if isinstance(indices, (list, tuple)):
        return list(indices)
    if isinstance(indices, Value) or isinstance(indices, (int, np.integer)):
        return [indices]
    raise error(f'ti.get_addr: indices must be a list, a vector or an integer, got '
                f'{type(indices).__name__}', TaichiTypeError)


def _base(top):
    """The virtual base address of a tree under a root."""
    base = getattr(top, '_vkdiff_addr_base', None)
    if base is None:
        base = top._vkdiff_addr_base = next(_next_base) << 32
    return base


def _local_levels(node):
    return node.levels[len(node._parent.levels):] if node._parent is not None else node.levels


def _cell_index(node, leaf, index):
    """The row-major index of the cell of `node` that holds leaf[index]."""
    below = {}  # per axis, the product of that axis's sizes under `node` on the leaf's path
    for a, n in leaf.levels[len(node.levels):]:
        below[a] = below.get(a, 1) * n
    above = {a for a, _ in node.levels[:len(node.levels) - len(_local_levels(node))]}
    cell, acc = 0, 1
    for a, n in sorted(_local_levels(node), reverse=True):  # the last axis varies fastest
        d = index[a] // below.get(a, 1) if below.get(a, 1) != 1 else index[a]
        if a in above:  # a lower division of the axis: the digit within this node
            d = d % n
        cell = cell + d * acc
        acc *= n
    return cell


def _member_offsets(node):
    """({id(field): byte offset}, bytes, alignment) of what a place node holds as a C struct: a
    field's components, or a struct field's members in order (each a place of its own in
    Taichi)."""
    fields = list(getattr(node, '_placed_fields', ()) or ())
    if not fields and node._field is not None:
        fields = [node._field]
    offsets, off, align = {}, 0, 1
    for m in fields:
        nbytes = m.dtype.nbytes
        off = -(-off // nbytes) * nbytes
        offsets[id(m)] = off
        off += nbytes * m.ncomp
        align = max(align, nbytes)
    return offsets, -(-off // align) * align, align


def _size_align(node):
    """(bytes, alignment) of what a node puts in its parent's cell."""
    if node._kind == 'place':
        return _member_offsets(node)[1:]
    if node._kind != 'dense':
        raise error(f'ti.get_addr: a {node._kind} SNode in the same tree has no fixed layout; '
                    'vkdiff models dense layouts only', UnsupportedError)
    _, cell, align = _cell_layout(node)
    cells = 1
    for _, n in _local_levels(node):
        cells *= n
    return cells * cell, align


def _cell_layout(node):
    """({id(child): byte offset}, cell bytes, alignment) of a node's cell: its children as a C
    struct, in the order they were made."""
    offsets, off, align = {}, 0, 1
    for child in node._get_children():
        size, a = _size_align(child)
        off = -(-off // a) * a
        offsets[id(child)] = off
        off += size
        align = max(align, a)
    return offsets, -(-off // align) * align, align


def host_address(field, index):
    """Taichi's byte address (in the model above) of field[index] (ints, stored indices in ijkl
    order, any values) for Python scope, or None where a node on the field's tree has no fixed
    layout (pointer, bitmasked, dynamic)."""
    leaf = field.snode
    path = leaf._path_from_root()
    axes = sorted({a for a, _ in leaf.levels})
    idx = dict(zip(axes, (int(k) for k in index)))
    try:
        if any(node._kind != 'dense' for node in path[1:-1]):
            return None
        addr = 0
        for depth in range(1, len(path)):
            node, parent = path[depth], path[depth - 1]
            if depth > 1:
                addr += _cell_layout(parent)[0][id(node)]
            if node is not leaf:
                addr += _cell_index(node, leaf, idx) * _cell_layout(node)[1]
    except (CompileError, UnsupportedError):
        return None
    return addr
