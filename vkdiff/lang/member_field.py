"""Data floor: `v.get_scalar_field(i[, j])`, Taichi's ScalarField of one member of a vector/matrix
field: a scalar field that reads and writes that component of `v`, in kernels and from Python,
and that can be placed on its own (`ti.root.dense(ti.i, 8).place(v.get_scalar_field(0))`).

vkdiff stores a matrix field's members together, in the matrix field's one buffer, whatever SNodes
they are placed under: placing a member places the matrix field (its first member's placement
gives it its shape), and the members placed on their own must all have the same shape (Taichi
checks that when it materializes the fields: "Members of the following field have different
shapes"). The SNodes a member is placed under describe its layout for ti.get_addr (its own place
node, as in Taichi; `_get_dynamic_index_stride()` their stride there); members under pointer,
bitmasked or dynamic nodes are refused (their cells would be activated apart from the other
members', which one buffer cannot hold)."""
import numpy as np

from ..errors import TaichiRuntimeError, UnsupportedError, VkdiffError, VkdiffValueError
from . import state
from .field import Field, _norm_shape
from ..errors import CompileError
from .snode_addr import _cell_layout
from .sparse import SPARSE


def get_scalar_field(field, *indices):
    """The member field of `field` at `indices` (one index for a vector, two for a matrix; a
    vector field's entry also as (i, 0), as in Taichi)."""
    if not field.elem_shape:
        raise VkdiffError(f'get_scalar_field: field {field.name} is a scalar field (only vector '
                          'and matrix fields have members)')
    if len(indices) not in (1, 2) or not all(
            isinstance(k, (int, np.integer)) and not isinstance(k, bool) for k in indices):
        raise VkdiffValueError(f'get_scalar_field takes one or two integer indices, got {indices}')
    n = field.elem_shape[0]
    m = field.elem_shape[1] if len(field.elem_shape) == 2 else 1
    i, j = int(indices[0]), int(indices[1]) if len(indices) == 2 else 0
    if not (0 <= i < n and 0 <= j < m):
        raise VkdiffValueError(f'get_scalar_field{tuple(indices)}: field {field.name} has '
                               f'{n}x{m} members')
    members = field.__dict__.setdefault('_member_fields', {})
    comp = i * m + j
    if comp not in members:
        members[comp] = MemberField(field, comp)
    return members[comp]


def dynamic_index_stride(field):
    """Taichi's `MatrixField._get_dynamic_index_stride()`: the byte distance between consecutive
    members of a matrix field in Taichi's layout of the SNode tree (the layout ti.get_addr
    reports, lang/snode_addr.py), or None where they are not evenly spaced there. Taichi's
    algorithm (its issue 3810): below the nodes the members' paths share, every level must be a
    dense node of the same cell size with the next level at the same offset in it, and the
    members' offsets at the level where the paths part must step evenly. Taichi refuses a
    run-time member index where this is None; vkdiff, whose members stay together in one buffer,
    allows it."""
    if not field.elem_shape:
        raise VkdiffError(f'field {field.name} is a scalar field: it has no members')
    n = field.ncomp
    if n == 1:
        return 0
    if not field.__dict__.get('_placed_by_members'):
        # placed as a whole (or not yet): consecutive places of one node, as Taichi's AOS
        return field.dtype.nbytes if field._shape is not None else None
    members = field.__dict__.get('_member_fields', {})
    if any(not members.get(c) or not members[c].__dict__.get('_member_placed') for c in range(n)):
        return None  # (Taichi refuses to materialize a field with unplaced members)
    paths = [members[c].snode._path_from_root() for c in range(n)]
    length = len(paths[0])
    if any(len(p) != length for p in paths):
        return None
    depth = next(i for i in range(length) if any(p[i] is not paths[0][i] for p in paths))
    if depth == 1:  # in different trees under ti.root: ti.get_addr gives each its own base
        return None
    try:
        def offset(node):
            return _cell_layout(node._parent)[0][id(node)]
        for i in range(depth, length - 1):
            if any(p[i]._kind != 'dense' or _cell_layout(p[i])[1] != _cell_layout(paths[0][i])[1]
                   or offset(p[i + 1]) != offset(paths[0][i + 1]) for p in paths):
                return None
        steps = {offset(paths[c][depth]) - offset(paths[c - 1][depth]) for c in range(1, n)}
    except (CompileError, UnsupportedError):  # a sparse node among the cells' children
        return None
    return steps.pop() if len(steps) == 1 else None


class MemberField(Field):
    """Component `comp` (row-major) of the vector/matrix field `parent`, as a scalar field."""

    def __init__(self, parent, comp):  # (no Field.__init__: no buffer or storage of its own)
        self._member_of, self._comp = parent, comp
        self.dtype = parent.dtype
        self.elem_shape = ()
        n = parent.elem_shape[1] if len(parent.elem_shape) == 2 else 1
        index = f'{comp // n}, {comp % n}' if len(parent.elem_shape) == 2 else f'{comp}'
        self.name = f'{parent.name}[{index}]'
        self.buffer = parent.buffer  # kernels access member `comp` of the parent's elements
        self.is_grad_of = None
        self._grad = self._dual = None
        self._generation = parent._generation

    # the parent's offset, gradients and sparse cells are the member's
    @property
    def offset(self):
        return self._member_of.offset

    @offset.setter
    def offset(self, value):
        if value is not None:
            self._member_of._set_offset(value)

    @property
    def grad(self):
        g = self._member_of._grad
        return None if g is None else get_scalar_field(g, *self._indices())

    @property
    def dual(self):
        g = self._member_of._dual
        return None if g is None else get_scalar_field(g, *self._indices())

    def _indices(self):
        m = self._member_of.elem_shape[1] if len(self._member_of.elem_shape) == 2 else 1
        return (self._comp // m, self._comp % m)

    @property
    def storage(self):
        return self._member_of.storage

    def _place(self, shape):
        """`snode.place(member)`: places the parent (members must agree on the shape)."""
        shape = _norm_shape(shape)
        if self.__dict__.get('_member_placed'):
            raise VkdiffError(f'field {self.name} is already placed')
        p = self._member_of
        if p._shape is None:
            p._place(shape)
        elif not p.__dict__.get('_placed_by_members'):
            raise VkdiffError(f'field {self.name} is a member of field {p.name}, which is placed '
                              'already (as a whole)')
        elif p._shape != shape:
            raise TaichiRuntimeError(
                f'Members of the following field have different shapes [{p.name}]: member '
                f'{self.name} is placed with shape {shape}, another member with {p._shape}')
        p._placed_by_members = True
        self._member_placed = True

    def _check_place_under(self, node):
        """Called by SNode.place before placing: members go under dense nodes only."""
        kinds = sorted({n._kind for n in node._path_from_root() if n._kind in SPARSE})
        if kinds:
            raise UnsupportedError(
                f'field {self.name}: a member of a matrix field placed under a '
                f'{"/".join(kinds)} SNode; vkdiff stores the members of field '
                f'{self._member_of.name} together, so they are placed under dense nodes only '
                '(or place the matrix field as a whole)')

    @property
    def snode(self):
        """The member's own place node, or (placed as part of the whole field) the field's."""
        leaf = self.__dict__.get('_snode_leaf')
        return leaf if leaf is not None else self._member_of.snode

    # ---------------------------------------------------------------- host access
    def _component(self, a):
        """Member `comp` of an array of the parent's elements (shape + elem_shape)."""
        return a.reshape(self._member_of.shape + (-1,))[..., self._comp]

    @state.synchronized
    def __getitem__(self, key):
        el = self._member_of[key]  # (a live element of the matrix field)
        i, j = self._indices()
        return el[i] if len(self._member_of.elem_shape) == 1 else el[i, j]

    @state.synchronized
    def __setitem__(self, key, value):
        """The element with this member replaced, written back whole (a dense, sparse or
        chunk-pool matrix field alike)."""
        p = self._member_of
        el = p[key]
        vals = np.array(el.to_list() if hasattr(el, 'to_list') else el, dtype=object).reshape(-1)
        vals[self._comp] = value
        p[key] = vals.reshape(p.elem_shape).tolist()

    @state.synchronized
    def to_numpy(self, dtype=None, keep_dims=False):
        a = self._component(self._member_of.to_numpy(keep_dims=True)).copy()
        return a.astype(dtype) if dtype is not None else a

    @state.synchronized
    def from_numpy(self, arr):
        a = self._numpy_input(arr)
        full = self._member_of.to_numpy(keep_dims=True)
        self._component(full)[...] = a
        self._member_of.from_numpy(full.reshape(self._member_of.shape + self._member_of.elem_shape))

    def _fill_converted(self, v):
        self.from_numpy(np.broadcast_to(np.asarray(v, dtype=self.dtype.np), self.shape))

    def copy_from(self, other):
        self.from_numpy(other.to_numpy())

    def __repr__(self):
        return f'<vkdiff member field {self.name}: {self.dtype} shape={self._shape}>'
