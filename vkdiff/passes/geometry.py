"""Pass helper (on a parallel task's final IR, after loop_limit): the geometry task of a task
whose trip count only the device knows at launch (`n = num_particles[None]; for i in range(n)`
with the field last written by a kernel).

The geometry task is a serial task (one invocation) that evaluates the trip count from the same
statements the task's prologue evaluates it from (clones: constants, kernel arguments, integer
arithmetic, loads of fields the task does not write), turns it into a workgroup count and stores
(x, 1, 1) into a 3-word Buffer; the launcher records it, then the task as an indirect dispatch
(vkCmdDispatchIndirect) from that Buffer (launch/compiled.py, runtime/program.py). So the launch
fits the bound without a read-back: 0 iterations launch 0 workgroups (a reduction 2, see below).

Workgroups, for n iterations (n clamped to [0, max_groups * local_size * per_thread]):
    ceil(n / local_size), clamped to [lo, max_groups]
and with grid-stride iterations per invocation (a CPU driver's geometry, per_thread > 1) no
more than max(min_groups, ceil(n / (local_size * per_thread))), as launch.compiled's host-side
geometry computes. A reducing task (passes/reduction.py) gets at least 2 workgroups: launched as
one workgroup it would apply its sum itself, and the launcher, not knowing the count, runs the
finishing tasks that add the partials anyway.
"""
from .. import ir
from .. import types as T
from .tasks import Task

WORDS = 3  # x, y, z of VkDispatchIndirectCommand


def unsupported(task):
    """Why the geometry task of `task` cannot compute its trip count (a string), or None. The
    trip count must not depend on values only the task computes (a local variable, an atomic's
    old value, a random number, invocation indices) or on a field the task writes."""
    total = task.loop.args[0]
    if not total.dtype.is_int:
        return f'the trip count is {total.dtype}'
    _, writes = task.accesses()
    for s in ir.dependencies([total]):
        if s.op == 'gload':
            if s.buf in writes or s.buf.role == 'shared':
                return f'the trip count reads {s.buf.name}, which the loop writes'
        elif s.op not in ir.PURE:
            return f'the trip count depends on a {s.op} only the task computes'
    return None


def geometry_task(task, local_size, max_groups, min_groups=1, per_thread=1):
    """(the geometry Task of the parallel `task`, its 3-word i32 output Buffer), or None where
    `unsupported(task)` says why it cannot be made."""
    if unsupported(task) is not None:
        return None
    reduction = bool(task.loop.attrs.get('groups'))
    lo = 2 if reduction else 0
    if max_groups < lo:
        return None
    total = task.loop.args[0]
    body = ir.Block()
    mapping = {}
    for s in ir.dependencies([total]):
        body.append(ir.clone_stmt(s, mapping))
    n = mapping[total]

    def emit(op, *args):
        return body.append(ir.Stmt(op, T.i32, list(args)))

    def const(v):
        return body.append(ir.const(v, T.i32))

    if n.dtype is not T.i32:
        n = emit('cast', n)
    # no more iterations than the most workgroups run (and no i32 overflow below)
    cap = min(max_groups * local_size * per_thread, 2 ** 31 - 1 - local_size * per_thread)
    n = emit('min', emit('max', n, const(0)), const(cap))
    groups = emit('floordiv', emit('add', n, const(local_size - 1)), const(local_size))
    if per_thread > 1:
        chunk = local_size * per_thread
        fill = emit('floordiv', emit('add', n, const(chunk - 1)), const(chunk))
        groups = emit('min', groups, emit('max', fill, const(min_groups)))
    if lo:
        groups = emit('max', groups, const(lo))
    groups = emit('min', groups, const(max_groups))
    out = ir.Buffer(f'{task.name}.geometry', T.i32, (WORDS,), role='temp')
    for k, v in enumerate((groups, const(1), const(1))):
        body.append(ir.Stmt('gstore', None, [const(k), v], {'buf': out, 'comp': 0}))
    return Task('serial', body, f'{task.name}_geometry'), out
