"""Pool(backend='ray') (face floor): one Ray actor per worker, each holding its own vkdiff
runtime, scheduled one task at a time per actor. GPUs are declared to Ray (num_gpus per actor);
inside the actor, the ids Ray hands out (ray.get_gpu_ids()) are mapped to the Vulkan device by
UUID (placement.plan_workers). On CPU drivers each actor takes `cores // workers` CPUs from Ray
and as many lavapipe threads. Runs unchanged on a cluster: ray.init(address='auto') joins one
started with `ray start --head` / `ray start --address=…`."""
import os

from . import worker
from .errors import WorkerCrashedError
from .placement import cuda_uuids, local_vulkan_devices, plan_workers


class RemoteTraceback(Exception):
    """The worker's traceback, chained as the cause of the exception re-raised in the caller."""

    def __init__(self, tb):
        super().__init__(tb)
        self.tb = tb

    def __str__(self):
        return self.tb


class _Actor:
    """The actor body (wrapped with ray.remote in RayWorkers)."""

    def __init__(self, ti_init, init, init_args, cpus):
        import ray  # noqa: PLC0415
        gpu_ids = [str(g) for g in ray.get_gpu_ids()]
        env = dict(os.environ)
        if not gpu_ids:
            env.pop('CUDA_VISIBLE_DEVICES', None)
        placement = plan_workers(1, local_vulkan_devices(), gpu_ids=gpu_ids or None,
                                 cuda_uuid_list=cuda_uuids() if gpu_ids else (),
                                 cores=cpus, env=env)[0]
        worker.start(placement, ti_init, init, init_args)

    def run(self, fn, item):
        return fn(item)

    def info(self):
        return worker.info()


class RayWorkers:
    def __init__(self, pool, workers, gpus_per_worker, ray_init):
        import ray  # noqa: PLC0415  (optional dependency: pip install vkdiff[ray])
        self.ray = ray
        if not ray.is_initialized():
            ray.init(**ray_init)
        res = ray.cluster_resources()
        gpus = int(res.get('GPU', 0))
        if gpus_per_worker is None:
            gpus_per_worker = 1 if gpus else 0
        if workers is None:
            workers = gpus // max(gpus_per_worker, 1) if gpus_per_worker else int(res.get('CPU', 1))
        self.size = max(1, workers)
        cpus = max(1, int(res.get('CPU', 1)) // self.size) if not gpus_per_worker else 1
        self._cls = ray.remote(_Actor).options(num_cpus=cpus, num_gpus=gpus_per_worker,
                                               max_restarts=0)
        self._args = (pool.ti_init, pool.init, pool.init_args, cpus)
        self.actors = [self._cls.remote(*self._args) for _ in range(self.size)]

    def map(self, fn, items):
        ray = self.ray
        results = [None] * len(items)
        free = list(range(self.size))
        inflight = {}  # ObjectRef -> (actor slot, item index)
        nxt = 0
        first_error = None
        crashed = None
        while nxt < len(items) or inflight:
            while free and nxt < len(items) and first_error is None and crashed is None:
                slot = free.pop()
                ref = self.actors[slot].run.remote(fn, items[nxt])
                inflight[ref] = (slot, nxt)
                nxt += 1
            if not inflight:
                break
            done, _ = ray.wait(list(inflight), num_returns=1)
            ref = done[0]
            slot, k = inflight.pop(ref)
            try:
                results[k] = ray.get(ref)
                free.append(slot)
            except ray.exceptions.RayTaskError as e:
                free.append(slot)
                if first_error is None or k < first_error[0]:
                    first_error = (k, e)
            except ray.exceptions.RayActorError as e:
                self.actors[slot] = self._cls.remote(*self._args)  # replaced: the pool recovers
                free.append(slot)
                crashed = crashed or (k, e)
        if crashed is not None:
            k, e = crashed
            raise WorkerCrashedError(f'a Ray worker died while it ran item {k} of {len(items)}; '
                                     f'its result is lost. The worker was replaced. ({e})') from None
        if first_error is not None:
            _, e = first_error
            cause = getattr(e, 'cause', None)
            if isinstance(cause, BaseException):
                raise cause from RemoteTraceback(str(getattr(e, 'traceback_str', e)))
            raise e
        return results

    def info(self):
        return [self.ray.get(a.info.remote()) for a in self.actors]

    def close(self):
        for a in self.actors:
            self.ray.kill(a)
        self.actors = []
