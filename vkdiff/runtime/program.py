"""Runtime stage: the one Vulkan device, field storage resident on it, and the batched command
queue. Launches are recorded into a Kompute sequence; once it has been recording for KICK_SECONDS
it is submitted without waiting (the device runs it while the host records the next), and at
sync points the rest is submitted and waited for. A global memory barrier is recorded only
between commands that depend on each other (read-after-write, write-after-write, write-after-read
on the same buffer), across submissions too: the sets of buffers read and written since the last
barrier are only forgotten once everything submitted has finished.

Field memory: on unified-memory devices (CPU drivers such as lavapipe, integrated GPUs: the native
feature 'unified_memory') a field is one device-local buffer the host maps, so host reads and
writes touch it directly: a read waits for the recorded and running commands only when they may
write the field, a write when they use it at all (a write must not reach a command recorded before
it). Elsewhere a field is a device buffer plus a staging copy, moved by upload/download commands.
Besides dispatches the batch records fills and copies (vkCmdFillBuffer / vkCmdCopyBuffer: field
fills and gradient clearing need no shader); their hazards are tracked as a dispatch's.

The watchdog: a wait for the device longer than `watchdog` seconds raises WatchdogTimeout naming
the kernels launched since the last finished sync; the work stays submitted (the native module
waits on a fence of its own, README: Watchdog)."""
import atexit
import os
import time
import weakref

import numpy as np

from ..errors import OutOfMemoryError, RuntimeError_, WatchdogTimeout
from . import devices, validation

def _load_native():
    try:
        # the native module: a clear error when it does not load
        from . import _vkrt
    except ImportError as e:
        raise RuntimeError_(
            f'vkdiff\'s native Vulkan module does not import [{e}]: `python -m vkdiff doctor` says '
            'what is missing; from a checkout, `bash tools/setup.sh` (or `pip install -e .`) '
            'builds it') from None
    return _vkrt


# How long launches are recorded before the sequence is submitted without waiting (as Taichi's
# Vulkan runtime does, 2 ms there): long enough that a submission's own cost is small beside its
# commands', short enough that the device starts early. VKDIFF_KICK_MS overrides (0: after every
# launch; a negative value: never, only at sync points).
KICK_SECONDS = float(os.environ.get('VKDIFF_KICK_MS', 1.0)) / 1000

# Seconds a wait may take, whatever the watchdog's limit, while a kernel's first launch is in
# flight (its shaders may compile then: Runtime._submit).
FIRST_LAUNCH_GRACE = 300.0


class Storage:
    """A field's buffer and its host view: the buffer's own memory (`mapped`: unified memory) or
    a staging copy. `state` says which side is newer: 'synced', 'host' (needs upload; never when
    mapped), 'device' (written by commands since the host last looked: needs a download, or when
    mapped only the wait for those commands)."""

    __slots__ = ('rt', 'buf', 'host', 'state', 'nbytes', 'mapped', 'version', '__weakref__')

    # set while a checkpointed block (ad/checkpoint.py) runs its steps: called with the Storage
    # just before the host overwrites it (so its old contents can still be saved)
    host_watch = None

    def __init__(self, rt, shape, np_dtype, name=None, strides=None):
        """`strides`: element strides of the host view over the buffer (a field stored in its
        SNode nesting order, lang/layout.py), None for C order."""
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
        flat = self.buf.host[:n].view(np_dtype)
        if strides is None:
            self.host = flat.reshape(shape)
        else:
            item = flat.itemsize
            self.host = np.lib.stride_tricks.as_strided(flat, tuple(shape),
                                                        tuple(s * item for s in strides))
        self.mapped = getattr(self.buf, 'mapped', False)  # (a native module not rebuilt yet)
        self.state = 'synced'
        self.version = 0  # counts the commands and host writes that changed it

    def for_host_read(self):
        if self.state == 'device':
            if not self.mapped:
                self.rt.download(self)
                self.rt.flush()
            elif self in self.rt.used:  # recorded or running commands may still write it
                self.rt.flush()
            self.state = 'synced'
        return self.host

    def for_host_write(self):
        self.for_host_read()
        return self.for_host_overwrite()

    def for_host_overwrite(self):
        """The host mirror, for a write that replaces every element (the device copy is not
        downloaded first)."""
        if Storage.host_watch is not None:
            Storage.host_watch(self)
        if self in (self.rt.used if self.mapped else self.rt.staged):
            self.rt.flush()
        self.state = 'synced' if self.mapped else 'host'
        self.version += 1
        return self.host


def _stop_prewarm(device_ref):
    device = device_ref()
    if device is not None:
        device.stop_prewarm()


def _prewarm_helps(rt):
    """Lavapipe with Mesa's shader disk cache on, no validation layer (the helper device binds
    placeholder buffers), a native module that prewarms, and VKDIFF_PREWARM not 0."""
    off = ('1', 'true', 'yes')
    return (os.environ.get('VKDIFF_PREWARM', '1') != '0' and hasattr(rt.device, 'prewarm')
            and rt.driver_id == 'mesa-llvmpipe' and not validation.enabled()
            and os.environ.get('MESA_SHADER_CACHE_DISABLE', '').lower() not in off
            and os.environ.get('MESA_GLSL_CACHE_DISABLE', '').lower() not in off)


class Runtime:
    def __init__(self, device_index=0, disable_features=(), watchdog=0.0):
        native = _load_native()
        validation.maybe_enable()
        # an index or a deviceUUID; VKDIFF_DEVICE wins (the native module reads it too)
        index = devices.resolve(os.environ.get('VKDIFF_DEVICE') or device_index)
        env_disable = [f for f in os.environ.get('VKDIFF_DISABLE_FEATURES', '').split(',') if f]
        try:
            self.device = native.Device(index, list(disable_features) + env_disable)
        except RuntimeError as e:
            raise RuntimeError_(str(e)) from None
        self.features = dict(self.device.features)
        self.limits = dict(self.device.limits)
        self.subgroup_size = self.device.subgroup_size
        self.name = self.device.name
        # what code is chosen by (never the name): deviceType, driverID (runtime/devices.py)
        facts = getattr(self.device, 'facts', None)
        self.info = devices.from_facts(facts) if facts is not None else None
        self.device_type = self.info.device_type if self.info else 'other'
        self.driver_id = self.info.driver_id if self.info else 'unknown'
        self.batch = self.device.batch()
        self.watchdog = float(watchdog)  # seconds a wait for the device may take (0: no limit)
        if hasattr(type(self.device), 'watchdog'):  # (a native module not rebuilt yet: none)
            self.device.watchdog = self.watchdog
        self.in_flight = {}  # names of the kernels launched since the last finished sync
        self.first_in_flight = False  # and was one of them a kernel's first launch?
        self.written = set()  # buffers written since the last barrier
        self.read = set()     # buffers read since the last barrier
        self.staged = set()   # storages whose staging memory pending commands use
        self.used = set()     # storages that commands since the last sync read or write
        self.launches = 0
        self.recording_since = None  # perf_counter() of the first command since a submission
        # a native module built before Batch.wait (a checkout not rebuilt yet) only submits
        # and waits: every submission is then a sync point
        self.can_kick = hasattr(self.batch, 'wait')
        # and one built before Batch.dispatch_indirect: run-time bounds use the host's geometry
        self.can_indirect = hasattr(self.batch, 'dispatch_indirect')
        self.status_checks = []  # (Storage, check()): device status read back at every sync
        self.prewarming = None  # does prewarm() help here? (decided at its first call)
        # launch/replay.py: while a Tape is captured, every dispatch recorded is appended here
        # (kind, pipeline, workgroups or geometry, push, reads, writes); a launch that must run
        # live in a replay sets capture_live to the reason
        self.capture = None
        self.capture_live = None

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
        if st.mapped:  # the device reads the host's writes directly
            st.state = 'synced'
            return
        self._hazard((), (st,))
        self.batch.upload(st.buf)
        self.staged.add(st)
        st.state = 'synced'

    def download(self, st):
        if st.mapped:  # the host reads the device's memory once the commands are done
            return
        self._hazard((st,), ())
        self.batch.download(st.buf)
        self.staged.add(st)

    def dispatch(self, algo, groups, push, reads, writes):
        """Record one compute dispatch; `reads`/`writes` are Storages."""
        self._record(reads, writes)
        self.batch.dispatch(algo, groups, push)
        if self.capture is not None:
            self.capture.append(('d', algo, groups, push, reads, writes))
        self._recorded()

    def dispatch_indirect(self, algo, geometry, push, reads, writes):
        """Record a dispatch whose workgroup count an earlier command (a geometry task) wrote
        into the Storage `geometry` (three uint32: x, y, z): read by this command, so the
        write before it gets a barrier; the native op adds the indirect-read barrier."""
        self._record(list(reads) + [geometry], writes)
        self.batch.dispatch_indirect(algo, geometry.buf, push)
        if self.capture is not None:
            self.capture.append(('i', algo, geometry, push, reads, writes))
        self._recorded()

    def _record(self, reads, writes):
        for st in reads:
            if st.state == 'host':
                self.upload(st)
        for st in writes:
            if st.state == 'host':
                self.upload(st)
            st.state = 'device'
            st.version += 1
        self._hazard(reads, writes)
        self.used.update(reads)  # (staged storages too: cheaper than sorting them out)
        self.used.update(writes)

    @property
    def can_fill(self):
        """Does the native module record fills and copies (one built before them does not)?"""
        return hasattr(self.batch, 'fill')

    def fill(self, st, word):
        """Record vkCmdFillBuffer setting every 32-bit word of st's buffer to `word` (a transfer
        write, ordered by the same barriers as dispatches). The whole buffer is written, so a
        newer host copy is not uploaded first."""
        st.state = 'device'
        st.version += 1
        self._hazard((), (st,))
        self.used.add(st)
        self.batch.fill(st.buf, 0, st.nbytes, word)
        self._recorded()

    def copy(self, src, dst):
        """Record vkCmdCopyBuffer of src's whole buffer into dst (same size, distinct)."""
        if src.nbytes != dst.nbytes or src is dst:
            raise RuntimeError_(f'copy between buffers of {src.nbytes} and {dst.nbytes} bytes')
        if src.state == 'host':
            self.upload(src)
        dst.state = 'device'
        dst.version += 1
        self._hazard((src,), (dst,))
        self.used.update((src, dst))
        self.batch.copy(src.buf, dst.buf, 0, 0, src.nbytes)
        self._recorded()

    def _recorded(self):
        """After a command is recorded: submit without waiting once recording has gone on for
        KICK_SECONDS (or many commands are pending)."""
        now = time.perf_counter()
        if self.recording_since is None:
            self.recording_since = now
        if (KICK_SECONDS >= 0 and now - self.recording_since >= KICK_SECONDS) or \
                self.batch.pending > 4096:
            if not self.can_kick:
                if self.batch.pending > 4096:
                    self.flush()
                return
            self.kick()

    def prewarm(self, items):
        """Pipelines made, not dispatched yet: (buffers, spirv, push size) items. On a driver that
        compiles each shader at its first dispatch, one after another on its queue thread, and
        keeps compiled shaders in an on-disk cache (lavapipe), the native module compiles these
        meanwhile on a helper device's queue thread (Device.prewarm); their first dispatch here
        then finds them in the cache. Nothing elsewhere, or with VKDIFF_PREWARM=0."""
        if self.prewarming is None:
            self.prewarming = _prewarm_helps(self)
            if self.prewarming:  # at exit the helper stops before the driver's own teardown
                atexit.register(_stop_prewarm, weakref.ref(self.device))
        if self.prewarming and items:
            self.device.prewarm(items)

    def note_launch(self, name, first=False):
        """A kernel is being launched (`first`: its first launch): named by WatchdogTimeout
        until the next sync ends."""
        if len(self.in_flight) < 64:
            self.in_flight[name] = True
        self.first_in_flight = self.first_in_flight or bool(first)

    def _submit(self, wait):
        """batch.submit, a native watchdog timeout raised as vkdiff's WatchdogTimeout. While a
        kernel's first launch is in flight the wait goes on up to FIRST_LAUNCH_GRACE: it may
        include compiling its shaders (lavapipe compiles at the first dispatch, on the device's
        queue; measured 13 s for one kernel, over 60 s under load)."""
        t0 = time.perf_counter()
        try:
            self.batch.submit(wait)
        except TimeoutError as e:
            while self.first_in_flight and time.perf_counter() - t0 < FIRST_LAUNCH_GRACE:
                try:
                    if wait:
                        self.batch.wait()  # (submitted: wait on)
                    else:
                        self.batch.submit(False)  # (timed out making room: not submitted yet)
                    return
                except TimeoutError as again:
                    e = again
            raise self._timeout(e) from None

    def _timeout(self, e):
        names = list(self.in_flight)
        what = (f'kernel{"s" if len(names) > 1 else ""} ' + ', '.join(names)) if names \
            else 'work'
        return WatchdogTimeout(
            f'{what} submitted to {self.name} since the last sync did not finish within the '
            f'watchdog\'s limit of {self.watchdog:g} s (ti.init(watchdog=seconds) or '
            'VKDIFF_WATCHDOG; 0 = no limit) [' + str(e) + ']. It is still running: the next '
            'sync waits for it again, and once it has finished everything continues. A kernel '
            'that never ends (an endless loop, or invocations waiting on each other) cannot be '
            'stopped, and on a CPU driver (lavapipe, SwiftShader) a fresh device from ti.init() '
            'only runs after it: then restart the process.', names)

    @property
    def hung(self):
        return bool(getattr(self.device, 'hung', False))

    def kick(self):
        """Submit what is recorded without waiting for it (nothing when nothing is pending)."""
        if self.can_kick and self.batch.pending:
            self._submit(False)  # queued; the hazard sets still hold what it does
            self.recording_since = None

    def flush(self):
        """Submit what is recorded and wait. Status fields written since the last sync (e.g. the
        loop-limit flag, the device log of kernel prints) are read back with it; their checks run
        last, each of them (a check may read more back), and then the first error is raised."""
        busy = self.batch.pending or (self.can_kick and self.batch.inflight)
        checks = [c for c in self.status_checks if c[0].state == 'device'] if busy else ()
        for st, _ in checks:
            self.download(st)
        if busy:
            self._submit(True)  # and wait for it and everything submitted before
        self.in_flight.clear()
        self.first_in_flight = False
        self.recording_since = None
        self.written.clear()
        self.read.clear()
        self.staged.clear()
        self.used.clear()
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
            if not self.hung:  # (after a watchdog timeout: no second wait, the device is left)
                self.flush()
        finally:
            self.device.close()
