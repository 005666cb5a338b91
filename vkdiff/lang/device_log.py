"""API stage glue for passes/device_log.py: the runtime's device log (made when the first kernel
that prints compiles), its storage, and its read-back. The log's head is a status storage of the
runtime: every sync that follows a launch writing it downloads it, and when records were written
this reads the records back and prints them, in the order the device appended them, to
sys.stdout (then a line saying how many records did not fit, if any). A launch of a kernel that
prints ends with a sync (as Taichi's CPU backend, whose kernels print before they return), so
kernel output and the host's own prints come in program order.

VKDIFF_PRINT_BUFFER_WORDS sets the log's capacity in 32-bit words (default 262,144: 1 MiB); a
record takes one word plus one per 32-bit value (two per 64-bit value)."""
import os
import sys

from ..passes.device_log import DEFAULT_CAPACITY, DeviceLog


def log_for(rt):
    """The runtime's DeviceLog (made on first use, with its storage registered for read-back)."""
    log = getattr(rt, 'device_log', None)
    if log is None:
        from .binding import temp_storage
        log = rt.device_log = DeviceLog(_capacity())
        head = temp_storage(log.head)
        head.for_host_overwrite()[:] = 0  # (device memory starts undefined)
        rt.status_checks.append((head, lambda: _read(log, head)))
    return log


def _capacity():
    env = os.environ.get('VKDIFF_PRINT_BUFFER_WORDS')
    if not env:
        return DEFAULT_CAPACITY
    try:
        n = int(env)
    except ValueError:
        n = 0
    if n < 16:
        from ..errors import VkdiffValueError
        raise VkdiffValueError(f'VKDIFF_PRINT_BUFFER_WORDS={env!r}: give a number of 32-bit '
                               'words, at least 16')
    return n


def _read(log, head):
    """After a sync: print the records the device appended, then empty the log."""
    from .binding import temp_storage
    h = head.host.copy()
    if not h.any():
        return
    data = temp_storage(log.data).for_host_read() if h[2] else ()
    records, dropped = log.decode(h, data)
    head.for_host_overwrite()[:] = 0
    out = sys.stdout
    for msg, values in records:
        out.write(msg.render(values))
    if dropped:
        out.write(f'[vkdiff] {dropped} print records were dropped: the kernel print buffer '
                  f'({log.capacity:,} words) was full. Print less per launch, or set '
                  'VKDIFF_PRINT_BUFFER_WORDS to a larger number of 32-bit words.\n')
    out.flush()
