"""Runtime stage: the one Vulkan device, field storage resident on it, and the batched command
queue. Launches are recorded into one Kompute sequence and submitted at sync points; a global
memory barrier is recorded only between commands that depend on each other (read-after-write,
write-after-write, write-after-read on the same buffer)."""
import os

import numpy as np

from ..errors import OutOfMemoryError, RuntimeError_
from . import validation

def _load_native():
    try:
        from . import _vkrt
    except ImportError as e:
        raise RuntimeError_(
            f'vkdiff\'s native Vulkan module does not import [{e}]: `python -m vkdiff doctor` says '
            'what is missing; from a checkout, `bash tools/setup.sh` (or `pip install -e .`) '
            'builds it') from None
    return _vkrt


class Storage:
    """A field's buffer: device memory plus a host mirror (the mapped staging buffer).
    `state` says which side is newer: 'synced', 'host' (needs upload), 'device' (needs download)."""

    __slots__ = ('rt', 'buf', 'host', 'state', 'nbytes', '__weakref__')

    def __init__(self, rt, shape, np_dtype, name=None):
        self.rt = rt
        n = int(np.prod(shape, dtype=np.int64)) * np.dtype(np_dtype).itemsize
        what = f'field {name} (shape {tuple(shape)}, {np.dtype(np_dtype).name}: {n} bytes)' \
            if name else f'a field of {n} bytes'
        limit = rt.limits['max_storage_buffer_range']
        if n > limit:
            raise RuntimeError_(f'{what} exceeds this device\'s maxStorageBufferRange '
                                f'({limit} bytes); split it into several fields')
        self.nbytes = max((n + 3) // 4 * 4, 4)  # whole 32-bit words (8/16-bit fields pack)
        try:
            self.buf = rt.device.buffer(self.nbytes)
        except MemoryError as e:  # the native module's OutOfMemoryError, or std::bad_alloc
            raise OutOfMemoryError(f'out of memory allocating {what} on {rt.name} ({e}); the '
                                   'fields allocated before are intact') from None
        self.host = self.buf.host[:n].view(np_dtype).reshape(shape)
        self.state = 'synced'

    def for_host_read(self):
        if self.state == 'device':
            self.rt.download(self)
            self.rt.flush()
            self.state = 'synced'
        return self.host

    def for_host_write(self):
        self.for_host_read()
        return self.for_host_overwrite()

    def for_host_overwrite(self):
        """The host mirror, for a write that replaces every element (the device copy is not
        downloaded first)."""
        if self in self.rt.staged:
            self.rt.flush()
        self.state = 'host'
        return self.host


class Runtime:
    def __init__(self, device_index=0, disable_features=()):
        native = _load_native()
        validation.maybe_enable()
        index = int(os.environ.get('VKDIFF_DEVICE', device_index))
        env_disable = [f for f in os.environ.get('VKDIFF_DISABLE_FEATURES', '').split(',') if f]
        try:
            self.device = native.Device(index, list(disable_features) + env_disable)
        except RuntimeError as e:
            raise RuntimeError_(str(e)) from None
        self.features = dict(self.device.features)
        self.limits = dict(self.device.limits)
        self.subgroup_size = self.device.subgroup_size
        self.name = self.device.name
        self.batch = self.device.batch()
        self.written = set()  # buffers written since the last barrier
        self.read = set()     # buffers read since the last barrier
        self.staged = set()   # storages whose staging memory pending commands use
        self.launches = 0
        self.status_checks = []  # (Storage, check()): device status read back at every sync

    # -------------------------------------------------------------- recording
    def _hazard(self, reads, writes):
        w = self.written
        if (w and (not w.isdisjoint(reads) or not w.isdisjoint(writes))) or (
                self.read and not self.read.isdisjoint(writes)):
            self.batch.barrier()
            w.clear()
            self.read.clear()
        self.read.update(reads)
        w.update(writes)

    def upload(self, st):
        self._hazard((), (st,))
        self.batch.upload(st.buf)
        self.staged.add(st)
        st.state = 'synced'

    def download(self, st):
        self._hazard((st,), ())
        self.batch.download(st.buf)
        self.staged.add(st)

    def dispatch(self, algo, groups, push, reads, writes):
        """Record one compute dispatch; `reads`/`writes` are Storages."""
        for st in reads:
            if st.state == 'host':
                self.upload(st)
        for st in writes:
            if st.state == 'host':
                self.upload(st)
            st.state = 'device'
        self._hazard(reads, writes)
        self.batch.dispatch(algo, groups, push)
        if self.batch.pending > 4096:
            self.flush()

    def flush(self):
        """Submit what is recorded and wait. Status fields written since the last sync (e.g. the
        loop-limit flag, the device log of kernel prints) are read back with it; their checks run
        last, each of them (a check may read more back), and then the first error is raised."""
        checks = [c for c in self.status_checks if c[0].state == 'device'] \
            if self.batch.pending else ()
        for st, _ in checks:
            self.download(st)
        if self.batch.pending:
            self.batch.submit()
        self.written.clear()
        self.read.clear()
        self.staged.clear()
        for st, _ in checks:
            st.state = 'synced'
        error = None
        for _, check in checks:
            try:
                check()
            except Exception as e:  # noqa: BLE001  (raised below, after the other checks)
                error = error or e
        if error is not None:
            raise error

    def close(self):
        # nobody is left to report errors to; what is only printed (kernel prints) still prints
        self.status_checks = [c for c in self.status_checks if getattr(c[1], 'at_close', False)]
        try:
            self.flush()
        finally:
            self.device.close()
