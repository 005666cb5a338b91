"""vkdiff.distributed's exception types (face floor)."""
from ..errors import TaichiRuntimeError


class WorkerCrashedError(TaichiRuntimeError):
    """A worker process died (killed, crashed, out of memory) while it held a task: that task's
    result is lost, and the pool has replaced the worker (a RuntimeError)."""


class PoolClosedError(TaichiRuntimeError):
    """map() on a pool that was shut down (a RuntimeError)."""
