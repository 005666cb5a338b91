"""API layer: ``ti.profiler``, Taichi's kernel profiler (``ti.init(kernel_profiler=True)``).

Times are HOST-MEASURED: vkdiff's native runtime records no Vulkan timestamp queries, so with
the profiler on, each kernel launch (forward, ``kernel.grad`` and the Tape's adjoint launches)
first waits for the device (``ti.sync()``), then its wall time is taken from just before it is
recorded to the end of its execution (submit + wait). Compilation to SPIR-V is not included;
recording and submission overhead is, and so is the driver's pipeline creation in a kernel's
first launch (its max, not its min). Launches are serialised while profiling, so a profiled program runs
slower than an unprofiled one. Printed tables say "host-measured".

API (as Taichi's): print_kernel_profiler_info(mode='count'|'trace'),
query_kernel_profiler_info(name) -> (counter, min, max, avg) in milliseconds,
clear_kernel_profiler_info(), get_kernel_profiler_total_time() in seconds,
set_kernel_profiler_toolkit('default'); print_memory_profiler_info() and memory_profiler_info() for
the pooled pointer SNodes' memory (lang/blockpool.py).
"""
from .errors import VkdiffValueError
from .lang import blockpool, state
from .launch.timing import enabled, records as _records  # noqa: F401  (enabled: ti.profiler's)


class KernelProfilerQueryResult:
    """Launch count and min/max/avg time in milliseconds of one kernel (Taichi's fields)."""

    def __init__(self, counter, min, max, avg):
        self.counter, self.min, self.max, self.avg = counter, min, max, avg

    def __repr__(self):
        return (f'KernelProfilerQueryResult(counter={self.counter}, min={self.min:.3f}, '
                f'max={self.max:.3f}, avg={self.avg:.3f})')


def clear_kernel_profiler_info():
    """Forget every recorded launch."""
    _records.clear()


state.init_hooks.append(clear_kernel_profiler_info)


def query_kernel_profiler_info(name):
    """Launches of the kernel `name` so far: counter, and min/max/avg milliseconds (zeros when
    it never ran while profiling)."""
    ts = _records.get(name, [])
    if not ts:
        return KernelProfilerQueryResult(0, 0.0, 0.0, 0.0)
    ms = [t * 1e3 for t in ts]
    return KernelProfilerQueryResult(len(ms), min(ms), max(ms), sum(ms) / len(ms))


def get_kernel_profiler_total_time():
    """Seconds spent in profiled launches."""
    return sum(sum(ts) for ts in _records.values())


def set_kernel_profiler_toolkit(toolkit_name='default'):
    """Only the 'default' toolkit (host-measured times) exists: True for it, False otherwise."""
    return toolkit_name == 'default'


def print_kernel_profiler_info(mode='count'):
    """Print the recorded launches: per kernel ('count') or one line per launch ('trace')."""
    if mode not in ('count', 'trace'):
        raise VkdiffValueError(f"print_kernel_profiler_info: mode must be 'count' or 'trace', "
                               f"got {mode!r}")
    bar = '=' * 79
    title = f'Kernel Profiler({mode}, default) @ Vulkan; times are host-measured (no timestamp queries)'
    if not enabled() and not _records:
        print(f'{bar}\n{title}\n{bar}\nthe kernel profiler is off: ti.init(kernel_profiler=True)'
              f'\n{bar}')
        return
    total = get_kernel_profiler_total_time()
    lines = [bar, title, bar]
    if mode == 'count':
        lines += ['[      %     total   count |      min       avg       max   ] Kernel name',
                  '-' * 79]
        rows = sorted(_records.items(), key=lambda kv: -sum(kv[1]))
        for name, ts in rows:
            q = query_kernel_profiler_info(name)
            pct = 100.0 * sum(ts) / total if total else 0.0
            lines.append(f'[{pct:6.2f}% {sum(ts):7.3f} s {q.counter:6d}x |{q.min:9.3f} '
                         f'{q.avg:9.3f} {q.max:9.3f} ms] {name}')
    else:
        lines += ['[      % |     time    ] Kernel name', '-' * 79]
        for name, ts in _records.items():
            for t in ts:
                pct = 100.0 * t / total if total else 0.0
                lines.append(f'[{pct:6.2f}% |{t * 1e3:9.3f}  ms] {name}')
    n = sum(len(ts) for ts in _records.values())
    lines += ['-' * 79, f'[100.00%] Total execution time: {total:9.3f} s   number of results: '
              f'{n}', bar]
    print('\n'.join(lines))


def memory_profiler_info():
    """{SNode path: (bytes reserved, bytes in use)} of every pointer SNode whose blocks come from
    a device pool (lang/blockpool.py): reserved counts the pools and tables, in use the blocks
    of active cells and the tables. vkdiff's own (Taichi has only the printing function)."""
    return blockpool.memory_info()


def print_memory_profiler_info():
    """Taichi's ti.profiler.print_memory_profiler_info(): here, per pooled pointer SNode, the
    bytes reserved and the bytes in use (memory_profiler_info())."""
    info = memory_profiler_info()
    print('vkdiff memory profiler: pooled pointer SNodes (bytes reserved / in use)')
    if not info:
        print('  (none: every SNode is stored densely)')
    for node, (reserved, used) in info.items():
        print(f'  {node}: {reserved} reserved, {used} in use ({reserved / 2**20:.2f} / '
              f'{used / 2**20:.2f} MiB)')
