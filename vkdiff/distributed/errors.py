"""vkdiff.distributed's exception types (face floor)."""
from ..errors import TaichiRuntimeError


class WorkerCrashedError(TaichiRuntimeError):
    """A worker process died (killed, crashed, out of memory) while it held a task: that task's
    result is lost, and the pool has replaced the worker (a RuntimeError)."""


class PoolClosedError(TaichiRuntimeError):
    """map() on a pool that was shut down (a RuntimeError)."""


class WorkerInitError(TaichiRuntimeError):
    """A worker's ti.init or the pool's init() raised: each task of the pool raises this, its
    message naming the worker's exception and holding the worker's traceback (a RuntimeError).
    The workers are not restarted (they would fail the same way)."""


class UnpicklableWorkerError(TaichiRuntimeError):
    """fn raised an exception that cannot travel back to the caller as it is (it does not pickle,
    or does not unpickle: e.g. an __init__ with other arguments than its args): its type,
    message and the worker's traceback, as text (a RuntimeError)."""
