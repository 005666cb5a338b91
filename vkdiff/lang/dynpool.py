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
  the node (a struct's members, the gradient).
Allocation (frontend/dynpool.py). The rule: no invocation ever waits on another. Vulkan
promises no forward progress between invocations (SwiftShader; AMD, Intel and Apple GPUs;
NVIDIA before Volta run a subgroup's lanes in lockstep), so an invocation spinning until
another one publishes something may never see it: a hang, or a lost device on a GPU. Every
step is therefore a bounded sequence of atomics (a compare-exchange retry loop in which some
lane always succeeds is fine too), and a race is settled by whoever publishes first:
- the first write into a chunk that has none takes a chunk of its own: the one parked in its
  class's spare word, else 2^c fresh slots from `top` (an atomic add);
- then publishes it: a compare-exchange of the table word 0 -> id. The winner uses its chunk;
  a loser uses the id the compare-exchange returned (the winner's, already published) and
  gives its own chunk, never written so still zero, back;
- the spare words (`spare`: i32 [K], 0 = empty): a loser parks its chunk in its class's word
  (a compare-exchange 0 -> id), and a taker first empties it (an exchange with 0). When the
  word is taken the chunk's slots are counted in top[2] (`slots_lost`) and unused until
  deactivate_all: a race among L lanes costs at most L - 2 chunks (a lockstep subgroup's
  lanes all find the table word 0 at once: 4 on SwiftShader, 8 on lavapipe). Straight-line
  code, a handful of atomics: on a CPU driver it runs masked at every pooled write (a first
  version scanning a 64-word bag per class in a loop made an oit_renderer-like kernel 4x
  slower to compile and 6x slower to run on lavapipe);
- before that, where subgroups are wide (`elects`: 16 lanes or more, GPUs), the lanes of a
  subgroup needing the same missing chunk elect one to claim it and share its id through
  subgroup arithmetic (min picks the word, elect the lane, max hands the id over), so a
  subgroup takes one chunk, not one per lane. Only an economy: a lane left without an id
  (lanes not reconverged, a full pool) claims for itself.
`top` (i32 [3]): slots given out, the failure flag, slots lost. Host-side allocation (Python
scope) is sequential and takes fresh slots. Sparse pointer/bitmasked blocks (issue 24) can
take and give back blocks through the same two steps: `_take` (spare word, else top) and
`_give_back` (spare word, else lost), with a block class per size; a free list for blocks
deactivated one by one belongs between launches (a separate task), never behind a wait.
Reading an element past the list's length or in a missing chunk gives 0.
A deactivated list keeps its chunks (its elements are zeroed) for its next appends;
`snode.deactivate_all()` returns every chunk to the pool. When the pool is full the write is
dropped and the sync after the launch raises `DynamicPoolError` (a MemoryError), never a silent
wrong result.

When: a dynamic node directly holding its fields (dynamic(...).place(...)), with no pointer
above it and its axis not split above it, uses the pool when its fields stored densely would
take more than DENSE_LIMIT bytes; VKDIFF_DYNAMIC_POOL=1 uses it for every such node (the tests
run both layouts), =0 never. Capacity: as many slots as fit every member's pool in one storage
buffer (maxStorageBufferRange: 128 MiB on lavapipe) and all of them in the budget
(ti.init(device_memory_GB=...), default 1 GiB), and never more than the dense extent plus
64 lists' worth (room for the chunks races cost)."""
import os

import numpy as np

from .. import types as T
from ..errors import DynamicPoolError, OutOfMemoryError
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


ELECT_MIN_SUBGROUP = 16  # subgroup width from which the lanes elect one claimer


def elects():
    """Do pooled writes elect one lane per subgroup to claim a missing chunk? Where the
    subgroup is wide (GPUs: 32, 64 lanes, each racing lane would take a chunk) and the device
    has subgroup arithmetic; not on the CPU drivers' 4 and 8 lanes, where the code runs masked
    even when no lane needs it. VKDIFF_DYNAMIC_POOL_ELECT=1 / 0 forces it on / off."""
    force = os.environ.get('VKDIFF_DYNAMIC_POOL_ELECT', '').strip()
    if force == '0':
        return False
    if state.offline is not None:
        feats, width = state.offline.features, getattr(state.offline, 'subgroup_size', 0)
    else:
        rt = state.runtime()
        feats, width = rt.features, rt.subgroup_size
    if not feats.get('subgroup_arithmetic'):
        return False
    return force == '1' or (width or 0) >= ELECT_MIN_SUBGROUP


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
        given = state.config.get('device_memory_GB')
        budget = int(float(given) * (1 << 30)) if given else DEFAULT_BUDGET
        self.capacity = max(1, min(limit // max(slot_bytes), budget // max(1, sum(slot_bytes)),
                                   (lists + 64) * ((1 << self.K) - 1)))
        tag = f'_dynamic_pool{id(node) % 100000}'
        self.table = bookkeeping(Field(T.i32, cont + (self.K,), (), name=f'{tag}_table'))
        self.top = bookkeeping(Field(T.i32, (3,), (), name=f'{tag}_top'))
        self.spare = bookkeeping(Field(T.i32, (self.K,), (), name=f'{tag}_spare'))
        self.pools = make_pools(self, Field, lambda f: self.B, 'pool', user_budget=bool(given))
        self.bytes = sum(p.storage.nbytes for p in self.pools.values()) + \
            self.table.storage.nbytes
        self._watch()

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

    def slots_in_use(self):
        """Slots of the chunks the lists hold (their table words)."""
        tab = self.table.storage.for_host_read()
        return int(sum(int((tab[..., c] > 0).sum()) << c for c in range(self.K)))

    def slots_parked(self):
        """Slots of the chunks parked in the spare words (given back by the loser of a race)."""
        spare = self.spare.storage.for_host_read()
        return int(sum(int(spare[c] > 0) << c for c in range(self.K)))

    def slots_lost(self):
        """Slots of chunks given back while the spare word was taken: unused until
        deactivate_all (a race among L lanes costs at most L - 2 such chunks)."""
        return int(self.top.storage.for_host_read()[2])

    def clear(self):
        """deactivate_all: every list empty, every chunk back in the pool (zeroed)."""
        used = min(int(self.top.storage.for_host_read()[0]), self.capacity) * self.B
        self.table.storage.for_host_overwrite()[...] = 0
        self.top.storage.for_host_overwrite()[...] = 0
        self.spare.storage.for_host_overwrite()[...] = 0
        for p in self.pools.values():  # (the slots given out: pages never touched stay free)
            p.storage.for_host_write()[:used] = 0


def make_pools(pool, Field, slots, suffix, user_budget):
    """A pool Field per member of `pool` (a DynamicPool, or lang/blockpool.py's BlockPool),
    pool.capacity * slots(member) elements each; without a budget from ti.init, pool.capacity is
    halved until the device can allocate them (SwiftShader: one 2 GiB heap for 1 GiB buffers)."""
    while True:
        pools = {}
        try:
            for f in pool.members:
                p = Field(f.dtype, (pool.capacity * slots(f),), f.elem_shape,
                          name=f'{f.name}@{suffix}', role=f.buffer.role)
                _unlist(p)
                pools[f] = p
                p.storage  # (allocated now)
            break
        except OutOfMemoryError:
            if user_budget or pool.capacity <= 1:
                raise
            pool.capacity //= 2
    for f, p in pools.items():  # the adjoint of a pool access is in the grad's pool
        for kind in ('grad', 'dual'):
            g = getattr(f, '_' + kind)
            if g is not None and g in pools:
                setattr(p, kind, pools[g])
                pools[g].buffer.primal = p.buffer
                pools[g].is_grad_of = p
    return pools


def bookkeeping(f):
    """A pool's own bookkeeping Field (tables, counters): marked, and no user field."""
    f.buffer.meta['bookkeeping'] = True
    _unlist(f)
    return f


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
