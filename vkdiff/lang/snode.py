"""Data floor: the SNode tree (`ti.root.dense(...).pointer(...).place(x)`, `x.snode`,
`snode.parent(n)`, axes `ti.i`, `ti.ij`, ...). Dense levels only shape the fields placed under
them; pointer/bitmasked/dynamic levels add activation state (lang/sparse.py)."""
import numpy as np

from ..errors import UnsupportedError, VkdiffTypeError, VkdiffValueError
from . import convert, hooks, layout, state
from .sparse import allocated_count, make_node, deactivate_all, check_gradient_layout
from .dynpool import wants_pool
from . import blockpool


class _Axis:
    def __init__(self, k):
        self.k = k

    def __repr__(self):
        return 'ijkl'[self.k]


i, j, k, l = _Axis(0), _Axis(1), _Axis(2), _Axis(3)
ij, ik, il, jk, jl, kl = (i, j), (i, k), (i, l), (j, k), (j, l), (k, l)
ijk, ijl, ikl, jkl, ijkl = (i, j, k), (i, j, l), (i, k, l), (j, k, l), (i, j, k, l)
AXES = dict(i=i, j=j, k=k, l=l, ij=ij, ik=ik, il=il, jk=jk, jl=jl, kl=kl, ijk=ijk, ijl=ijl,
            ikl=ikl, jkl=jkl, ijkl=ijkl)


def axes(*ks):
    """`ti.axes(0, 2)`: the axes with those numbers."""
    return tuple(_Axis(int(x)) for x in ks)


class SNode:
    """`ti.root.dense(ti.ij, (n, m)).place(x, y)`: dense layouts only. A field's indices are
    ordered by axis letter, as in Taichi: `ti.root.dense(ti.l, 5).dense(ti.i, 3).place(x)`
    gives `x.shape == (3, 5)`, indexed `x[i, l]`; an axis used at several levels multiplies
    their sizes."""

    def __init__(self, levels=(), parent=None, kind='dense'):
        self.levels = levels  # ((axis number, size), ...) from the root down
        self._parent = parent  # the SNode this one was made under (`parent.dense(...)`)
        self._kind = kind  # 'dense', or 'place' for a field's own node (`x.snode`)
        self._below = None  # the levels under it down to the first field placed under it
        self._field = None  # a place node's field (Taichi's `x.snode._name`, `.ptr`)
        self._children = []  # (generation, node) of the nodes made under this one
        self._placed_fields = ()  # a place node's fields (a struct field's members)
        self._struct_field = None  # a place node's struct field
        if parent is not None:
            kids = parent._children
            if kids and kids[0][0] != state.generation:  # (from before the last ti.init())
                kids.clear()
            kids.append((state.generation, self))

    def _get_children(self):
        """Taichi's `snode._get_children()`: the nodes made under this one since ti.init()
        (`dense` levels, and a place node per field placed here)."""
        return [c for g, c in self._children if g == state.generation]

    def parent(self, n=1):
        """Taichi's `snode.parent(n)`: n levels up; `ti.root` at the top, None above it."""
        node = self
        for _ in range(n):
            if node is None:
                break
            node = node._parent
        return node

    def _path_from_root(self):
        path = [self]
        while path[-1]._parent is not None:
            path.append(path[-1]._parent)
        return path[::-1]

    def __str__(self):  # Taichi's: `ti.root => dense [3] => dense [3, 4, 5] => place [3, 4, 5]`
        if self._parent is None:
            return 'ti.root'
        return f'{self._parent} => {self._kind} {list(self.shape)}'

    @property
    def _name(self):
        """Taichi's `snode._name`: a place node's field name, else the node's kind."""
        if self._field is not None:
            return self._field.name
        return 'root' if self._parent is None else self._kind

    @property
    def ptr(self):
        """Taichi's `x.snode.ptr` reflection of a field's node: `get_snode_grad_type()`,
        `has_adjoint_checkbit()`."""
        if self._field is None:
            raise AttributeError('only the node a field is placed as (x.snode) has .ptr')
        # cycle: field.py imports this module
        from .field import _PlaceInfo
        return _PlaceInfo(self._field)

    def _place_leaf(self):
        """The node of a field placed here; the nodes above learn what lies under them."""
        node = self
        while node is not None:
            if node._below is None:
                node._below = self.levels[len(node.levels):]
            node = node._parent
        return SNode(self.levels, self, 'place')

    @property
    def shape(self):
        sizes = {}
        for ax, n in self.levels:
            sizes[ax] = sizes.get(ax, 1) * n
        return tuple(sizes[ax] for ax in sorted(sizes))

    def dense(self, axes, dimensions):
        return self._child(self._axes_dims('dense', axes, dimensions))

    def _child(self, levels):
        return SNode(levels, self)

    def _axes_dims(self, kind, axes, dimensions):
        axes = axes if isinstance(axes, (tuple, list)) else (axes,)
        if not axes or not all(isinstance(a, _Axis) for a in axes):
            raise VkdiffTypeError(f'{kind}() takes axes such as ti.i, ti.ij, ti.ijk; got {axes!r}')
        if isinstance(dimensions, (int, np.integer)) and not isinstance(dimensions, bool):
            dimensions = (int(dimensions),) * len(axes)
        dimensions = convert.shape(dimensions, f'{kind}() dimensions')
        if len(dimensions) == 1:  # `pointer(ti.ijk, [n])`: one size for every axis (Taichi's)
            dimensions = dimensions * len(axes)
        if len(dimensions) != len(axes):
            raise VkdiffValueError(f'{kind}(): {len(axes)} axes but {len(dimensions)} sizes')
        return self.levels + tuple((a.k, n) for a, n in zip(axes, dimensions))

    def pointer(self, axes, dimensions):
        """A pointer level (lang/sparse.py): cells allocated when written or activated."""
        blockpool.check_child(self, 'pointer')
        return make_node(self, 'pointer', self._axes_dims('pointer', axes, dimensions))

    def bitmasked(self, axes, dimensions):
        """A bitmasked level (lang/sparse.py): one activation bit per cell."""
        blockpool.check_child(self, 'bitmasked')
        return make_node(self, 'bitmasked', self._axes_dims('bitmasked', axes, dimensions))

    def dynamic(self, axis, dimension, chunk_size=None):
        """A dynamic level (lang/sparse.py): a list of up to `dimension` cells along `axis`."""
        axis = axis if isinstance(axis, (tuple, list)) else (axis,)
        if len(axis) != 1:
            raise VkdiffValueError('dynamic() takes exactly one axis')
        blockpool.check_child(self, 'dynamic')
        return make_node(self, 'dynamic', self._axes_dims('dynamic', axis, dimension),
                         chunk_size or dimension)

    @property
    def _num_dynamically_allocated(self):
        """Taichi's count of the blocks a sparse node's allocator holds (lang/sparse.py's
        allocated_count: its high-water mark, tracked from the first query on)."""
        return allocated_count(self)

    def deactivate_all(self):
        """Deactivate every cell of the sparse nodes at and under this one (lang/sparse.py)."""
        deactivate_all(self)

    def _sparse(kind):
        def f(self, *args, **kwargs):
            raise UnsupportedError(f'{kind.capitalize()} SNode is not supported on this backend '
                                   f'(ti.root.{kind}): vkdiff has dense, pointer, bitmasked and '
                                   'dynamic SNodes')
        f.__name__ = kind
        return f

    hash = _sparse('hash')
    del _sparse

    def quant_array(self, axis, dimensions, max_num_bits=32):
        """n quantized elements along `axis` in one word (lang/quant.QuantArray)."""
        return hooks.call('quant_array', self, axis, dimensions, max_num_bits)

    def bit_array(self, axis, dimensions, num_bits=32):
        """The older name of quant_array."""
        return hooks.call('quant_array', self, axis, dimensions, num_bits)

    def place(self, *fields, offset=None):
        for f in fields:
            if isinstance(f, (list, tuple)):
                self.place(*f)
                continue
            if not hasattr(f, '_place'):
                raise VkdiffTypeError(f'place() takes fields, got {type(f).__name__}')
            if hasattr(f, '_check_place_under'):  # a matrix field's member (get_scalar_field)
                f._check_place_under(self)
            if self._kind == 'dynamic':
                members = _member_fields(f)
                if wants_pool(self, members):  # (lang/dynpool.py: no dense storage)
                    for m in members:
                        m._pool_node = self
            blockpool.assign(self, _member_fields(f))  # (lang/blockpool.py: pooled blocks)
            f._place(self.shape)
            leaf = self._place_leaf()
            leaf._placed = f  # (ti.get_addr's layout: what this place holds)
            # cycle: field.py imports this module
            from .field import Field
            if isinstance(f, Field):  # (a struct field's parent() stays ti.root)
                leaf._field = f
                f._snode_leaf = leaf
                f._placed_by_user = True  # (a gradient: its own layout, lang/sparse.layout_of)
            leaf._placed_fields = _member_fields(f)
            for m in leaf._placed_fields:  # Taichi's element order (lang/layout.py)
                layout.assign(m, self)
            leaf._struct_field = None if isinstance(f, Field) else f
            for m in leaf._placed_fields:  # struct members: their own x.snode is this leaf
                m.__dict__.setdefault('_snode_leaf', leaf)
                m.__dict__.pop('_sparse_guards', None)
            if offset is not None:
                f._set_offset(offset)
            if isinstance(f, Field):
                check_gradient_layout(f)
                blockpool.check_gradient(f)
        return self

    def lazy_grad(self):
        for f in list(state.fields):
            if f.dtype.is_float and f._grad is None and f.is_grad_of is None and \
                    f._generation == state.generation:
                f._add_grad('grad')

    def lazy_dual(self):
        for f in list(state.fields):
            if f.dtype.is_float and f._dual is None and f.is_grad_of is None and \
                    f._generation == state.generation:
                f._add_grad('dual')


def _member_fields(f):
    """The Fields a placed object stores into (a struct field's members, recursively)."""
    # cycle: field.py imports this module
    from .field import Field
    if isinstance(f, Field):
        return [f]
    members = getattr(f, '_members', None)
    if isinstance(members, dict):
        return [m for v in members.values() for m in _member_fields(v)]
    return []


root = SNode()  # ti.root: the SNode tree fields are placed under (vkdiff/__init__.py exports it)
