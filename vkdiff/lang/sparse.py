"""Data floor: sparse SNodes (`pointer`, `bitmasked`, `dynamic`) with Taichi's semantics, on a
device without a memory allocator.

Storage: every field keeps its dense storage for the whole extent of the tree (a pointer SNode
costs what a dense one of the same shape does, plus 4 bytes per cell). Each pointer/bitmasked
node has an i32 activation mask with one word per cell (`node.shape`); each dynamic node an i32
length per cell of its container. Masks and lengths are ordinary fields (lang/field.Field), so
kernels read and write them as any other Buffer.

Semantics (Taichi 1.7.4's LLVM runtime, taichi/runtime/llvm/runtime_module/node_*.h):
- writing a cell activates every sparse node above it (a dynamic one: length = max(length, j+1));
- a pointer cell that is not active reads 0: the data of a deactivated pointer cell (and every
  mask under it) is zeroed when it is deactivated, so reads need no check; a bitmasked cell keeps
  its data (Taichi's bitmasked lookup ignores the mask); a dynamic cell reads 0 at j >= length;
- struct-for over a field or node visits only cells whose sparse ancestors are all active;
- `fill`, `from_numpy` touch active cells only, `to_numpy` gives 0 for inactive ones.
The kernel-side IR is emitted by frontend/sparse.py; this module has the layout ("guards") and
the Python-scope operations."""
import numpy as np

from .. import types as T
from ..errors import UnsupportedError, VkdiffTypeError
from . import state
from .matrix import Matrix, Vector

SPARSE = ('pointer', 'bitmasked', 'dynamic')


class Guard:
    """One sparse node above a field (or a struct-for's node), seen from an index at the
    resolution `levels`: which mask/length word covers the index, and for a dynamic node
    where the index sits in its list."""

    def __init__(self, node, levels):
        self.node = node
        self.kind = node._kind
        res_axes = sorted({a for a, _ in levels})
        owner = node._parent if self.kind == 'dynamic' else node
        # (position in the index, step) per axis of the mask/length field
        self.cell = [(res_axes.index(a), _step(a, levels, len(owner.levels)))
                     for a in sorted({a for a, _ in owner.levels})]
        self.store = node._sparse_store  # the mask (pointer/bitmasked) or length (dynamic) field
        if self.kind == 'dynamic':
            ax, n = node.levels[-1]
            wrap = any(a == ax for a, _ in node._parent.levels)  # the axis is split above it
            self.dyn = (res_axes.index(ax), _step(ax, levels, len(node.levels)), n, wrap)
        else:
            self.dyn = None

    def cell_index(self, idx):
        """Index of the mask/length word (works on ints, numpy arrays and kernel Values)."""
        return [idx[p] // s if s != 1 else idx[p] for p, s in self.cell]

    def position(self, idx):
        """A dynamic node's j (the index within its list)."""
        p, s, n, wrap = self.dyn
        j = idx[p] // s if s != 1 else idx[p]
        return j % n if wrap else j


def _step(axis, levels, start):
    """How many indices at resolution `levels` one cell at depth `start` spans along `axis`."""
    s = 1
    for a, n in levels[start:]:
        if a == axis:
            s *= n
    return s


def guards_of(field):
    """The guards of a field placed under sparse nodes, top down (() for a dense field)."""
    d = getattr(field, '__dict__', None)
    if d is None:
        return ()
    g = d.get('_sparse_guards')
    if g is not None:
        return g
    if d.get('_member_of') is not None:  # a matrix field's member: the matrix field's cells
        return guards_of(d['_member_of'])  # (members placed on their own are dense only)
    leaf = layout_of(field).__dict__.get('_snode_leaf')
    if leaf is None:
        return ()
    g = tuple(Guard(n, leaf.levels) for n in leaf._path_from_root() if n._kind in SPARSE)
    field._sparse_guards = g
    return g


def layout_of(field):
    """The field whose place holds `field`'s layout: itself when placed (a gradient placed
    under its own SNodes has its own sparse cells, as in Taichi), else its primal's."""
    d = field.__dict__
    if d.get('_placed_by_user') or d.get('is_grad_of') is None:
        return field
    return d['is_grad_of']


def check_gradient_layout(field):
    """A gradient placed under sparse nodes other than its primal's is refused: the adjoint
    kernels write it without activating its own cells (Taichi does), which would lose values."""
    primal = field.__dict__.get('is_grad_of') or field
    for g in (primal._grad, primal._dual):
        if g is None or not g.__dict__.get('_placed_by_user'):
            continue
        mine = g._snode_leaf
        nodes = [n for n in mine._path_from_root() if n._kind in SPARSE]
        if not nodes:
            continue  # a dense gradient: its own layout, always active
        pl = primal.__dict__.get('_snode_leaf') if primal.__dict__.get('_placed_by_user') else None
        if pl is None:
            continue  # checked when the primal is placed
        if nodes != [n for n in pl._path_from_root() if n._kind in SPARSE] or \
                mine.levels != pl.levels:
            raise UnsupportedError(
                f'field {g.name}: a gradient placed under pointer/bitmasked/dynamic SNodes other '
                f'than those of its primal {primal.name} is not supported (vkdiff\'s adjoint '
                'kernels do not activate its cells): place it with its primal, '
                f'e.g. place({primal.name}, {g.name}), or under dense SNodes')


def guards_of_node(node):
    """The guards of a struct-for over an SNode (its indices are the node's own cells)."""
    return tuple(Guard(n, node.levels) for n in node._path_from_root() if n._kind in SPARSE)


# ------------------------------------------------------------------ building the tree
def make_node(parent, kind, levels, chunk_size=None):
    """A pointer/bitmasked/dynamic child of `parent` with its mask (or length) field."""
    # cycle: field.py imports this module
    from .field import Field
    # cycle: snode.py imports this module
    from .snode import SNode
    node = SNode(levels, parent, kind)
    if kind == 'dynamic':
        node._chunk_size = chunk_size
        shape = parent.shape
    else:
        shape = node.shape
    node._sparse_store = Field(T.i32, shape, (), name=f'_{kind}{len(_nodes())}_'
                               f'{"length" if kind == "dynamic" else "mask"}')
    node._sparse_store.buffer.meta['bookkeeping'] = True  # no access rules (autodiff/access_rules)
    _registry.append((state.generation, node))
    return node


_registry = []


def _nodes():
    """The sparse nodes made since the last ti.init()."""
    _registry[:] = [(g, n) for g, n in _registry if g == state.generation]
    return [n for _, n in _registry]


def fields_under(node):
    """Every Field placed anywhere under `node`, with its gradient and dual."""
    out = []
    for c in node._get_children():
        if c._kind == 'place':
            for f in c._placed_fields:
                out += [g for g in (f, f._grad, f._dual) if g is not None and
                        layout_of(g) is f]  # (not a gradient placed under other nodes)
        else:
            out += fields_under(c)
    return out


def sparse_under(node):
    """The sparse nodes strictly under `node`."""
    out = []
    for c in node._get_children():
        if c._kind in SPARSE:
            out.append(c)
        out += sparse_under(c)
    return out


# ------------------------------------------------------------------ Python scope
def host_active(field):
    """A bool array of field.shape: which elements are active."""
    shape = field.shape
    act = np.ones(shape, dtype=bool)
    idx = np.indices(shape) if shape else ()
    for g in guards_of(field):
        words = g.store.storage.for_host_read()
        if g.kind == 'dynamic':
            length = words[tuple(g.cell_index(idx))] if g.cell else words[()]
            act &= g.position(idx) < length
        else:
            act &= words[tuple(g.cell_index(idx))] != 0
    return act


def host_past_length(field, idx):
    """Element idx lies past a dynamic list's length: Python scope reads 0 there, as a kernel
    does. (An inactive pointer cell's data is zeroed already, a bitmasked one's kept and read.)"""
    for g in guards_of(field):
        if g.kind == 'dynamic' and \
                g.position(idx) >= g.store.storage.for_host_read()[tuple(g.cell_index(idx))]:
            return True
    return False


def host_activate(field, idx):
    """Python-scope `x[idx] = v` activates the cell's sparse ancestors."""
    for g in guards_of(field):
        st = g.store.storage
        cell = tuple(g.cell_index(idx))
        if g.kind == 'dynamic':
            j = g.position(idx)
            if st.for_host_read()[cell] <= j:
                st.for_host_write()[cell] = j + 1
        elif g.node.__dict__.get('_block_pool_mode'):  # claim its block (lang/blockpool.py)
            # cycle: blockpool.py imports this module
            from .blockpool import pool_of as block_pool_of
            block_pool_of(g.node).host_blocks(cell, True)
        elif st.for_host_read()[cell] == 0:
            st.for_host_write()[cell] = 1


def deactivate_all(node):
    """`snode.deactivate_all()`: every cell of every sparse node at and under `node`; a pointer's
    data is freed (zeroed here), a bitmasked node's kept, a dynamic node's lists emptied (and
    zeroed, as Taichi frees their chunks)."""
    nodes = ([node] if node._kind in SPARSE else []) + sparse_under(node)
    for n in nodes:
        if n.__dict__.get('_allocated_tracked'):  # (since the first query)
            n._allocated_high = max(n._allocated_high, _in_use(n))
        n._sparse_store.fill(0)
    done = set()
    for n in nodes:
        if n.__dict__.get('_pool_mode'):  # chunks back into the pool (lang/dynpool.py)
            # cycle: dynpool.py imports this module
            from .dynpool import pool_of
            pool_of(n).clear()
            continue
        if n.__dict__.get('_block_pool_mode'):  # blocks back into the pool (lang/blockpool.py)
            p = n.__dict__.get('_block_pool')
            if p is not None and p._generation == state.generation:
                p.clear()
            continue
        if n._kind in ('pointer', 'dynamic'):  # freed: the data reads 0 (a list's too)
            for f in fields_under(n):
                if f.__dict__.get('_block_node') is None and \
                        layout_of(f).__dict__.get('_block_node') is None and id(f) not in done:
                    done.add(id(f))
                    f.storage.for_host_overwrite()[...] = 0


def allocated_count(node):
    """Taichi's `snode._num_dynamically_allocated`: the blocks its allocator ever held at
    once (a pointer/bitmasked node: its active cells; a dynamic node: its lists' chunks of
    chunk_size), as the most in use at any `deactivate_all` since the first query and now.
    The high-water mark is tracked from the first query on (each deactivate_all then reads the
    node's words back). 0 for a dense node."""
    if node._kind not in SPARSE:
        return 0
    high = max(node.__dict__.get('_allocated_high', 0), _in_use(node))
    node._allocated_high, node._allocated_tracked = high, True
    return high


def _in_use(node):
    words = node._sparse_store.storage.for_host_read()
    if node._kind == 'dynamic':
        n = node.levels[-1][1]
        cs = node._chunk_size or n
        return int(((np.minimum(words.astype(np.int64), n) + cs - 1) // cs).sum())
    return int((words != 0).sum())


def deactivate_all_snodes():
    """`ti.deactivate_all_snodes()`: every sparse node of the program."""
    for n in _nodes():
        deactivate_all(n)


def _check_node(node, name):
    # cycle: snode.py imports this module
    from .snode import SNode
    if not isinstance(node, SNode):
        if hasattr(node, 'snode') and name in ('append', 'length', 'deactivate', 'activate',
                                               'is_active'):
            raise VkdiffTypeError(f'ti.{name} takes an SNode (e.g. x.parent()), got a field')
        raise VkdiffTypeError(f'ti.{name} takes an SNode, got {type(node).__name__}')


def _is_node(x):
    # cycle: snode.py imports this module
    from .snode import SNode
    return isinstance(x, SNode)


def no_activate(*args):
    """`ti.no_activate(x)`: a hint to Taichi's compiler; nothing to do here."""


def rescale_index(a, b, I):
    """`ti.rescale_index(a, b, I)`: the index I of field or SNode `a` at the resolution of `b`."""
    entries = list(I.entries) if isinstance(I, Matrix) else list(I)
    out = list(entries)
    for i in range(min(len(entries), len(a.shape), len(b.shape))):
        if a.shape[i] > b.shape[i]:
            out[i] = entries[i] // (a.shape[i] // b.shape[i])
        elif a.shape[i] < b.shape[i]:
            out[i] = entries[i] * (b.shape[i] // a.shape[i])
    return Vector(out)


def sparse_zero(field):
    """What Python scope reads at an inactive dynamic cell: 0 (a zero vector/matrix)."""
    if not field.elem_shape:
        return 0.0 if field.dtype.is_float else 0
    z = np.zeros(field.elem_shape, dtype=field.dtype.np).tolist()
    return Matrix(z)


def block_plan(guards, shape):
    """For a struct-for over a field of `shape` under pointer/bitmasked nodes: loop over the
    cells of the deepest one (one mask check per cell) and serially over each cell's elements,
    so that inactive cells cost one load. Returns (the deepest guard, per index position the
    step of its cell or None when the cell does not split that axis), or None when the field's
    guards do not allow it (a dynamic node, an ancestor splitting an axis the deepest node
    does not, cells of one element)."""
    if not guards or any(g.kind == 'dynamic' for g in guards):
        return None
    deep = guards[-1]
    pos = {p for p, _ in deep.cell}
    if any(p not in pos for g in guards for p, _ in g.cell):
        return None
    steps = [None] * len(shape)
    for p, s in deep.cell:
        steps[p] = s
    inner = 1
    for p, n in enumerate(shape):
        inner *= n if steps[p] is None else steps[p]
    return (deep, steps) if inner > 1 else None
