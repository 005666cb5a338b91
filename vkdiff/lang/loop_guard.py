"""API stage glue for passes/loop_limit.py: on a driver with a loop limiter (lavapipe), the
pass guards a task's loops with the runtime's loop-status Buffer made here, and the sync that
reads a nonzero status back raises `LoopLimitError`."""
from ..errors import LoopLimitError, located
from ..passes import loop_limit


def status_field(rt):
    """The runtime's loop-status Buffer (made on first use): the loop limit pass's guards store
    the code of a loop the limiter ended into it; `_check` reads it back at each sync."""
    return _flag(rt)


def _flag(rt):
    f = getattr(rt, 'loop_flag', None)
    if f is None:
        from .. import ir
        from .. import types as T
        from .binding import temp_storage
        f = rt.loop_flag = ir.Buffer('loop_limit_status', T.i32, (), role='temp')
        st = temp_storage(f)
        rt.status_checks.append((st, lambda: _check(st)))
    return f


def _check(st):
    code = int(st.host[()])
    if code:
        st.for_host_overwrite()[()] = 0
        raise located(LoopLimitError,
                      'this loop was ended early by the Vulkan driver\'s loop limiter (lavapipe '
                      f'stops each shader invocation after {loop_limit.LIMIT:,} loop iterations in '
                      'total), so the kernel\'s results are incomplete. Use fewer iterations per '
                      'loop nest (e.g. a parallel outer loop, or a compile-time trip count, which '
                      'vkdiff unrolls).', loop_limit.LOCATIONS[code])
