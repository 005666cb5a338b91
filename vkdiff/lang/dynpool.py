"""Data floor: the device-side chunk allocator of dynamic SNodes (the "pool layout").

A dynamic node whose fields would be large stored densely (Taichi's oit_renderer: 1000 x 1000
lists of up to 2048 structs, 40 GB) keeps its elements in a pool of chunks allocated on the
device as its lists grow, instead of dense storage for the whole extent:
- per list: its length (the node's usual i32 length word, lang/sparse.py) and a table of K
  chunk ids (`table`: i32, the container's shape + (K,); 0 = no chunk yet);
- chunk c of a list holds its elements [B (2^c - 1), B (2^(c+1) - 1)): B, the first chunk's
  size (the node's chunk_size, at most 4), doubling, so K ids cover a list of n elements and a
  list of m elements holds at most 2m + B (Taichi's chunks are all chunk_size long: a list of
  one element takes 64 there);
- one pool per field placed in the node (`pools`: the field's dtype and element shape, shape
  (capacity * B,)); chunk ids count "slots" of B elements, 1-based, the same in every pool of
  the node (a struct's members, the gradient); `top` (i32 [2]) counts the slots given out and
  flags a failed allocation.
Allocation (frontend/dynpool.py): the first write into a chunk that has none claims its table
word (a compare-exchange 0 -> -1), takes 2^c slots from `top` (an atomic add) and installs
them; an invocation that finds the word claimed waits for the id (as Taichi's lock around
Dynamic_allocate), so no slot is lost to a race. Reading an element past the list's length or in a missing chunk gives 0.
A deactivated list keeps its chunks (its elements are zeroed) for its next appends;
`snode.deactivate_all()` returns every chunk to the pool. When the pool is full the write is
dropped and the sync after the launch raises `DynamicPoolError` (a MemoryError), never a silent
wrong result.

When: a dynamic node directly holding its fields (dynamic(...).place(...)), with no pointer
above it and its axis not split above it, uses the pool when its fields stored densely would
take more than DENSE_LIMIT bytes; VKDIFF_DYNAMIC_POOL=1 uses it for every such node (the tests
run both layouts), =0 never. Capacity: as many slots as fit every member's pool in one storage
buffer (maxStorageBufferRange: 128 MiB on lavapipe) and all of them in the budget
(ti.init(device_memory_GB=...), default 1 GiB), and never more than the dense extent."""
import os

import numpy as np

from .. import types as T
from ..errors import DynamicPoolError
from . import state
from .sparse import layout_of
from .sparse import guards_of, host_active, fields_under

DENSE_LIMIT = 64 << 20  # bytes of dense storage above which a dynamic node uses the pool
DEFAULT_BUDGET = 1 << 30  # bytes for one node's pools, without ti.init(device_memory_GB=)
MAX_FIRST_CHUNK = 4


def _mode():
    v = os.environ.get('VKDIFF_DYNAMIC_POOL', '').strip().lower()
    return 'always' if v in ('1', 'always', 'true') else 'never' if v in ('0', 'never', 'false') \
        else 'auto'


def wants_pool(node, fields):
    """Decided when the first fields are placed in `node`: whether it uses the pool layout."""
    if getattr(node, '_pool_mode', None) is not None:
        return node._pool_mode
    mode = _mode()
    if mode == 'never' or node._kind != 'dynamic' or \
            any(n._kind == 'pointer' for n in node._path_from_root()) or \
            any(c._kind != 'place' for c in node._get_children()) or \
            any(a == node.levels[-1][0] for a, _ in node._parent.levels):
        use = False
    elif mode == 'always':
        use = True
    else:
        n = sum(int(np.prod(node.shape + f.elem_shape, dtype=np.int64)) * f.dtype.nbytes
                for f in fields)
        use = n > min(DENSE_LIMIT, state.limits()['max_storage_buffer_range'])
    node._pool_mode = use
    return use


def node_of(field):
    """The pool-layout dynamic node holding `field` (or its primal's layout), else None."""
    n = field.__dict__.get('_pool_node')
    return n if n is not None else layout_of(field).__dict__.get('_pool_node')


class Pool:
    """One dynamic node's allocator state: table, top, and a pool per field placed in it."""

    def __init__(self, node):
        # cycle: field.py imports this module
        from .field import Field
        self.node = node
        self.n = node.levels[-1][1]
        self.B = max(1, min(node._chunk_size or self.n, MAX_FIRST_CHUNK, self.n))
        k = 1
        while self.B * ((1 << k) - 1) < self.n:
            k += 1
        self.K = k
        self.members = fields_under(node)
        cont = node._parent.shape
        lists = int(np.prod(cont, dtype=np.int64))
        slot_bytes = [self.B * int(np.prod(f.elem_shape, dtype=np.int64)) * f.dtype.nbytes
                      for f in self.members]
        limit = state.limits()['max_storage_buffer_range']
        budget = state.config.get('device_memory_GB')
        budget = int(float(budget) * (1 << 30)) if budget else DEFAULT_BUDGET
        self.capacity = max(1, min(limit // max(slot_bytes), budget // max(1, sum(slot_bytes)),
                                   lists * ((1 << self.K) - 1)))
        tag = f'_dynamic_pool{id(node) % 100000}'
        self.table = self._bookkeeping(Field(T.i32, cont + (self.K,), (), name=f'{tag}_table'))
        self.top = self._bookkeeping(Field(T.i32, (2,), (), name=f'{tag}_top'))
        self.pools = {}
        for f in self.members:
            p = Field(f.dtype, (self.capacity * self.B,), f.elem_shape, name=f'{f.name}@pool',
                      role=f.buffer.role)
            _unlist(p)
            self.pools[f] = p
        for f, p in self.pools.items():  # the adjoint of a pool access is in the grad's pool
            for kind in ('grad', 'dual'):
                g = getattr(f, '_' + kind)
                if g is not None and g in self.pools:
                    setattr(p, kind, self.pools[g])
                    self.pools[g].buffer.primal = p.buffer
                    self.pools[g].is_grad_of = p
        self.bytes = sum(p.storage.nbytes for p in self.pools.values()) + \
            self.table.storage.nbytes
        self._watch()

    @staticmethod
    def _bookkeeping(f):
        f.buffer.meta['bookkeeping'] = True
        _unlist(f)
        return f

    def _watch(self):
        """Read `top` back at each sync after a launch that allocated: a failed allocation
        raises there."""
        st = self.top.storage
        node, cap, name = self.node, self.capacity, ', '.join(f.name for f in self.members)

        def check():
            if st.host[1]:
                st.for_host_overwrite()[1] = 0
                raise DynamicPoolError(
                    f'the chunk pool of dynamic SNode {node} (fields {name}) is full: '
                    f'{cap} slots of {self.B} elements, so elements written by the last launch '
                    'were dropped. Give it more memory with ti.init(device_memory_GB=...), or '
                    'free lists with snode.deactivate_all()')
        state.runtime().status_checks.append((st, check))

    # ------------------------------------------------------------ host side
    def chunk_of(self, j):
        """Chunk class and offset of list position(s) j (ints or numpy arrays)."""
        j = np.asarray(j)
        c = np.zeros(j.shape, np.int64)
        for k in range(1, self.K):
            c += j >= self.B * ((1 << k) - 1)
        return c, j - self.B * ((1 << c) - 1)

    def host_slots(self, cells, j, allocate):
        """Flat pool element indices of list positions j in lists `cells` (tuples of index
        arrays), -1 where a chunk is missing (allocated first when `allocate`)."""
        c, o = self.chunk_of(j)
        tab = self.table.storage.for_host_read()
        ids = tab[tuple(cells) + (c,)].astype(np.int64)
        if allocate and (ids <= 0).any():
            tab = self.table.storage.for_host_write()
            top = self.top.storage.for_host_write()
            miss = ids.ravel() <= 0
            for w in zip(*[np.atleast_1d(a).ravel()[miss] for a in
                           np.broadcast_arrays(*cells, c)]):
                if tab[w] <= 0:
                    size = 1 << int(w[-1])
                    if top[0] + size > self.capacity:
                        raise DynamicPoolError(f'the chunk pool of dynamic SNode {self.node} is '
                                               f'full ({self.capacity} slots)')
                    tab[w] = top[0] + 1
                    top[0] += size
            ids = tab[tuple(cells) + (c,)].astype(np.int64)
        return np.where(ids > 0, (ids - 1) * self.B + o, -1)

    def clear(self):
        """deactivate_all: every list empty, every chunk back in the pool (zeroed)."""
        used = min(int(self.top.storage.for_host_read()[0]), self.capacity) * self.B
        self.table.storage.for_host_overwrite()[...] = 0
        self.top.storage.for_host_overwrite()[...] = 0
        for p in self.pools.values():  # (the slots given out: pages never touched stay free)
            p.storage.for_host_write()[:used] = 0


def _unlist(f):
    """A pool's own Fields are no user fields (no lazy_grad, clear_all_gradients, ...)."""
    try:
        state.fields.remove(f)
    except ValueError:
        pass


def pool_of(node):
    p = node.__dict__.get('_pool')
    if p is None or p._generation != state.generation:
        p = Pool(node)
        p._generation = state.generation
        node._pool = p
    return p


def _where(field, idx_arrays, allocate):
    """Pool element indices of the logical indices idx_arrays (tuple of arrays) of field."""
    pool = pool_of(node_of(field))
    g = [g for g in guards_of(field) if g.kind == 'dynamic'][-1]
    return pool, pool.host_slots(tuple(g.cell_index(idx_arrays)), g.position(idx_arrays),
                                 allocate)


def host_get(field, idx):
    """Python-scope read of element idx (a tuple of ints): 0 in a missing chunk."""
    pool, w = _where(field, tuple(np.asarray(i) for i in idx), False)
    w = int(w)
    if w < 0:
        return np.zeros(field.elem_shape, field.dtype.np)
    return pool.pools[field].storage.for_host_read()[w].copy()


def host_set(field, idx, value):
    """Python-scope write of element idx (its length set by the caller)."""
    pool, w = _where(field, tuple(np.asarray(i) for i in idx), True)
    pool.pools[field].storage.for_host_write()[int(w)] = value


def host_gather(field):
    """The field as a dense array (0 at inactive elements): to_numpy."""
    out = np.zeros(field.shape + field.elem_shape, field.dtype.np)
    idx = np.nonzero(host_active(field))
    if len(idx[0]):
        pool, w = _where(field, idx, False)
        ok = w >= 0
        out[tuple(i[ok] for i in idx)] = pool.pools[field].storage.for_host_read()[w[ok]]
    return out


def host_scatter(field, arr):
    """Write the active elements of a dense array (from_numpy, fill): Taichi's semantics."""
    idx = np.nonzero(host_active(field))
    if len(idx[0]):
        pool, w = _where(field, idx, True)
        pool.pools[field].storage.for_host_write()[w] = arr[idx]
