"""Launch floor: a compiled kernel instance. Builds the compiler's options from ti.init's config and
the device, runs the pipeline (vkdiff/compiler.py: passes -> codegen), binds the Buffers each
task names to device storage (lang.binding), makes the device pipelines and launches the tasks,
recording one dispatch per task into the runtime's batch."""
import struct

from .. import compiler
from .. import types as T
from ..codegen import tools
from ..codegen.spirv import PushLayout
from ..passes.host_eval import host_eval, host_known
from .. import ir
from ..errors import AutodiffError, KernelArgumentError, VkdiffError, located
from ..lang import binding, state
from . import status
from .arg_binding import Launch, TaskArgs, arg_root, pipeline
from ..lang.convert import arg_converter
from ..errors import AutodiffError, located


class CompiledTask:
    """A task's code (compiler.TaskCode) bound to the device: storage and pipeline."""

    def __init__(self, code, push=None, options=None):
        self.code = code
        self.push, self.options = push, options  # (for the geometry task, made on first need)
        self.task = code.task
        self.per_thread, self.min_groups = code.per_thread, code.min_groups
        self.cpu_driver = code.cpu_driver
        self.fields = code.buffers
        self.texels = code.texels  # texel views bound after the buffers (codegen/memory.py)
        self.read_fields, self.write_fields = code.read_fields, code.write_fields
        self.total, self.local_size = code.total, code.local_size
        self.asm, self.binary = code.asm, code.binary
        self.finishing, self.max_groups = code.finishing, code.max_groups
        self.algo = self.reads = self.writes = None  # made by bind(), before the first launch
        self.args = None  # ndarray parameters: launch.arg_binding.TaskArgs, bound per launch
        self.fixed = None  # the geometry of a trip count known at compile time
        self.by_args = None  # a trip count made of scalar arguments: indices of those, memo
        # the geometry task (passes/geometry.py), a CompiledTask made at the first launch that
        # needs it; False where it cannot be made or is not used (geometry_indirect)
        self._geometry = None if options is not None and _indirect_wanted(code) else False
        if code.known:
            self.fixed = self.groups(())
        elif self.total is not None and host_known(self.total):
            self.by_args = (sorted({x.attrs['index'] for x in ir.dependencies([self.total])
                                    if x.op == 'arg'}), {})

    def bind(self, rt, push):
        item = self.pipeline_item(push)
        if item is not None:
            self.algo = pipeline(rt, *item, self.texels)

    def pipeline_item(self, push):
        """Bind the task's Buffers to storage; the (buffers, spirv, push size) its pipeline is
        made from, or None (ndarray parameters: bound per launch)."""
        if any(arg_root(b) is not None for b in self.fields):
            self.args = TaskArgs(self.fields, self.read_fields, self.write_fields, push.size,
                                 self.texels)
            return None
        self.reads = [binding.storage_for(b) for b in self.read_fields]
        self.writes = [binding.storage_for(b) for b in self.write_fields]
        return [binding.storage_for(b).buf for b in self.fields], self.binary, push.size

    def groups(self, args):
        """Workgroups for this launch, from the trip count when the host knows it (constants,
        arguments, and fields whose host copy is current); otherwise a small grid-stride grid on
        a CPU driver (any trip count runs correctly, all cores busy) or, where each invocation
        must run one iteration (long inner loops, passes.loop_limit), the bound read back from
        the device; the largest grid on a GPU. None: only the device knows the trip count, and
        the launcher records this task's geometry task (`geometry()`) and then the task as an
        indirect dispatch (on GPUs, and on CPU drivers instead of the read-back)."""
        if self.total is None:
            return 1
        if self.fixed is not None:
            return self.fixed
        if self.by_args is not None:  # (e.g. an ndarray's shape: the same at most launches)
            ix, memo = self.by_args
            key = tuple([args[i] for i in ix])
            g = memo.get(key)
            if g is None:
                if len(memo) > 64:
                    memo.clear()
                g = memo[key] = self._groups(host_eval(self.total, args))
            return g
        n = host_eval(self.total, args, binding.host_load)
        if n is None and self._geometry is not False and self.args is None and \
                self.geometry() is not None:
            return None
        if n is None and self.per_thread == 1 and self.cpu_driver:
            # a CPU driver, and the task's inner loops need one outer iteration per invocation:
            # reading the bound back (one sync) costs far less than the maximum grid (65,535
            # workgroups: ~0.9 s on lavapipe, for mass_spring_game's 3 particles)
            n = host_eval(self.total, args, binding.host_load_synced)
        return self._groups(n)

    def geometry(self):
        """This task's geometry task, bound to the device, or None where the trip count depends
        on values only the task computes (passes/geometry.unsupported says which)."""
        if self._geometry is None:
            if not state.runtime().can_indirect:  # a native module not rebuilt yet
                self._geometry = False
                return None
            made = compiler.geometry(self.code, self.push, self.options)
            self._geometry = False
            if made is not None:
                geo = CompiledTask(made[0])
                geo.bind(state.runtime(), self.push)
                self._geometry = geo
        return self._geometry or None

    def _groups(self, n):
        if n is None:
            return min(self.min_groups, self.max_groups) if self.per_thread > 1 else self.max_groups
        size = self.local_size
        groups = -(-n // size)
        if self.per_thread > 1:  # CPU driver: several iterations per invocation, but all cores busy
            groups = min(groups, max(self.min_groups, -(-n // (size * self.per_thread))))
        return max(1, min(groups, self.max_groups))


def bind_tasks(rt, ctasks, push):
    """Bind tasks and make their pipelines: several at once where the native module can
    (Device.algorithms: threads without the GIL; a driver that compiles shaders in
    vkCreateComputePipelines compiles them in parallel)."""
    todo = [(ct, item) for ct in ctasks for item in [ct.pipeline_item(push)] if item is not None]
    # texel views (codegen/memory.py plan_texels): a pipeline of the runtime's own, made alone
    # and not prewarmed (the helper device binds storage buffers only)
    for ct, item in todo:
        if ct.texels:
            ct.algo = pipeline(rt, *item, ct.texels)
    todo = [(ct, item) for ct, item in todo if not ct.texels]
    many = getattr(rt.device, 'algorithms', None)
    if len(todo) > 1 and many is not None:
        for (ct, _), algo in zip(todo, many([item for _, item in todo])):
            ct.algo = algo
    else:
        for ct, item in todo:
            ct.algo = rt.device.algorithm(*item)
    # the first task's shader is compiled by its own first dispatch; the others' meanwhile, last
    # first, on a helper (lavapipe: Runtime.prewarm)
    rt.prewarm([item for _, item in todo[:0:-1]])


def _indirect_wanted(code):
    """Whether a launch whose trip count the host does not know runs a geometry task and an
    indirect dispatch (passes/geometry.py): on GPUs (instead of the largest grid); on a CPU
    driver where each invocation runs one iteration (instead of reading the bound back: a
    sync); not for a CPU driver's grid-stride tasks, whose small grid serves any trip count.
    VKDIFF_INDIRECT=0 turns it off (the fallbacks then serve every launch)."""
    import os
    if code.total is None or code.known or os.environ.get('VKDIFF_INDIRECT') == '0':
        return False
    return not code.cpu_driver or code.per_thread == 1


def _is_cpu_driver(rt):
    """A CPU driver (deviceType CPU: lavapipe, SwiftShader); VKDIFF_GEOMETRY=cpu|gpu forces
    either launch geometry (tests)."""
    import os
    forced = os.environ.get('VKDIFF_GEOMETRY')
    if forced in ('cpu', 'gpu'):
        return forced == 'cpu'
    return rt.device_type == 'cpu'


def _cpu_geometry(rt):
    """On a CPU driver (lavapipe, SwiftShader) each workgroup has a fixed cost of about 1 us, so
    a grid-stride loop is fastest with ~32 iterations per invocation (tools/bench.py measured
    256 groups best at 1M elements and 4096 at 16M, both 32 per invocation), yet with at least a
    few groups per core. GPUs keep one iteration per invocation.
    VKDIFF_MIN_GROUPS overrides the groups per core (tests force tiny grids with it)."""
    import os
    if not _is_cpu_driver(rt):
        return 1, 1
    per = int(os.environ.get('VKDIFF_ITERS_PER_THREAD', 32))
    return per, int(os.environ.get('VKDIFF_MIN_GROUPS', 4 * (os.cpu_count() or 2)))


def _max_groups(rt):
    import os
    env = os.environ.get('VKDIFF_MAX_GROUPS')
    if env:
        return int(env)
    return 65535


def reduction_groups(rt):
    """Workgroups of a reducing task: enough to fill the device, few enough that the partial
    sums stay cheap. A CPU driver (lavapipe, SwiftShader) needs few."""
    import os
    env = os.environ.get('VKDIFF_REDUCTION_GROUPS')
    if env:
        return int(env)
    return 64 if _is_cpu_driver(rt) else 1024


def compile_options():
    """The compiler's options for this program: the device's features, limits and launch
    geometry, and ti.init's settings (a program set up without a device uses its fixed
    options, with ti.init's settings)."""
    import os
    cfg = state.config
    printed = cfg.get('print_ir', frozenset()) | compiler.parse_print_ir(
        os.environ.get('VKDIFF_PRINT_IR'))
    settings = dict(ad_stack_size=cfg.get('ad_stack_size', 0), debug=cfg.get('debug', False),
                    check_out_of_bound=cfg.get('check_out_of_bound', False),
                    default_fp=T.Defaults.fp, default_ip=T.Defaults.ip, print_ir=printed,
                    fast_math=cfg.get('fast_math', True))
    if state.offline is not None:
        import dataclasses
        return dataclasses.replace(state.offline, **settings)
    rt = state.runtime()
    cpu = _is_cpu_driver(rt)
    per, min_groups = _cpu_geometry(rt)
    return compiler.CompileOptions(
        device_name=rt.name, driver_id=rt.driver_id, features=rt.features, limits=rt.limits, cpu_driver=cpu,
        iters_per_thread=per, min_groups=min_groups, max_groups=_max_groups(rt),
        reduction_groups=reduction_groups(rt), loop_status=lambda: status.loop_status_buffer(rt),
        debug_status=lambda: status.debug_status_buffer(rt),
        device_log=lambda: status.log_for(rt), **settings)


class TaskList:
    """Compiled tasks launched in order with one set of push constants (a kernel, or its adjoint)."""

    overflow_flags = ()  # an adjoint's run-time sized per-iteration storage (autodiff.reverse)

    def __init__(self, name, tasks, push, packer, converters, ret_field=None):
        self.name = name
        self.tasks = tasks            # the IR, kept as built (before lowering) for autodiff
        self.push, self.packer, self.converters = push, packer, converters
        self.ret_field = ret_field
        # a kernel that prints ends its launch with a sync: its output comes before the host's
        self.prints = status.print_sync_after(tasks)
        self.options = compile_options()
        self.ctasks = [CompiledTask(c, push, self.options)
                       for c in compiler.backend(name, tasks, push, self.options)]
        self.debug_sync = False  # debug mode: sync (and report) at the end of each launch
        self.fresh = False  # pipelines made, not launched yet
        if state.offline is None:
            rt = state.runtime()
            bind_tasks(rt, self.ctasks, push)
            self.fresh = True
            self.debug_sync = any(status.debug_reports(rt, ct.fields) for ct in self.ctasks)
            # debug mode's overflow checks print (passes/debug_checks.py): their messages come
            # at the end of the launch that overflowed, as the kernel's own prints
            self.prints = self.prints or (self.options.debug and any(
                status.writes_log(rt, ct.fields) for ct in self.ctasks))

    def pack(self, args):
        rt = state.runtime()
        try:
            values = [c(a) for c, a in zip(self.converters, args)]
        except VkdiffError as e:  # a wrong type or a value out of range: convert.arg_converter
            raise type(e)(f'kernel {self.name}: {e}') from None
        rt.launches += 1
        try:
            values, spilled = self.push.split(values)
            if spilled is not None:  # arguments beyond the push constants: their buffer
                binding.storage_for(self.push.spill).for_host_overwrite()[:] = spilled
            return self.packer.pack(rt.launches & 0xFFFFFFFF,
                                    state.config['random_seed'] & 0xFFFFFFFF, *values)
        except (TypeError, ValueError, OverflowError, struct.error) as e:
            kinds = ', '.join(c.__name__ for c in self.converters)
            raise KernelArgumentError(f'{self.name}: bad kernel arguments {tuple(args)!r} for '
                                      f'scalar parameters ({kinds}): {e}') from None

    def launch(self, args, push=None):
        rt = state.runtime()
        rt.note_launch(self.name, self.fresh)
        if push is None:
            push = self.pack(args)
        if rt.capture is not None:  # a Tape is captured for replay (launch/replay.py)
            arrays = getattr(args, 'arrays', None)
            live = 'host array arguments' if arrays and any(a.array is None for a in arrays) \
                else self.live_reason()
            if live is not None:
                rt.capture_live = live
        single = False  # the last reduction ran as one workgroup (and applied its sum itself)
        arrays = getattr(args, 'arrays', None)
        if arrays:
            bound = Launch(self, arrays)
            bound.prepare(self.ctasks)
        for ct in self.ctasks:
            if ct.finishing:
                if single:
                    continue
                groups = 1
            else:
                groups = ct.groups(args)
                single = groups == 1
            if ct.algo is None and ct.args is None:
                ct.bind(rt, self.push)
            if ct.args is not None:
                rt.dispatch(*ct.args.bound(rt, ct.binary, bound, groups, push))
                continue
            if groups is None:  # the device computes the workgroups: passes/geometry.py
                geo = ct.geometry()
                rt.dispatch(geo.algo, 1, push, geo.reads, geo.writes)
                rt.dispatch_indirect(ct.algo, geo.writes[0], push, ct.reads, ct.writes)
                continue
            rt.dispatch(ct.algo, groups, push, ct.reads, ct.writes)
        if arrays:
            bound.finish()  # host arrays the kernel wrote get the data back
        if self.fresh:
            # a CPU driver (lavapipe) compiles a pipeline at its first dispatch, on its queue
            # thread: submitted now, that runs while the host compiles the next kernel
            self.fresh = False
            rt.kick()
        if self.debug_sync or self.prints:
            rt.flush()  # a check that failed raises here; launch/status.py prints records
        if self.ret_field is not None:
            return self.ret_field[None]
        return None

    def live_reason(self):
        """Why a replay (launch/replay.py) must launch these tasks live rather than record
        their captured commands again, or None: what they record depends on more than the
        arguments, or the launch does host work besides recording."""
        if self.push.spill is not None:
            return 'arguments spilled to a buffer'
        if self.debug_sync or self.prints or self.ret_field is not None:
            return 'a kernel that prints, checks or returns a value'
        if self.overflow_flags:
            return 'run-time sized adjoint storage'
        if any(ct.total is not None and ct.fixed is None and ct.by_args is None and
               not ct.finishing for ct in self.ctasks):
            return 'a trip count read from fields'
        return None

    def ir(self, after=None):
        """These tasks as text: as built (after split_tasks, adjoint or tangent), or after the
        backend pass `after` (lower, reductions, loop_limit, codegen)."""
        if after is None or after not in compiler.BACKEND:
            return compiler.format_tasks(self.tasks)
        return compiler.ir_after(self.tasks, self.options, after, [ct.code for ct in self.ctasks],
                                 self.name)

    def tangent(self):
        """The forward-mode (JVP) version of these tasks; of an adjoint, forward-over-reverse."""
        if getattr(self, '_tangent', None) is None:
            tasks = compiler.tangent(self.tasks, self.name, self.options)
            self._tangent = TaskList(self.name + '.jvp', tasks, self.push, self.packer,
                                     self.converters, self.ret_field)
        return self._tangent

    def spirv(self):
        return '\n'.join(f'; ---- task {ct.task.name}\n' + tools.disassemble(ct.binary)
                          for ct in self.ctasks)


class CompiledKernel(TaskList):
    def __init__(self, kernel, kir):
        self.kernel = kernel
        self.kir = kir
        push = PushLayout(kir.arg_types)
        tasks = compiler.split_tasks(kir.body, kir.name, compile_options())
        super().__init__(kir.name, tasks, push,
                         struct.Struct(push.struct_format()),
                         [arg_converter(t, f'argument {n!r} ({t})')
                          for t, n in zip(kir.arg_types, kir.arg_names)], kir.ret_field)
        self._adjoint = None

    def adjoint(self):
        if self._adjoint is None:
            _no_gradient_reads(self.tasks)
            tasks, flags = compiler.adjoint(self.tasks, self.name, self.options)
            adj = TaskList(self.name + '.grad', tasks, self.push, self.packer, self.converters)
            adj.overflow_flags = flags
            self._adjoint = adj
        return self._adjoint


class GradientReadError(AutodiffError, RuntimeError):
    """The adjoint of a kernel that reads a gradient (`x.grad[i]`) was asked for."""


def _no_gradient_reads(tasks):
    """A kernel that reads a gradient or a tangent has no adjoint (as in Taichi): the values it
    read would change under it while the adjoints run."""
    for t in tasks:
        for s in ir.walk(t.body):
            if s.op == 'gload' and s.buf.role in ('grad', 'dual') and \
                    s.buf.primal is not None and s.buf.primal.role != 'temp':
                raise located(GradientReadError, f'Cannot automatically differentiate through a '
                              f'grad tensor: this kernel reads {s.buf.name}', s.loc)


def check_overflow(tasklist):
    """After an adjoint launch with run-time sized per-iteration storage: was it enough?"""
    for f in tasklist.overflow_flags:
        if binding.storage_for(f).for_host_read()[()]:
            raise located(AutodiffError, 'a loop ran more iterations than ti.init(ad_stack_size='
                          f'{state.config.get("ad_stack_size")}) can store for its adjoint: the '
                          'gradient would be wrong. Raise ad_stack_size.', f.meta['overflow_loc'])
