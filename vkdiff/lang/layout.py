"""Data floor: the order of a field's elements in its buffer, Taichi's: the SNode nesting order.

Taichi (taichi/transforms/scalar_pointer_lowerer.cpp) finds a field element through the levels
of its SNode path from the root down. At each level it takes, for every axis the level divides,
the digit `(index // below)` (the axis's first level, its index undivided from above) or
`(index % (size * below)) // below` (a lower level), `below` being the product of that axis's
sizes at the levels under it; the level's cell is the row-major number of its digits (axes in
ijkl order, the last fastest). Summing `cell * (cells of the levels below)` over the levels gives
the element's linear address. So `ti.root.dense(ti.l, 16).dense(ti.i, 1).place(x)` (shape
(1, 16)) puts x[i, l] at `l * 1 + i`, and the out-of-range x[t, 0] at t: the element x[0, t], a
pattern DiffTaichi's programs rely on (issue 24).

vkdiff keeps each field in its own buffer, in this order. Where each axis's address is a fixed
multiple of its index (every layout where an axis split over several levels has them adjacent:
`dense(ti.l, n).dense(ti.i, m)`, `dense(ti.i, 4).dense(ti.i, 2)`, every `shape=` field), the
element's address is `sum(index[a] * strides[a])` for any index, in range or not, exactly as
Taichi computes it; kernels use these strides (codegen/memory.py: `meta['strides']`) and the
host sees the buffer through a strided numpy view, so `to_numpy` and `x[i, j]` keep the axis
order. A blocked layout (`dense(ti.ij, 4).dense(ti.ij, 2)`: an axis's levels apart) is not a
fixed multiple; it keeps the row-major axis order, identical in range.

In Taichi all fields of one SNode tree share one buffer: fields placed under one node alternate
per cell (AoS). Per-field buffers give the same address for every out-of-range index whose
Taichi address falls on a slot of the same field (`alias`, checked against the layout ti.get_addr
models, lang/snode_addr.py); where it falls on another field's slot, Python scope refuses it."""
import math
import os
import sys
import warnings

from ..errors import FieldAliasWarning


class Layout:
    """The element order of a field placed under SNode `levels` ((axis, size), ... from the root
    down, each node's own axes in ijkl order): `shape` per axis in ijkl order, `strides`
    (elements per unit of each axis's index), None for a blocked layout; `row_major` when the
    storage is in the row-major axis order (a blocked layout keeps that order)."""

    def __init__(self, levels):
        self.levels = tuple(levels)
        self.axes = sorted({a for a, _ in self.levels})
        size = {a: 1 for a in self.axes}
        for a, n in self.levels:
            size[a] *= n
        self.shape = tuple(size[a] for a in self.axes)
        self.strides = self._affine_strides()
        self.row_major = self.strides is None or self.strides == row_major_strides(self.shape)

    @classmethod
    def of_node(cls, node):
        """The Layout of a field placed under SNode `node`."""
        levels = []
        for n in node._path_from_root()[1:]:
            own = n.levels[len(n._parent.levels):]
            levels.extend(sorted(own, key=lambda level: level[0]))  # (Taichi sorts a node's axes)
        return cls(levels)

    def _affine_strides(self):
        """Per-axis strides if every axis's digits combine into `index * stride`, else None.
        A digit's weight is the number of elements under its level."""
        digits = {a: [] for a in self.axes}  # per axis, (size, weight) from the root down
        below = 1
        for a, n in reversed(self.levels):
            digits[a].insert(0, (n, below))
            below *= n
        strides = []
        for a in self.axes:
            d = digits[a]
            if any(c_hi != c_lo * n_lo for (_, c_hi), (n_lo, c_lo) in zip(d, d[1:])):
                return None  # this level of the axis and its next one are apart
            strides.append(d[-1][1])
        return tuple(strides)

    def address(self, index):
        """Taichi's linear address of the element at `index` (ints in ijkl order, counted from
        0; any values); None for a blocked layout."""
        if self.strides is None:
            return None
        return sum(k * s for k, s in zip(index, self.strides))

    def element(self, address):
        """The in-range index (ijkl order) at `address` (0 <= address < size)."""
        out = [0] * len(self.axes)
        for p in sorted(range(len(self.strides)), key=lambda p: -self.strides[p]):
            if self.shape[p] > 1:
                out[p], address = divmod(address, self.strides[p])
        return tuple(out)

    @property
    def size(self):
        return math.prod(self.shape)


def row_major_strides(shape):
    strides, acc = [], 1
    for n in reversed(shape):
        strides.append(acc)
        acc *= n
    return tuple(reversed(strides))


def assign(field, node):
    """`node.place(field)`: the field's element order (the first placement decides; its
    gradient and tangent follow it unless placed on their own)."""
    target = getattr(field, '_member_of', None) or field  # a member: the matrix field's buffer
    if target.__dict__.get('_layout') is not None or target._shape is None:
        return
    lay = Layout.of_node(node)
    if lay.shape != tuple(target._shape):  # (a dynamic pool's field, a member's other shape)
        return
    _set(target, lay)
    for g in (target._grad, target._dual):
        if g is not None and g._shape is not None and g.__dict__.get('_layout') is None and \
                not g.__dict__.get('_placed_by_user'):
            _set(g, lay)


def follow(grad, primal):
    """A gradient made for a field that is placed already (`ti.root.lazy_grad()`)."""
    lay = primal.__dict__.get('_layout')
    if lay is not None and grad.__dict__.get('_layout') is None:
        _set(grad, lay)


def _set(field, lay):
    if field._storage is not None:
        return  # (allocated already: its data stays in the order it has)
    field._layout = lay
    if lay.row_major:
        field.buffer.meta.pop('strides', None)
    else:
        field.buffer.meta['strides'] = lay.strides


def of(field):
    """The field's Layout, or None for row-major storage in axis order."""
    lay = field.__dict__.get('_layout')
    return None if lay is None or lay.row_major else lay


def storage_strides(field):
    """Element strides of the field's storage (shape + elem_shape), or None for C order."""
    lay = of(field)
    if lay is None:
        return None
    ncomp = math.prod(field.elem_shape)
    return tuple(s * ncomp for s in lay.strides) + row_major_strides(field.elem_shape)


def alias(field, index):
    """For Python scope: the in-range index that the out-of-range `index` (counted from 0,
    ijkl order) lands on in Taichi's layout, or None where Taichi's address lies outside the
    field (past its storage, or on another field's slot in the SNode tree)."""
    from .ndarray import Ndarray  # cycle: field.py, which ndarray.py imports, imports this module
    if isinstance(field, Ndarray):
        return None  # (an ndarray has no SNodes: out of range is out of range)
    if hasattr(field, '_first_field'):  # a struct field: its members' order
        field = field._first_field()
    owner = getattr(field, '_member_of', None) or field  # (a member: the matrix field's order)
    lay = owner.__dict__.get('_layout')
    shape = tuple(field.shape)
    if lay is None:
        lay = Layout(tuple(zip(range(len(shape)), shape)))  # (a shape= field: row-major)
    address = lay.address(index)
    if address is None:
        return None  # a blocked layout: stored row-major, not in Taichi's order
    if not 0 <= address < lay.size:
        return None
    target = lay.element(address)
    if not _same_slot(field, index, target):
        return None
    return target


def _same_slot(field, index, target):
    """Taichi's byte address (lang/snode_addr.py's model of its tree) of `index` is that of
    `target` (no alias where the tree has no such model: pointer, bitmasked, dynamic nodes)."""
    from .snode_addr import host_address  # cycle: snode_addr.py imports field.py, which imports this module
    a = host_address(field, index)
    return a is not None and a == host_address(field, target)


def warn_alias(field, index, target):
    """The one-time warning per field for an alias: `index` as the user wrote it, `target`
    counted from 0 (shown with the field's `offset=`)."""
    seen = field.__dict__.setdefault('_alias_warned', set())
    if seen:
        return
    seen.add(tuple(index))
    offset = getattr(field, 'offset', None)
    if offset:
        target = tuple(t + o for t, o in zip(target, offset))
    warnings.warn(f'field {field.name}: index {tuple(index)} is out of range for shape '
                  f'{tuple(field.shape)}; as in Taichi, it reads and writes the element that '
                  f"Taichi's layout puts there, {field.name}{list(target)} (warned once per "
                  'field; ti.init(debug=True) makes it an error)', FieldAliasWarning, stacklevel=_user_stacklevel())


def _user_stacklevel():
    """warnings.warn's stacklevel of the first caller outside vkdiff (from warn_alias)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame, level = sys._getframe(2), 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(here):
        frame, level = frame.f_back, level + 1
    return level
