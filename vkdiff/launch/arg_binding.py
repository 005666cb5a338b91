"""Launch floor: ndarray kernel arguments bound at each launch. A compiled task names an ndarray
parameter by a Buffer with role 'arg' (and its gradient by a Buffer derived from it); `Launch`
maps them to device storage for one launch -- the Ndarray's own storage (or its `.grad`'s), or
for a numpy array / torch tensor a staging copy -- and, after the dispatches, copies what the
kernel wrote back into the host arrays (which waits for the device). A task's pipeline
(kp::Algorithm: descriptor set + pipeline, ~3 ms on lavapipe) is made once per set of bound
storages and kept until one of them is freed, so the same arrays launch without any new Vulkan
object, and new arrays never recompile the kernel; host arrays go through staging storage kept
per parameter, so a loop over fresh numpy arrays or tensors reuses one pipeline."""
import weakref

from ..errors import VkdiffError, VkdiffValueError
from .ndarray_args import Staging
from .. import ir
from ..lang import binding


def arg_root(buf):
    """The 'arg' Buffer that `buf` is (or is the gradient / tangent of), else None."""
    while buf is not None:
        if buf.role == 'arg':
            return buf
        buf = buf.primal
    return None


def pipeline(rt, buffers, binary, push_size, texels):
    """The device's pipeline of a task; `texels` (storage texel buffer views after the buffers)
    only where there are some (a runtime module built before texel reads takes none)."""
    if texels:
        return rt.device.algorithm(buffers, binary, push_size, texels)
    return rt.device.algorithm(buffers, binary, push_size)


def _kind(buf, root):
    return 'primal' if buf is root else buf.role


class TaskArgs:
    """The Buffers of one compiled task that are bound per launch, and its pipelines by the
    storages bound to them (dropped as soon as one of those storages is freed)."""

    def __init__(self, fields, reads, writes, push_size, texels=()):
        self.fields, self.reads, self.writes = fields, reads, writes
        self.texels = list(texels)  # texel views after the buffers (codegen/memory.py)
        self.slots = [b for b in fields if arg_root(b) is not None]
        # where each slot's storage comes from: (parameter index, 'primal' | 'grad' | 'dual',
        # the parameter's name)
        self.sources = [(arg_root(b).meta['param'], _kind(b, arg_root(b)), arg_root(b).name)
                        for b in self.slots]
        self.static = {b: binding.storage_for(b) for b in fields if arg_root(b) is None}
        self.push_size = push_size
        self.algos = {}  # ids of the bound storages -> algorithm
        # the storages a dispatch reads and writes: a slot's (by position) or a fixed one
        pos = {b: k for k, b in enumerate(self.slots)}
        self.read_src = [(pos.get(b, -1), self.static.get(b)) for b in reads]
        self.write_src = [(pos.get(b, -1), self.static.get(b)) for b in writes]

    def bound(self, rt, binary, launch, groups, push):
        """rt.dispatch's arguments for this launch: (algorithm, groups, push, read storages,
        written storages)."""
        sts = [launch.storage(*src) for src in self.sources]
        key = tuple(map(id, sts))
        algo = self.algos.get(key)
        if algo is None:
            st = dict(self.static)
            st.update(zip(self.slots, sts))
            algo = self.algos[key] = pipeline(rt, [st[b].buf for b in self.fields], binary,
                                              self.push_size, self.texels)
            for x in set(sts):
                _watch(x, self, key)
        return (algo, groups, push, [sts[k] if k >= 0 else x for k, x in self.read_src],
                [sts[k] if k >= 0 else x for k, x in self.write_src])


_watched = {}  # id(storage) -> (its weakref, [(weakref to a TaskArgs, key)])


def _watch(storage, task_args, key):
    """Drop task_args.algos[key] when `storage` is freed: the pipeline holds the device memory
    of every buffer it binds, and a new storage may get the freed one's id."""
    sid = id(storage)
    w = _watched.get(sid)
    if w is None:
        def freed(_, sid=sid):
            for ref, k in _watched.pop(sid, (None, ()))[1]:
                ta = ref()
                if ta is not None:
                    ta.algos.pop(k, None)
        w = _watched[sid] = (weakref.ref(storage, freed), [])
    w[1].append((weakref.ref(task_args), key))


class Launch:
    """The arrays of one launch (launch.ndarray_args.Bound, one per ndarray parameter) and the
    storages bound to their Buffers."""

    def __init__(self, tasklist, arrays):
        self.tasklist, self.arrays = tasklist, arrays
        self.bound = {}       # (parameter, kind) -> Storage
        self.back = {}        # (parameter, kind) -> host array the kernel writes

    def prepare(self, ctasks):
        """Before any dispatch: which host arrays get written (a read-only one is an error now,
        before anything ran)."""
        written = self.tasklist.__dict__.get('_arg_writes')
        if written is None:
            written = self.tasklist._arg_writes = sorted({
                (arg_root(b).meta['param'], _kind(b, arg_root(b)), arg_root(b).name)
                for ct in ctasks if ct.args is not None
                for b in ct.write_fields if arg_root(b) is not None})
        for k, kind, name in written:
            a = self.arrays[k]
            if a.array is None:
                host = a.host if kind == 'primal' else a.grads.get(kind)
                if host is not None and not host.flags.writeable:
                    raise VkdiffValueError(f'kernel {self.tasklist.name} writes argument '
                                           f'{name}, a read-only array')
                self.back[(k, kind)] = host

    def storage(self, k, kind, name):
        st = self.bound.get((k, kind))
        if st is None:
            st = self.bound[(k, kind)] = self._bind(k, kind, name)
        return st

    def _bind(self, k, kind, name):
        a = self.arrays[k]
        if a.array is not None:
            arr = a.array if kind == 'primal' else getattr(a.array, kind, None)
            if arr is None:
                raise VkdiffError(f'kernel {self.tasklist.name}: argument {name} has no '
                                  f'{kind}; create the ndarray with needs_grad=True')
            return arr.storage
        host = a.host if kind == 'primal' else a.grads.get(kind)
        if host is None:
            raise VkdiffValueError(f'kernel {self.tasklist.name}: argument {name} (a host '
                                   f'array) has no {kind}: pass a torch tensor whose .{kind} is '
                                   'set, or a vkdiff ndarray with needs_grad=True')
        return self._staging(k, kind).bind(host, a.dtype)

    def _staging(self, k, kind):
        table = self.tasklist.__dict__.setdefault('_arg_staging', {})
        st = table.get((k, kind))
        if st is None:
            st = table[(k, kind)] = Staging()
        return st

    def finish(self):
        """After the dispatches: what the kernel wrote into host arrays, copied back."""
        for (k, kind), host in self.back.items():
            if host is not None:
                self._staging(k, kind).copy_back(host)


# ---------------------------------------------------------------- the Tape's access check
_tape_bufs = weakref.WeakKeyDictionary()   # Ndarray -> the Buffer standing for it in Tape checks
_host_bufs = {}                            # (data address, nbytes) of a host array -> its Buffer


def _array_buffer(bound, name):
    """One ir.Buffer per array (whatever kernel parameter it is passed to), so the Tape's
    global-data-access check sees that two launches touch the same array."""
    if bound.array is not None:
        b = _tape_bufs.get(bound.array)
        if b is None:
            a = bound.array
            b = _tape_bufs[a] = ir.Buffer(a.name, a.dtype, a.shape, a.elem_shape, role='field')
        return b
    key = (bound.host.__array_interface__['data'][0], bound.host.nbytes)
    b = _host_bufs.get(key)
    if b is None:
        if len(_host_bufs) > 4096:
            _host_bufs.clear()
        b = _host_bufs[key] = ir.Buffer(name, bound.dtype, bound.shape, bound.elem_shape,
                                        role='field')
    return b


def array_buffers(inst, rargs):
    """{parameter Buffer: the Buffer of the array bound to it} for one recorded launch."""
    arrays = getattr(rargs, 'arrays', None)
    kir = getattr(inst, 'kir', None)
    if not arrays or kir is None:
        return {}
    return {b: _array_buffer(a, b.name) for b, a in zip(kir.arg_arrays, arrays)}


def map_summary(summary, subst):
    """A launch summary (access_rules.launch_summary) with parameter Buffers replaced by their
    arrays' Buffers."""
    if not subst:
        return summary
    writes, reads = summary
    return ([(subst.get(e[0], e[0]),) + tuple(e[1:]) for e in writes],
            [(subst.get(e[0], e[0]),) + tuple(e[1:]) for e in reads])
