"""The worker side of a Pool (face floor): runs in the worker process, once at its start
(`start`: environment, `ti.init`, the user's `init`), then one `run` per task."""
import os

import vkdiff as ti

_state = {'init_calls': 0, 'placement': None}


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
    """ProcessPoolExecutor's initializer: take this worker's placement from the queue."""
    start(placements.get(), ti_init, init, init_args)


def init_calls():
    """How often this process ran start() (1 in a healthy worker)."""
    return _state['init_calls']


def info():
    """(pid, init calls, placement) of this worker."""
    return os.getpid(), _state['init_calls'], _state['placement']


def run(fn, item):
    return fn(item)
