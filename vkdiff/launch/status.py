"""Launch floor: the runtime's status storages, read back at every sync that follows a launch
writing them -- the device log of kernel prints, the debug-mode checks' status, the loop
limiter's status (merged from lang/device_log.py, debug_status.py and loop_guard.py).

Device log (glue for passes/device_log.py): the runtime's device log (made when the first kernel
that prints compiles), its storage, and its read-back. The log's head is a status storage of the
runtime: every sync that follows a launch writing it downloads it, and when records were written
this reads the records back and prints them, in the order the device appended them, to
sys.stdout (then a line saying how many records did not fit, if any). A launch of a kernel that
prints ends with a sync (as Taichi's CPU backend, whose kernels print before they return), so
kernel output and the host's own prints come in program order.

VKDIFF_PRINT_SYNC=0 leaves that sync out (a printing launch then costs what any launch does): the
records wait on the device until the next sync (ti.sync(), a host read of a field, ti.reset(),
the end of the program), still in launch order, and the buffer holds the records of every launch
since the last sync. VKDIFF_PRINT_BUFFER_WORDS sets the log's capacity in 32-bit words (default
262,144: 1 MiB); a record takes one word plus one per 32-bit value (two per 64-bit value)."""
import atexit
import os
import sys

from .. import ir
from .. import types as T
from ..errors import LoopLimitError, VkdiffValueError, located
from ..lang import state
from ..lang.binding import status_buffer, temp_storage
from ..passes import debug_checks, loop_limit
from ..passes.device_log import DEFAULT_CAPACITY, DeviceLog


def print_sync_after(tasks):
    """Does a launch of these tasks end with a sync? (They print, and VKDIFF_PRINT_SYNC is not 0.)"""
    return os.environ.get('VKDIFF_PRINT_SYNC', '1') != '0' and any(
        s.op == 'print' for t in tasks for s in ir.walk(t.body))


def writes_log(rt, buffers):
    """Does a task binding `buffers` append to the runtime's device log (and VKDIFF_PRINT_SYNC
    is not 0)? (Prints the backend adds: debug mode's overflow messages.)"""
    log = getattr(rt, 'device_log', None)
    return (os.environ.get('VKDIFF_PRINT_SYNC', '1') != '0' and log is not None
            and log.head in buffers)


def log_for(rt):
    """The runtime's DeviceLog (made on first use, with its storage registered for read-back)."""
    log = getattr(rt, 'device_log', None)
    if log is None:
        log = rt.device_log = DeviceLog(_capacity())
        head, data = temp_storage(log.head), temp_storage(log.data)
        head.for_host_overwrite()[:] = 0  # (device memory starts undefined)

        def check():  # (holds the storages: ti.reset() forgets temporaries before it closes)
            _read(log, head, data)
        check.at_close = True  # ti.reset() and the end of the program print what is left
        rt.status_checks.append((head, check))
        _flush_at_exit()
    return log


_exit_hook = []


def _flush_at_exit():
    """At the end of the program, print the records still on the device (once registered)."""
    if _exit_hook:
        return

    def flush():
        if state.has_runtime():
            try:
                state.runtime().flush()
            except Exception as e:  # noqa: BLE001  (exiting: say it, do not raise)
                sys.stderr.write(f'vkdiff: at exit: {e}\n')
    _exit_hook.append(flush)
    atexit.register(flush)


def _capacity():
    env = os.environ.get('VKDIFF_PRINT_BUFFER_WORDS')
    if not env:
        return DEFAULT_CAPACITY
    try:
        n = int(env)
    except ValueError:
        n = 0
    if n < 16:
        raise VkdiffValueError(f'VKDIFF_PRINT_BUFFER_WORDS={env!r}: give a number of 32-bit '
                               'words, at least 16')
    return n


def _read(log, head, data):
    """After a sync: print the records the device appended, then empty the log."""
    h = head.host.copy()
    if not h.any():
        return
    records, dropped = log.decode(h, data.for_host_read() if h[2] else ())
    head.for_host_overwrite()[:] = 0
    out = sys.stdout
    for msg, values in records:
        out.write(msg.render(values))
    if dropped:
        out.write(f'[vkdiff] {dropped} print records were dropped: the kernel print buffer '
                  f'({log.capacity:,} words) was full. Print less per launch, or set '
                  'VKDIFF_PRINT_BUFFER_WORDS to a larger number of 32-bit words.\n')
    out.flush()


# ---- debug mode (glue for passes/debug_checks.py, ti.init(debug=True)) ----------------------
# The runtime's debug-status Buffer the checks report into, read back at every sync that follows
# a launch writing it; a reported violation raises there (KernelIndexError,
# TaichiAssertionError, KernelZeroDivisionError) and the status is cleared, so the next launch
# starts clean. In debug mode a kernel that has checks syncs at the end of its launch (as
# Taichi's debug mode does), so the error comes from the kernel call that caused it.

def debug_status_buffer(rt):
    """The runtime's debug-status Buffer (made on first use)."""
    return status_buffer(rt, 'debug_status', debug_checks.new_status, _debug_report)


def debug_reports(rt, buffers):
    """Does a task binding `buffers` report into the runtime's debug status?"""
    buf = getattr(rt, 'debug_status', None)
    return buf is not None and buf in buffers


def _debug_report(words):
    err = debug_checks.error(words)
    if err is not None:
        raise err


# ---- loop limiter (glue for passes/loop_limit.py) -----------------------------------------
# On a driver with a loop limiter (lavapipe), the pass guards a task's loops with the runtime's
# loop-status Buffer made here, and the sync that reads a nonzero status back raises
# `LoopLimitError`.

def loop_status_buffer(rt):
    """The runtime's loop-status Buffer (made on first use): the loop limit pass's guards store
    the code of a loop the limiter ended into it; it is read back at each sync."""
    return status_buffer(rt, 'loop_flag',
                         lambda: ir.Buffer('loop_limit_status', T.i32, (), role='temp'),
                         _loop_report)


def _loop_report(words):
    raise located(LoopLimitError,
                  'this loop was ended early by the Vulkan driver\'s loop limiter (lavapipe '
                  f'stops each shader invocation after {loop_limit.LIMIT:,} loop iterations in '
                  'total), so the kernel\'s results are incomplete. Use fewer iterations per '
                  'loop nest (e.g. a parallel outer loop, or a compile-time trip count, which '
                  'vkdiff unrolls).', loop_limit.LOCATIONS[int(words[()])])
