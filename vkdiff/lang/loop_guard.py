"""API stage glue for passes/loop_limit.py: on a driver with a loop limiter (lavapipe), plan the
unrolling of a task's loops, guard them with the runtime's loop-status field, and raise
`LoopLimitError` at the sync that reads a nonzero status back."""
from ..errors import LoopLimitError, located
from ..passes import loop_limit


def prepare(task, rt, per_thread):
    """Apply the pass to a task about to be compiled; returns the grid-stride iterations per
    invocation to use (1 when the task's inner loops are long, so that each invocation stays
    under the limit)."""
    if not loop_limit.has_limiter(rt.name) or not loop_limit.inner_loops(task):
        return per_thread
    loop_limit.drop_empty_loops(task.body)
    if not loop_limit.inner_loops(task):
        return per_thread
    est = loop_limit.plan_unroll(task, per_thread)
    if est > loop_limit.TARGET and per_thread > 1:
        per_thread = 1
        loop_limit.plan_unroll(task, 2)
    if est <= loop_limit.TARGET and loop_limit.all_trips_known(task):
        return per_thread  # provably far below the limit: no counters, no status read-back
    loop_limit.guard_loops(task, _flag(rt))
    return per_thread


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
