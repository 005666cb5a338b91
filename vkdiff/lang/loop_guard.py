"""API stage glue for passes/loop_limit.py: on a driver with a loop limiter (lavapipe), the
pass guards a task's loops with the runtime's loop-status Buffer made here, and the sync that
reads a nonzero status back raises `LoopLimitError`."""
from .. import ir
from .. import types as T
from ..errors import LoopLimitError, located
from ..passes import loop_limit
from .binding import status_buffer


def status_field(rt):
    """The runtime's loop-status Buffer (made on first use): the loop limit pass's guards store
    the code of a loop the limiter ended into it; it is read back at each sync."""
    return status_buffer(rt, 'loop_flag',
                         lambda: ir.Buffer('loop_limit_status', T.i32, (), role='temp'), _report)


def _report(words):
    raise located(LoopLimitError,
                  'this loop was ended early by the Vulkan driver\'s loop limiter (lavapipe '
                  f'stops each shader invocation after {loop_limit.LIMIT:,} loop iterations in '
                  'total), so the kernel\'s results are incomplete. Use fewer iterations per '
                  'loop nest (e.g. a parallel outer loop, or a compile-time trip count, which '
                  'vkdiff unrolls).', loop_limit.LOCATIONS[int(words[()])])
