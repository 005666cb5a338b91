"""vkdiff.distributed (face floor): many simulations at once, across processes, devices and
machines. A `Pool` of worker processes, each with its own vkdiff runtime (`ti.init` and the
user's `init()` run once per worker, not once per task):

    from vkdiff.distributed import Pool
    with Pool(init=setup, workers=4) as pool:              # backend='process' (default)
        results = pool.map(simulate, configurations)       # in the order of the items

    with Pool(init=setup, workers=8, backend='ray') as pool:  # Ray actors, one per worker
        results = pool.map(simulate, configurations)

`fn` and `init` must be importable functions (module level); results must be picklable (numpy
arrays are). A worker's exception is re-raised in the caller with its own type, the worker's
traceback chained as its cause. A worker that dies raises WorkerCrashedError and is replaced.
Devices: `placement.plan_workers` gives each worker its own Vulkan device where there are
several GPUs (GPU ids from Ray or CUDA_VISIBLE_DEVICES mapped to Vulkan devices by UUID), and
splits the cores (LP_NUM_THREADS) between workers on CPU drivers."""
from .errors import WorkerCrashedError, PoolClosedError
from .placement import Placement, plan_workers, vulkan_index_for_gpu
from .pool import Pool

__all__ = ['Pool', 'Placement', 'plan_workers', 'vulkan_index_for_gpu', 'WorkerCrashedError',
           'PoolClosedError']
