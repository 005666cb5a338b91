"""The worker side of a Pool (face floor): runs in the worker process, once at its start
(`start`: environment, `ti.init`, the user's `init`), then one `run` per task."""
import os
import pickle
import traceback

import vkdiff as ti

from .errors import UnpicklableWorkerError, WorkerInitError

_state = {'init_calls': 0, 'placement': None, 'init_error': None}


def start(placement, ti_init, init, init_args):
    """Set the worker's device and threads, then ti.init(**ti_init) and init(*init_args): once
    per worker process."""
    if placement is not None:
        os.environ.update(placement.env)
        if placement.device is not None:
            os.environ['VKDIFF_DEVICE'] = str(placement.device)
    ti.init(**(ti_init or {}))
    _state['init_calls'] += 1
    _state['placement'] = placement
    if init is not None:
        init(*init_args)


def start_from_queue(placements, ti_init, init, init_args):
    """ProcessPoolExecutor's initializer: take this worker's placement from the queue. An
    exception is kept for `run` to report (raised here, it would only be logged in the worker,
    and the executor would call the worker dead)."""
    try:
        start(placements.get(), ti_init, init, init_args)
    except Exception as e:  # noqa: BLE001 (any: it is reported to the caller by run)
        _state['init_error'] = (f'{_type_name(e)}: {e}', traceback.format_exc())


def init_calls():
    """How often this process ran start() (1 in a healthy worker)."""
    return _state['init_calls']


def info():
    """(pid, init calls, placement) of this worker."""
    return os.getpid(), _state['init_calls'], _state['placement']


def run(fn, item):
    """fn(item); an exception that would not arrive as it is becomes UnpicklableWorkerError."""
    if _state['init_error'] is not None:
        what, tb = _state['init_error']
        raise WorkerInitError(f'the worker (pid {os.getpid()}) failed to start: {what}\n'
                              f'worker traceback:\n{tb}')
    try:
        return fn(item)
    except Exception as e:
        try:
            pickle.loads(pickle.dumps(e))
        except Exception as why:  # noqa: BLE001 (whatever pickle raises)
            raise UnpicklableWorkerError(
                f'{_type_name(e)}: {e} (the exception cannot be sent back as it is: '
                f'{type(why).__name__}: {why})\nworker traceback:\n{traceback.format_exc()}') from None
        raise


def _type_name(e):
    t = type(e)
    return t.__qualname__ if t.__module__ == 'builtins' else f'{t.__module__}.{t.__qualname__}'
