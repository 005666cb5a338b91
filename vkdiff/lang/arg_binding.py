"""API stage: ndarray kernel arguments bound at each launch. A compiled task names an ndarray
parameter by a Buffer with role 'arg' (and its gradient by a Buffer derived from it); `Launch`
maps them to device storage for one launch -- the Ndarray's own storage (or its `.grad`'s), or
for a numpy array / torch tensor a staging copy -- and, after the dispatches, copies what the
kernel wrote back into the host arrays (which waits for the device). A task's pipeline
(kp::Algorithm: descriptor set + pipeline, ~3 ms on lavapipe) is made once per set of bound
storages and cached weakly, so the same arrays launch without any new Vulkan object, and new
arrays never recompile the kernel; host arrays go through staging storage kept per parameter,
so a loop over fresh numpy arrays or tensors reuses one pipeline."""
import weakref

from ..errors import VkdiffError, VkdiffValueError
from .ndarray_args import Staging


def arg_root(buf):
    """The 'arg' Buffer that `buf` is (or is the gradient / tangent of), else None."""
    while buf is not None:
        if buf.role == 'arg':
            return buf
        buf = buf.primal
    return None


def _kind(buf, root):
    return 'primal' if buf is root else buf.role


class TaskArgs:
    """The Buffers of one compiled task that are bound per launch, and its pipelines by the
    storages bound to them."""

    def __init__(self, fields, reads, writes, push_size):
        from . import binding
        self.fields, self.reads, self.writes = fields, reads, writes
        self.slots = [b for b in fields if arg_root(b) is not None]
        self.static = {b: binding.storage_for(b) for b in fields if arg_root(b) is None}
        self.push_size = push_size
        self.algos = {}  # ids of the bound storages -> (their weakrefs, algorithm)

    def bound(self, rt, binary, launch, groups, push):
        """rt.dispatch's arguments for this launch: (algorithm, groups, push, read storages,
        written storages)."""
        st = dict(self.static)
        for b in self.slots:
            st[b] = launch.storage(b)
        key = tuple(id(st[b]) for b in self.slots)
        hit = self.algos.get(key)
        if hit is None or any(r() is None for r in hit[0]):
            if len(self.algos) >= 32:  # drop pipelines of storages that are gone
                self.algos = {k: v for k, v in self.algos.items()
                              if all(r() is not None for r in v[0])}
            algo = rt.device.algorithm([st[b].buf for b in self.fields], binary, self.push_size)
            hit = self.algos[key] = ([weakref.ref(st[b]) for b in self.slots], algo)
        return hit[1], groups, push, [st[b] for b in self.reads], [st[b] for b in self.writes]


class Launch:
    """The arrays of one launch (lang.ndarray_args.Bound, one per ndarray parameter) and the
    storages bound to their Buffers."""

    def __init__(self, tasklist, arrays):
        self.tasklist, self.arrays = tasklist, arrays
        self.bound = {}       # arg-derived Buffer -> Storage
        self.back = {}        # (parameter, kind) -> host array the kernel writes

    def _array(self, buf):
        root = arg_root(buf)
        return root, self.arrays[root.meta['param']], _kind(buf, root)

    def prepare(self, ctasks):
        """Before any dispatch: which host arrays get written (a read-only one is an error now,
        before anything ran)."""
        for ct in ctasks:
            if ct.args is None:
                continue
            for b in ct.write_fields:
                if arg_root(b) is None:
                    continue
                root, a, kind = self._array(b)
                if a.array is None:
                    host = a.host if kind == 'primal' else a.grads.get(kind)
                    if host is not None and not host.flags.writeable:
                        raise VkdiffValueError(f'kernel {self.tasklist.name} writes argument '
                                               f'{root.name}, a read-only array')
                    self.back[(root.meta['param'], kind)] = host

    def storage(self, buf):
        st = self.bound.get(buf)
        if st is None:
            st = self.bound[buf] = self._bind(buf)
        return st

    def _bind(self, buf):
        root, a, kind = self._array(buf)
        if a.array is not None:
            arr = a.array if kind == 'primal' else getattr(a.array, kind, None)
            if arr is None:
                raise VkdiffError(f'kernel {self.tasklist.name}: argument {root.name} has no '
                                  f'{kind}; create the ndarray with needs_grad=True')
            return arr.storage
        host = a.host if kind == 'primal' else a.grads.get(kind)
        if host is None:
            raise VkdiffValueError(f'kernel {self.tasklist.name}: argument {root.name} (a host '
                                   f'array) has no {kind}: pass a torch tensor whose .{kind} is '
                                   'set, or a vkdiff ndarray with needs_grad=True')
        return self._staging(root.meta['param'], kind).bind(host, a.dtype)

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
    from .. import ir
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
