"""vkdiff.distributed.Pool (face floor): worker processes, each with its own vkdiff runtime.
backend='process' uses concurrent.futures with spawned processes (Vulkan state is never
forked); backend='ray' uses one Ray actor per worker (ray_backend.py)."""
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from ..errors import VkdiffError
from . import worker
from .errors import PoolClosedError, WorkerCrashedError
from .placement import local_vulkan_devices, plan_workers
from .ray_backend import RayWorkers  # (ray itself loads only for backend='ray')

BACKENDS = ('process', 'ray')


class PoolArgumentError(VkdiffError, ValueError):
    """A Pool given a wrong argument (a ValueError)."""


def check_importable(fn, what):
    """Workers receive functions by reference (module and name): refuse what they cannot import."""
    if not callable(fn):
        raise PoolArgumentError(f'{what} must be a function, not {type(fn).__name__}')
    qual = getattr(fn, '__qualname__', '')
    if '<lambda>' in qual or '<locals>' in qual or getattr(fn, '__module__', None) is None:
        raise PoolArgumentError(f'{what} {qual or fn!r} is not importable by a worker process: '
                                'define it at module level')
    if fn.__module__ == '__main__' and not _main_is_importable():
        raise PoolArgumentError(f'{what} {qual} lives in an interactive __main__: move it into '
                                'a module')


def _main_is_importable():
    import __main__  # noqa: PLC0415
    return bool(getattr(__main__, '__file__', None))


class Pool:
    """Pool(init=None, workers=N, backend='process' | 'ray', init_args=(), ti_init=None,
    gpus_per_worker=None, placements=None). `ti_init`: keyword arguments of each worker's
    ti.init. `placements`: one Placement per worker (default: placement.plan_workers over this
    machine's Vulkan devices). With backend='ray', `ray_init`: keyword arguments of ray.init
    when Ray is not initialised yet (address='auto' joins a cluster started with `ray start`)."""

    def __init__(self, init=None, workers=None, backend='process', *, init_args=(),
                 ti_init=None, gpus_per_worker=None, placements=None, ray_init=None):
        if backend not in BACKENDS:
            raise PoolArgumentError(f"backend must be one of {BACKENDS}, not {backend!r}")
        if init is not None:
            check_importable(init, 'init')
        if workers is not None and (not isinstance(workers, int) or workers < 1):
            raise PoolArgumentError(f'workers must be a positive int, not {workers!r}')
        self.backend = backend
        self.init, self.init_args, self.ti_init = init, tuple(init_args), dict(ti_init or {})
        self.closed = False
        if backend == 'ray':
            self._impl = RayWorkers(self, workers, gpus_per_worker, ray_init or {})
        else:
            if placements is None:
                devices = local_vulkan_devices()
                n = workers or max(1, sum(d.device_type in ('discrete-gpu', 'integrated-gpu')
                                          for d in devices)) or os.cpu_count()
                placements = plan_workers(n, devices)
            self.placements = list(placements)
            self._impl = ProcessWorkers(self)
        self.workers = self._impl.size

    def map(self, fn, items):
        """[fn(item) for item in items], run by the workers, in the order of the items."""
        if self.closed:
            raise PoolClosedError('map() on a Pool that was shut down')
        check_importable(fn, 'fn')
        return self._impl.map(fn, list(items))

    def worker_info(self):
        """[(pid, ti.init calls, placement)] of the workers, as they report it."""
        return self._impl.info()

    def close(self):
        if not self.closed:
            self.closed = True
            self._impl.close()

    shutdown = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class ProcessWorkers:
    """Spawned worker processes under a ProcessPoolExecutor; a dead worker breaks the executor,
    which is then replaced whole (each new worker runs ti.init and init once)."""

    def __init__(self, pool):
        self.pool = pool
        self.size = len(pool.placements)
        self.executor = self._start()

    def _start(self):
        ctx = multiprocessing.get_context('spawn')
        queue = ctx.SimpleQueue()
        for p in self.pool.placements:
            queue.put(p)
        return ProcessPoolExecutor(self.size, mp_context=ctx, initializer=worker.start_from_queue,
                                   initargs=(queue, self.pool.ti_init, self.pool.init,
                                             self.pool.init_args))

    def map(self, fn, items):
        futures = [self.executor.submit(worker.run, fn, it) for it in items]
        results = []
        try:
            for k, f in enumerate(futures):
                try:
                    results.append(f.result())
                except BrokenProcessPool as e:
                    self._restart()
                    raise WorkerCrashedError(
                        f'a worker process died while the pool ran item {k} of {len(items)} '
                        f'(or an earlier one); its result is lost. The workers were restarted. '
                        f'({e})') from None
        finally:
            for f in futures:
                f.cancel()
        return results

    def _restart(self):
        self.executor.shutdown(wait=True, cancel_futures=True)
        self.executor = self._start()

    def info(self):
        # one probe per worker is not guaranteed to reach every worker: ask twice as often
        seen = {}
        for r in self.map(_probe, range(self.size * 4)):
            seen[r[0]] = r
        return sorted(seen.values())

    def close(self):
        self.executor.shutdown(wait=True, cancel_futures=True)


def _probe(_):
    import time  # noqa: PLC0415
    time.sleep(0.05)
    return worker.info()
