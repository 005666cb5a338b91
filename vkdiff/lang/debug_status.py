"""API stage glue for passes/debug_checks.py (ti.init(debug=True)): the runtime's debug-status
Buffer the checks report into, read back at every sync that follows a launch writing it; a
reported violation raises there (KernelIndexError, TaichiAssertionError,
KernelZeroDivisionError) and the status is cleared, so the next launch starts clean. In debug
mode a kernel that has checks syncs at the end of its launch (as Taichi's debug mode does), so
the error comes from the kernel call that caused it."""
from ..passes import debug_checks
from .binding import status_buffer as _status_buffer


def status_buffer(rt):
    """The runtime's debug-status Buffer (made on first use)."""
    return _status_buffer(rt, 'debug_status', debug_checks.new_status, _report)


def reports(rt, buffers):
    """Does a task binding `buffers` report into the runtime's debug status?"""
    buf = getattr(rt, 'debug_status', None)
    return buf is not None and buf in buffers


def _report(words):
    err = debug_checks.error(words)
    if err is not None:
        raise err
