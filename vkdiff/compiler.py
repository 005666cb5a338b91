"""Compiler stage: the one pipeline from a kernel's IR to SPIR-V, as a named list of passes
(PIPELINE below; this text is made from it):

    {pipeline}

Each pass is a function from IR to IR (a list of `passes.tasks.Task`) with a `CompileOptions`
passed in: nothing here reads global state (ti.init's config, the device). The API layer
(launch/compiled.py) builds the options from ti.init's config and the runtime, runs the passes
through these functions, then binds and launches what `backend` returns. The backend passes
(BACKEND_PASSES, run by `run_ir_passes`) each return a new task list.

{passes}

The IR can be printed after any pass: `VKDIFF_PRINT_IR=lower,adjoint` (or `all`) or
`ti.init(print_ir=...)` print it to stderr while compiling; `kernel.ir(*args, after='lower')`
returns it as text. With VKDIFF_VERIFY_IR set (the test suite sets it), the IR verifier
(passes/verify.py) checks the tasks after every pass.
"""
import dataclasses
import os
import sys
from typing import Callable, Optional

from . import ir
from . import types as T
from .codegen import tools
from .codegen.atomics import fields_needing_int_view
from .codegen.spirv import LOCAL_SIZE, TaskCodegen
from .errors import AutodiffError, CompileError, VkdiffValueError, located
from .passes import debug_checks as _debug_checks
from .passes import geometry as _geometry
from .passes import loop_limit as _loop_limit
from .passes.host_eval import host_eval
from .passes.device_log import DeviceLog, lower_prints
from .passes.lower import lower_task
from .passes.forward_globals import forward_globals
from .passes.reduction import optimize_reductions
from .passes.tasks import split_tasks as _split_tasks
from .passes.verify import verify_tasks


@dataclasses.dataclass(frozen=True)
class CompileOptions:
    """Everything the passes and codegen need to know about the target and the user's settings.

    features / limits: the device's (runtime.program.Runtime names them); driver_id (a
    runtime.devices.DRIVER_IDS name, from VkPhysicalDeviceDriverProperties.driverID) picks
    driver workarounds (the loop limiter of llvmpipe); device_name is for messages only. The
    CPU-driver geometry: grid-stride iterations per invocation and the workgroups a reduction
    uses. loop_status: a callable
    returning the status Buffer the loop guards store into (the API layer makes it and reads it
    back after launches; without one, each guarded task gets a temporary of its own).
    device_log: a callable returning the passes.device_log.DeviceLog that `print` statements
    append records to (the API layer binds and reads it; without one, a fresh one per task).
    debug: ti.init(debug=True), the debug_checks pass runs; check_out_of_bound (which debug
    implies, as in Taichi): it runs with its index and exponent checks only (no zero divisors);
    debug_status: like loop_status, the status Buffer its checks report into.
    print_ir: the names of the passes whose output is printed to stderr.
    fast_math: ti.init(fast_math=...). False: f32 math is vkdiff's own (the op table's `f32`
    column, in `lower`) and every float operation carries NoContraction (codegen)."""
    device_name: str = 'offline'
    driver_id: str = 'unknown'
    features: dict = dataclasses.field(default_factory=dict)
    limits: dict = dataclasses.field(default_factory=dict)
    cpu_driver: bool = False
    iters_per_thread: int = 1
    min_groups: int = 1
    max_groups: int = 65535
    reduction_groups: int = 1024
    ad_stack_size: int = 0
    debug: bool = False
    check_out_of_bound: bool = False
    default_fp: T.DataType = T.f32
    default_ip: T.DataType = T.i32
    print_ir: frozenset = frozenset()
    loop_status: Optional[Callable] = None
    device_log: Optional[Callable] = None
    debug_status: Optional[Callable] = None
    fast_math: bool = True


def lavapipe_like(**changes):
    """Options of Mesa's lavapipe (llvmpipe, LLVM 15, 256 bits) as this machine's driver
    reports it, without opening a device: device-free compiler tests compile against it."""
    base = CompileOptions(
        device_name='llvmpipe (LLVM 15.0.6, 256 bits)', driver_id='mesa-llvmpipe',
        features={'float32_atomic_add': True, 'float32_atomic_minmax': True, 'float64': True,
                  'float64_atomic_add': False, 'int64': True, 'int64_atomics': True,
                  'subgroup_arithmetic': True, 'subgroup_ballot': True, 'subgroup_basic': True,
                  'subgroup_shuffle': True, 'subgroup_vote': True, 'texel_reads': True},
        limits={'max_push_constants_size': 128, 'max_shared_memory_size': 32768,
                'max_storage_buffer_range': 134217728, 'max_storage_buffers_per_stage': 32,
                'max_workgroup_count_x': 65535, 'max_workgroup_invocations': 1024,
                'max_workgroup_size_x': 1024, 'max_texel_buffer_elements': 134217728,
                'max_storage_texel_buffers_per_stage': 64},
        cpu_driver=True, iters_per_thread=32, min_groups=8, max_groups=65535,
        reduction_groups=64)
    return dataclasses.replace(base, **changes)


def parse_print_ir(spec):
    """The pass names that `spec` (VKDIFF_PRINT_IR / ti.init(print_ir=...)) asks to print: a
    comma-separated string or a sequence of names, 'all' or True for every pass, '' / None /
    False for none. An unknown name is a VkdiffValueError listing the valid ones."""
    if spec is None or spec is False or spec == '':
        return frozenset()
    if spec is True:
        return frozenset(PASSES)
    names = spec.split(',') if isinstance(spec, str) else list(spec)
    names = [str(n).strip() for n in names if str(n).strip()]
    if 'all' in names:
        return frozenset(PASSES)
    bad = [n for n in names if n not in PASSES]
    if bad:
        raise VkdiffValueError(f'print_ir: unknown pass name(s) {", ".join(map(repr, bad))}; '
                               f'the passes are {", ".join(PASSES)} (or all)')
    return frozenset(names)


def check_pass(name):
    """`name` if it names a pass, else a VkdiffValueError listing them."""
    if name not in PASSES:
        raise VkdiffValueError(f'unknown pass {name!r}; the passes are {", ".join(PASSES)}')
    return name


def format_tasks(tasks):
    """The IR of tasks as text, each task's statements numbered from %0 (tasks share no
    statements: each is its own shader)."""
    return '\n'.join(t.ir(ir.Names()) for t in tasks)


def _show(options, name, what, tasks=None, text=None):
    if name in options.print_ir:
        body = format_tasks(tasks) if text is None else text
        sys.stderr.write(f'# ---- {what}: IR after {name}\n{body}\n')


# ---------------------------------------------------------------- IR -> IR passes
def split_tasks(body, name, options):
    """Pass split_tasks: a kernel body -> its tasks."""
    tasks = _split_tasks(body, name)
    _show(options, 'split_tasks', name, tasks)
    _verify(tasks, 'split_tasks')
    return tasks


_LANE_OPS = frozenset(('sg_shuffle', 'sg_ballot', 'sg_vote', 'sg_all_equal',
                       'sg_broadcast_first'))


def _refuse_block_memory(tasks):
    """Autodiff of ti.simt.block shared arrays / sync, and of float local vectors held in arrays
    (more than frontend.lvalues.ARRAY_MIN_ENTRIES entries), is not supported: a clear error."""
    for t in tasks:
        for s in ir.walk(t.body):
            if s.op in _LANE_OPS:
                raise located(AutodiffError, 'ti.simt.warp / ti.simt.subgroup operations cannot '
                              'be differentiated (no derivative rule exchanges values between '
                              'lanes)', s.loc)
            if s.op == 'barrier' or (s.buf is not None and s.buf.role == 'shared'):
                raise located(AutodiffError, 'ti.simt.block.SharedArray / sync() cannot be '
                              'differentiated (no gradient of workgroup memory)', s.loc)
            if (s.op == 'alloca' and s.attrs.get('user_array') or s.buf is not None and
                    s.buf.meta.get('user_array')) and s.dtype is not None and s.dtype.is_float:
                raise located(AutodiffError, 'a local float vector/matrix of more than 64 '
                              'entries cannot be differentiated; use a field', s.loc)


def adjoint(tasks, name, options):
    """Pass adjoint: tasks -> (their adjoint tasks, the overflow flags of run-time sized
    per-iteration storage, see autodiff/reverse.py)."""
    # deferred: reverse-mode autodiff loads with the first adjoint
    from .autodiff.reverse import adjoint_tasks
    _refuse_block_memory(tasks)
    adj, flags = adjoint_tasks(tasks, name, options.ad_stack_size)
    _show(options, 'adjoint', name + '.grad', adj)
    _verify(adj, 'adjoint')
    return adj, flags


def tangent(tasks, name, options):
    """Pass tangent: tasks -> their forward-mode (JVP) tasks."""
    # deferred: forward-mode autodiff loads with the first tangent
    from .autodiff.forward import tangent_tasks
    _refuse_block_memory(tasks)
    tan = tangent_tasks(tasks)
    _show(options, 'tangent', name + '.jvp', tan)
    _verify(tan, 'tangent')
    return tan


def debug_checks(task, name, options):
    """Pass debug_checks, on one task (in place; nothing unless options.debug or
    options.check_out_of_bound): run-time checks of indices, integer divisors (debug only) and
    the frontend's `check` statements, reported in kernel `name`'s messages."""
    if options.debug or options.check_out_of_bound:
        _debug_checks.apply(task, name, options, options.debug_status or _debug_checks.new_status)
    return task


def lower(task, options):
    """Pass lower, on one task (changed in place, and returned): `print` statements become
    appends to the device log (passes/device_log.py), then the op lowerings and feature checks."""
    lower_prints(task, options.device_log or DeviceLog, options.features)
    lower_task(task, options.features, options.fast_math)
    return task


def reductions(task, options):
    """Pass reductions: one task -> the tasks it becomes."""
    return optimize_reductions(task, options.features, options.reduction_groups,
                               options.cpu_driver,
                               options.limits.get('max_storage_buffers_per_stage'),
                               one_group=LOCAL_SIZE)


def loop_limit(task, options):
    """Pass loop_limit, on one task (in place): returns the grid-stride iterations per
    invocation its launch uses."""
    per_thread = options.iters_per_thread if options.cpu_driver else 1
    if task.loop is not None and task.loop.attrs.get('block_dim'):
        per_thread = 1  # ti.simt.block: one workgroup per block of iterations
    status = options.loop_status or _new_status
    return _loop_limit.apply(task, per_thread, options.driver_id, status)


def _new_status():
    """Without a launcher's status Buffer (device-free compiles): a temporary of the task's own."""
    return ir.Buffer('loop_limit_status', T.i32, (), role='temp')


# ---------------------------------------------------------------- the pipeline, written once
# The backend passes, in order, each (tasks, kernel name, options) -> a new task list. The first
# works on copies: the tasks it is given stay as they are (autodiff reads them again).
def _debug_checks_pass(tasks, name, options):
    """ti.init(debug=True) only: bounds, zero divisors, asserts (passes/debug_checks.py);
    ti.init(check_out_of_bound=True): the bounds only."""
    return [debug_checks(t.clone(), name or t.name, options) for t in tasks]


def _lower_pass(tasks, name, options):
    """prints into device-log appends (passes/device_log.py), f64 math, wide types, checks
    against the device's features (passes/lower.py)."""
    return [lower(t, options) for t in tasks]


def _reductions_pass(tasks, name, options):
    """accumulations into workgroup sums and partials (passes/reduction.py)."""
    return [u for t in tasks for u in reductions(t, options)]


def _forward_globals_pass(tasks, name, options):
    """global loads of values the invocation already has are reused, atomics whose old value
    it has become stores (passes/forward_globals.py)."""
    for t in tasks:
        forward_globals(t)
    return list(tasks)


def _loop_limit_pass(tasks, name, options):
    """unrolling and loop guards on a driver with a loop limiter (passes/loop_limit.py); each
    task's `per_thread`: the grid-stride iterations per invocation its launch uses."""
    for t in tasks:
        t.per_thread = loop_limit(t, options)
    return list(tasks)


def _codegen_doc():
    """SPIR-V assembly (codegen/spirv.py), then spirv-as/spirv-opt (codegen/tools.py)."""


BACKEND_PASSES = (('debug_checks', _debug_checks_pass), ('lower', _lower_pass),
                  ('reductions', _reductions_pass), ('forward_globals', _forward_globals_pass),
                  ('loop_limit', _loop_limit_pass))
# every pass, in order: split_tasks, then the adjoint or the tangent where one is asked for, then
# the backend passes and codegen (`backend`)
PIPELINE = (('split_tasks', split_tasks), ('adjoint', adjoint), ('tangent', tangent)) + \
    BACKEND_PASSES + (('codegen', _codegen_doc),)
PASSES = tuple(n for n, _ in PIPELINE)
BACKEND = tuple(n for n, _ in BACKEND_PASSES) + ('codegen',)


def _describe(pipeline):
    """The pipeline as the module docstring shows it: the order, then each pass's summary."""
    order = ' -> '.join('(adjoint | tangent)' if n == 'adjoint' else n
                        for n, _ in pipeline if n != 'tangent')
    rows = []
    for n, fn in pipeline:
        text = ' '.join((fn.__doc__ or '').split())
        text = text.split('Pass ' + n + ': ', 1)[-1]
        rows.append(f'  {n:<16}{text}')
    return order, '\n'.join(rows)


__doc__ = __doc__.replace('{pipeline}', _describe(PIPELINE)[0]).replace(
    '{passes}', _describe(PIPELINE)[1])


def _verify(tasks, after):
    if os.environ.get('VKDIFF_VERIFY_IR'):
        verify_tasks(tasks, after)


# ---------------------------------------------------------------- backend
class TaskCode:
    """One task compiled: its final IR, the Buffers it binds (in binding order), its SPIR-V
    (assembly and binary) and its launch geometry. The launcher binds and dispatches it."""

    def __init__(self, task, per_thread, push, options):
        self.task = task
        self.per_thread = per_thread
        self.cpu_driver = options.cpu_driver
        self.min_groups = options.min_groups if options.cpu_driver else 1
        self.buffers = task.buffers()
        if push.spill is not None:  # kernel arguments beyond the push constants (PushLayout)
            self.buffers.append(push.spill)
        limit = options.limits.get('max_storage_buffers_per_stage')
        if limit and len(self.buffers) > limit:
            loop = task.loop
            raise located(CompileError,
                          f'this {"loop" if loop is not None else "kernel part"} uses '
                          f'{len(self.buffers)} fields (gradients, duals and kernel-internal '
                          f'temporaries included), more than this device binds to one shader '
                          f'({limit}); split it into several kernels or loops',
                          (loop or next(iter(ir.walk(task.body)), None)).loc
                          if (loop or task.body.stmts) else None)
        self.read_fields, self.write_fields = task.accesses()
        if push.spill is not None:
            self.read_fields.append(push.spill)
        int_view = fields_needing_int_view(list(ir.walk(task.body)), options.features)
        self.total = task.loop.args[0] if task.kind == 'parallel' else None
        # the trip count is known at compile time (no loads, no arguments)
        self.known = self.total is not None and all(
            x.op != 'gload' and x.op != 'arg' for x in ir.dependencies([self.total]))
        lim = options.limits
        self.local_size = 1 if task.kind == 'serial' else workgroup_size(task, lim, self.total,
                                                                          self.known)
        cg = TaskCodegen(task, self.buffers, push, options.features, int_view, self.local_size,
                         options.cpu_driver, texel_limit=options.features.get('texel_reads') and
                         lim.get('max_texel_buffer_elements', 0),
                         max_texel_views=lim.get('max_storage_texel_buffers_per_stage', 0),
                         no_contraction=not options.fast_math)
        self.asm = cg.generate()
        # storage texel buffer views the runtime binds after the buffers: [(buffer index,
        # VkFormat)] (codegen/memory.py plan_texels)
        self.texels = cg.texel_bindings
        self.binary = None  # set by backend() once the SPIR-V tools ran
        # a serial task that adds a reduction's per-workgroup partials (passes.reduction): not
        # launched when the reduction ran as one workgroup, which then adds its sum itself
        self.finishing = getattr(task, 'finishes', None) is not None
        self.max_groups = min(options.limits.get('max_workgroup_count_x', 65535),
                              options.max_groups)
        if self.total is not None and task.loop.attrs.get('groups'):
            # a reduction: its partials have room for this many workgroups at most
            self.max_groups = min(self.max_groups, task.loop.attrs['groups'])


def workgroup_size(task, limits, total, known):
    """Invocations per workgroup of a parallel task, within the device's limits
    (maxComputeWorkGroupInvocations and maxComputeWorkGroupSize[0]; SwiftShader's are 256).
    `ti.loop_config(block_dim=B)` with ti.simt.block memory or sync() makes B iterations one
    workgroup: a B above the limit is a CompileError (clamping it would change which iterations
    share memory and barriers). Otherwise the size is a choice of vkdiff's, clamped."""
    cap = min(limits.get('max_workgroup_invocations', LOCAL_SIZE),
              limits.get('max_workgroup_size_x', LOCAL_SIZE)) or LOCAL_SIZE
    block = task.loop.attrs.get('block_dim')
    if block:
        if block > cap:
            raise located(CompileError,
                          f'ti.loop_config(block_dim={block}) makes workgroups of {block} '
                          f'invocations, more than this device allows (maxComputeWorkGroup'
                          f'Invocations / maxComputeWorkGroupSize[0]: {cap}); use block_dim <= '
                          f'{cap}', task.loop.loc)
        return block
    return min(fitted_local_size(total, known), cap)


def fitted_local_size(total, known):
    """Invocations per workgroup of a parallel task (a serial task's is 1): LOCAL_SIZE, or for a
    trip count known at compile time below it, the power of two that fits it (a CPU driver runs
    every invocation of a workgroup, active or not: a loop of 32 iterations in a 128-wide
    workgroup costs lavapipe four times its work, and its workgroup sums wait at barriers for 16
    SIMD rows, not 4)."""
    n = host_eval(total, ()) if known else None
    if n is None or n >= LOCAL_SIZE:
        return LOCAL_SIZE
    fit = 1
    while fit < n:
        fit *= 2
    return fit


def run_ir_passes(tasks, options, until=None, name=None, show=None):
    """The backend's IR passes (BACKEND_PASSES, in order) on copies of `tasks` (of the kernel
    `name`): a list of (task, grid-stride iterations per invocation), stopping after the pass
    `until`. show(pass name, tasks): called after each pass (printing its IR)."""
    for pname, run in BACKEND_PASSES:
        tasks = run(tasks, name, options)
        if show is not None:
            show(pname, tasks)
        _verify(tasks, pname)
        if pname == until:
            break
    return [(t, getattr(t, 'per_thread', 1)) for t in tasks]


def backend(name, tasks, push, options):
    """The backend passes and codegen on copies of `tasks` (kept unchanged for autodiff): the
    TaskCodes, SPIR-V binaries included, in launch order. Each pass's IR is printed as it is
    made (options.print_ir): the passes run once."""
    done = run_ir_passes(tasks, options, name=name,
                         show=lambda p, ts: _show(options, p, name, ts))
    codes = [TaskCode(t, per, push, options) for t, per in done]
    for c, binary in zip(codes, _compile_all([c.asm for c in codes])):
        c.binary = binary
    if 'codegen' in options.print_ir:
        _show(options, 'codegen', name, text=codegen_text(codes))
    return codes


def geometry(code, push, options):
    """The TaskCode of the geometry task of `code` (a parallel task whose trip count only the
    device knows at launch; passes/geometry.py) and its output Buffer, or None where the trip
    count depends on values only the task computes."""
    made = _geometry.geometry_task(code.task, code.local_size, code.max_groups,
                                   code.min_groups, code.per_thread)
    if made is None:
        return None
    task, out = made
    gc = TaskCode(task, 1, push, options)
    gc.binary = _compile_all([gc.asm])[0]
    return gc, out


def ir_after(tasks, options, after, codes=(), name=None):
    """The text of `tasks` (a kernel's or its adjoint's) after the pass `after`: the backend
    passes up to it run again on copies; loop_limit and codegen show `codes` (the TaskCodes
    `backend` made of them: the final IR, the generated assembly)."""
    check_pass(after)
    if after == 'codegen':
        return codegen_text(codes)
    if after == 'loop_limit':
        return format_tasks([c.task for c in codes])
    if after not in BACKEND:
        return format_tasks(tasks)
    return format_tasks([t for t, _ in run_ir_passes(tasks, options, until=after, name=name)])


def codegen_text(codes):
    return '\n'.join(f'; ---- task {c.task.name}\n{c.asm}' for c in codes)


def _compile_all(asms):
    """SPIR-V binaries of the tasks' assembly; those not in the caches compiled in parallel
    threads (codegen.tools.compile_many)."""
    return tools.compile_many(asms)
