"""API stage glue for passes/loop_limit.py: on a driver with a loop limiter (lavapipe), the
pass guards a task's loops with the runtime's loop-status field made here, and the sync that
reads a nonzero status back raises `LoopLimitError`."""
from ..errors import LoopLimitError, located
from ..passes import loop_limit


def status_field(rt):
    """The runtime's loop-status field (made on first use): the loop limit pass's guards store
    the code of a loop the limiter ended into it; `_check` reads it back at each sync."""
    return _flag(rt)


def _flag(rt):
    f = getattr(rt, 'loop_flag', None)
    if f is None:
        from .field import Field
        f = rt.loop_flag = Field('i32', (), name='loop_limit_status')
        f.is_temporary = True
        st = f.storage
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
