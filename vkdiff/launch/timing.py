"""Launch floor: the kernel profiler's measurements (ti.init(kernel_profiler=True)); profiler.py
(ti.profiler) reads and prints them. Times are host-measured: begin() waits for the device, end()
waits for the launch."""
import collections
import time

from ..lang import state

records = collections.OrderedDict()   # kernel name -> [seconds per launch]


def enabled():
    return bool(state.config.get('kernel_profiler'))


def begin():
    """Before a launch: wait for earlier work; the start time, or None when not profiling."""
    if not enabled():
        return None
    state.runtime().flush()
    return time.perf_counter()


def end(name, t0):
    """After a launch started at t0 (begin()'s value): wait for it and record its time."""
    if t0 is None:
        return
    state.runtime().flush()
    records.setdefault(name, []).append(time.perf_counter() - t0)
