"""Data floor: pointer SNodes whose blocks come from a device pool (the "block pool"), so that
memory follows the active blocks instead of the virtual domain (issue 24).

A pooled pointer node P (the deepest pointer above some fields, with only dense nodes and
places under it) keeps, instead of dense storage for its whole extent:
- its slot table: the node's usual i32 word per cell (lang/sparse.py's mask, `node.shape`),
  0 for an inactive cell, else the 1-based id of the cell's block. Everything that reads a
  mask as "nonzero = active" (struct-for guards, is_active, to_numpy) works unchanged;
- a pool per field placed under P (`pools`: the field's dtype and element shape, shape
  (capacity * B_f,)), B_f the field's elements per pointer cell; one block id indexes every
  pool of the node (a struct's members, the gradient, which so shares the primal's blocks);
  inside a block the elements are row-major over the index residues (`steps`);
- `owner` (i32 [capacity]): the flat cell each block was published for, so a struct-for
  visits the blocks given out (`top[0]` of them), not the virtual domain: block b is active
  when table[owner[b]] == b + 1;
- `top` (i32 [4]): blocks given out, the failure flag, blocks pushed onto the ring (freed or
  given back), unused; `spare` (i32 [1]): one parked block;
- the free ring (`ring`, i32 [capacity], and `ctr`, i32 [3]: taken, pushed, available): a
  kernel's ti.deactivate zeroes the block's data and pushes its id (an atomic add on `pushed`);
  a kernel that allocates first copies `pushed` into `available` (a serial task at its start:
  `ctr[0] = min(ctr[0], ctr[2]); ctr[2] = ctr[1]`), and a claim pops with an atomic add on
  `taken`, using the entry only below `available`: entries pushed by earlier launches, so a pop
  never waits for a push. The free list is thus refilled between launches.
Allocation (frontend/blockpool.py) follows the dynamic pool's rule (lang/dynpool.py): no
invocation waits on another. The first write into an inactive cell takes a block (the spare
word, else the ring, else `top`), publishes it with one compare-exchange of the table word
0 -> id, and the loser uses the winner's id and parks its own (never written, still zero) in
the spare word, or when that is taken pushes it onto the ring (usable from the next launch).
Blocks are zero when taken: fresh ones never written since the last reset, parked ones never
written, ring ones zeroed by their deactivation, and deactivate_all zeroes the pools (a device
fill) and resets table, top, ring.

Reads of an inactive cell give 0 (no block: the load is replaced by 0). When the pool is full
the write is dropped and the sync after the launch raises `SparsePoolError` (a MemoryError),
never a silent wrong result; give it more room with ti.init(device_memory_GB=...).

When: VKDIFF_POINTER_POOL=1 pools every eligible pointer node, =0 none; by default one whose
fields stored densely would take more than DENSE_LIMIT bytes (or more than a storage buffer).
Capacity: every member's pool in one storage buffer, all of them in the budget
(device_memory_GB, default 64 MiB per node; a node whose dense storage would take at most
DENSE_LIMIT has room for all its cells unless a budget is given), and never more than RACE_SLACK blocks per cell.
`memory_info()` (ti.profiler.print_memory_profiler_info prints it) reports per pooled node the
bytes reserved and the bytes of the blocks in use."""
import os

import numpy as np

from .. import types as T
from ..errors import SparsePoolError, UnsupportedError
from . import state
from .dynpool import bookkeeping, make_pools
from .sparse import SPARSE, _nodes, fields_under, guards_of, host_active, layout_of

DENSE_LIMIT = 64 << 20
DEFAULT_BUDGET = 64 << 20
RACE_SLACK = 8  # blocks per cell at most: the lanes racing for one cell each take one, and the
# losers' go back only from the next launch on (8 lanes race at once on lavapipe)


def _mode():
    v = os.environ.get('VKDIFF_POINTER_POOL', '').strip().lower()
    return 'always' if v in ('1', 'always', 'true') else 'never' if v in ('0', 'never', 'false') \
        else 'auto'


def _subtree_dense(node):
    for c in node._get_children():
        if c._kind == 'place':
            continue
        if c._kind != 'dense' or not _subtree_dense(c):
            return False
    return True


def assign(parent, fields):
    """Called when `fields` are placed under `parent`: the pooled pointer node above them, if
    any (recorded as field._block_node), decided once per node."""
    path = parent._path_from_root()
    ptrs = [n for n in path if n._kind in SPARSE]
    if not ptrs or ptrs[-1]._kind != 'pointer':
        return None
    node = ptrs[-1]
    use = node.__dict__.get('_block_pool_mode')
    if use is None:
        mode = _mode()
        if mode == 'never' or not _subtree_dense(node):
            use = False
        elif mode == 'always':
            use = True
        else:
            n = sum(int(np.prod(parent.shape + f.elem_shape, dtype=np.int64)) * f.dtype.nbytes
                    for f in fields)
            use = n > min(DENSE_LIMIT, state.limits()['max_storage_buffer_range'])
        node._block_pool_mode = use
    if not use:
        return None
    if node.__dict__.get('_block_pool') is not None and \
            node._block_pool._generation == state.generation:
        raise UnsupportedError(f'a field placed under pointer SNode {node} after a kernel used '
                               'its block pool: place every field of a pooled pointer first')
    for f in fields:
        f._block_node = node
    return node


def check_child(parent, kind):
    """A sparse node under a pooled pointer is not supported (its blocks hold dense data): the
    pointer goes back to dense storage while no kernel used its pool, else it is an error."""
    for n in parent._path_from_root():
        if n.__dict__.get('_block_pool_mode'):
            if n.__dict__.get('_block_pool') is None:
                n._block_pool_mode = False
                for f in fields_under(n):
                    if f.__dict__.pop('_block_node', None) is not None:
                        f._check_size()
                continue
            raise UnsupportedError(f'a {kind} SNode under pointer SNode {n}, whose blocks come '
                                   'from a pool (VKDIFF_POINTER_POOL): only dense nodes and '
                                   'places may lie under it; set VKDIFF_POINTER_POOL=0')


def check_gradient(field):
    """A gradient placed apart from its pooled primal is refused: an adjoint access goes to the
    gradient's pool at the primal's block (one block id for both)."""
    primal = field.__dict__.get('is_grad_of') or field
    if primal._shape is None:
        return  # (checked when the primal is placed)
    mine = node_of(primal)
    for g in (primal._grad, primal._dual):
        if g is None or not g.__dict__.get('_placed_by_user') or g._shape is None:
            continue
        if g.__dict__.get('_block_node') is not mine:
            what = f'apart from its primal, which is under pointer SNode {mine}, whose ' \
                'blocks come from a pool' if mine else 'under a pointer SNode whose blocks ' \
                'come from a pool, apart from its primal'
            raise UnsupportedError(
                f'field {g.name}: a gradient placed {what} (lang/blockpool.py), must be placed '
                f'with its primal {primal.name} (place({primal.name}, {g.name})); or set '
                'VKDIFF_POINTER_POOL=0')


def node_of(field):
    """The pooled pointer node holding `field` (or its primal's layout), else None."""
    d = field.__dict__
    n = d.get('_block_node')
    if n is None:
        n = layout_of(field).__dict__.get('_block_node')
    if n is None and d.get('_member_of') is not None:
        n = node_of(d['_member_of'])
    return n


def steps_of(guard, shape):
    """Per index position, the extent of its residue inside one block: the pointer cell's step
    for an axis the cell splits, the whole extent for one only split below the pointer."""
    steps = list(shape)
    for p, s in guard.cell:
        steps[p] = s
    return steps


class BlockPool:
    def __init__(self, node):
        # cycle: field.py imports this module
        from .field import Field
        self.node = node
        self.members = fields_under(node)
        self.guard = {}
        self.steps, self.B = {}, {}
        for f in self.members:
            g = guards_of(layout_of(f))[-1]
            self.guard[f] = g
            self.steps[f] = steps_of(g, f.shape)
            self.B[f] = int(np.prod(self.steps[f], dtype=np.int64))
        self.table = node._sparse_store
        self.cells = int(np.prod(self.table.shape, dtype=np.int64))
        block_bytes = {f: self.B[f] * int(np.prod(f.elem_shape, dtype=np.int64)) * f.dtype.nbytes
                       for f in self.members}
        limit = state.limits()['max_storage_buffer_range']
        given = state.config.get('device_memory_GB')
        budget = int(float(given) * (1 << 30)) if given else DEFAULT_BUDGET
        per_block = sum(block_bytes.values()) + 8
        room = budget // per_block
        if not given and self.cells * sum(block_bytes.values()) <= DENSE_LIMIT:  # (small enough to be dense: room
            room = max(room, self.cells + 64)  # for every cell, never less than dense storage)
        self.capacity = max(1, min(limit // max(block_bytes.values()), room,
                                   RACE_SLACK * self.cells + 64))
        tag = f'_pointer_pool{id(node) % 100000}'
        self.owner = bookkeeping(Field(T.i32, (self.capacity,), (), name=f'{tag}_owner'))
        self.top = bookkeeping(Field(T.i32, (4,), (), name=f'{tag}_top'))
        self.spare = bookkeeping(Field(T.i32, (1,), (), name=f'{tag}_spare'))
        self.ring = bookkeeping(Field(T.i32, (self.capacity,), (), name=f'{tag}_ring'))
        self.ctr = bookkeeping(Field(T.i32, (3,), (), name=f'{tag}_ctr'))
        self.listed = bookkeeping(Field(T.i32, (1,), (), name=f'{tag}_listed'))
        self.pools = make_pools(self, Field, lambda f: self.B[f], 'blocks', bool(given))
        self.block_bytes = sum(block_bytes[f] for f in self.pools)
        self._watch()

    def _watch(self):
        st = self.top.storage
        node, cap = self.node, self.capacity
        names = ', '.join(f.name for f in self.members)

        def check():
            if st.host[1]:
                st.for_host_overwrite()[1] = 0
                raise SparsePoolError(
                    f'the block pool of pointer SNode {node} (fields {names}) is full: '
                    f'{cap} blocks, so elements written by the last launch into new blocks were '
                    'dropped. Give it more memory with ti.init(device_memory_GB=...), or free '
                    'blocks with ti.deactivate / snode.deactivate_all()')
        state.runtime().status_checks.append((st, check))

    # ------------------------------------------------------------ host side
    def flat_cell(self, cells):
        return np.ravel_multi_index(tuple(np.asarray(c) for c in cells), self.table.shape) \
            if self.table.shape else np.zeros_like(np.asarray(0))

    def host_blocks(self, cells, allocate):
        """Block ids (int64 array, 0 = none) of the cells (tuples of index arrays)."""
        tab = self.table.storage.for_host_read()
        ids = tab[tuple(cells)].astype(np.int64)
        if allocate and (ids <= 0).any():
            tab = self.table.storage.for_host_write()
            top = self.top.storage.for_host_write()
            owner = None
            arrs = [np.atleast_1d(a).ravel() for a in np.broadcast_arrays(*cells)] \
                if cells else [np.zeros(1, np.int64)]
            miss = np.atleast_1d(ids).ravel() <= 0
            for w in zip(*[a[miss] for a in arrs]):
                w = tuple(int(x) for x in w) if cells else ()
                if tab[w] <= 0:
                    if top[0] >= self.capacity:
                        raise SparsePoolError(f'the block pool of pointer SNode {self.node} is '
                                              f'full ({self.capacity} blocks)')
                    if owner is None:
                        owner = self.owner.storage.for_host_write()
                    tab[w] = top[0] + 1
                    owner[top[0]] = int(np.ravel_multi_index(w, self.table.shape)) if w else 0
                    top[0] += 1
            ids = tab[tuple(cells)].astype(np.int64)
        return ids

    def blocks_in_use(self):
        return int((self.table.storage.for_host_read() > 0).sum())

    def clear(self):
        """deactivate_all: every block back in the pool, the pools zeroed on the device."""
        self.table.fill(0)
        for f in (self.top, self.spare, self.ctr, self.listed):
            f.storage.for_host_overwrite()[...] = 0
        rt = state.runtime()
        for p in self.pools.values():
            if rt.can_fill and state.tape is None:
                rt.fill(p.storage, 0)
            else:
                p.storage.for_host_overwrite()[...] = 0

    def info(self):
        """(bytes reserved, bytes in the blocks in use) of this node."""
        book = sum(f.storage.nbytes for f in (self.table, self.owner, self.ring, self.top,
                                               self.spare, self.ctr, self.listed))
        reserved = sum(p.storage.nbytes for p in self.pools.values()) + book
        return reserved, self.blocks_in_use() * self.block_bytes + book


def pool_of(node):
    p = node.__dict__.get('_block_pool')
    if p is None or p._generation != state.generation:
        p = BlockPool(node)
        p._generation = state.generation
        node._block_pool = p
    return p


def _where(field, idx, allocate):
    """(pool, flat pool element indices, -1 where the cell has no block) of index arrays."""
    pool = pool_of(node_of(field))
    key = field if field in pool.B else layout_of(field)
    g = pool.guard[key]
    ids = pool.host_blocks(tuple(g.cell_index(idx)), allocate)
    steps = pool.steps[key]
    cellpos = {q for q, _ in g.cell}
    res = [idx[p] % s if p in cellpos else idx[p] for p, s in enumerate(steps)]
    e = np.ravel_multi_index(tuple(res), steps) if steps else 0
    return pool, np.where(ids > 0, (ids - 1) * pool.B[key] + e, -1)


def host_get(field, idx):
    pool, w = _where(field, tuple(np.asarray(i) for i in idx), False)
    w = int(w)
    if w < 0:
        return np.zeros(field.elem_shape, field.dtype.np)
    return pool.pools[field].storage.for_host_read()[w].copy()


def host_set(field, idx, value):
    pool, w = _where(field, tuple(np.asarray(i) for i in idx), True)
    pool.pools[field].storage.for_host_write()[int(w)] = value


def host_gather(field):
    out = np.zeros(field.shape + field.elem_shape, field.dtype.np)
    idx = np.nonzero(host_active(field))
    if len(idx) and len(idx[0]):
        pool, w = _where(field, idx, False)
        ok = w >= 0
        out[tuple(i[ok] for i in idx)] = pool.pools[field].storage.for_host_read()[w[ok]]
    elif not field.shape and host_active(field):
        out[...] = host_get(field, ())
    return out


def host_scatter(field, arr):
    idx = np.nonzero(host_active(field))
    if len(idx) and len(idx[0]):
        pool, w = _where(field, idx, True)
        pool.pools[field].storage.for_host_write()[w] = arr[idx]


def memory_info():
    """{str(node): (bytes reserved, bytes in use)} of every pooled pointer node."""
    out = {}
    for n in _nodes():
        p = n.__dict__.get('_block_pool')
        if p is not None and p._generation == state.generation:
            out[str(n)] = p.info()
    return out
