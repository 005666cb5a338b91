"""API stage: a compiled kernel instance. Runs the pipeline (passes -> codegen -> pipelines on the
device) and launches its tasks, recording one dispatch per task into the runtime's batch; the
Buffers each task names are bound to device storage once, when it is compiled (lang.binding)."""
import struct

from .. import ir
from ..codegen import tools
from ..codegen.atomics import fields_needing_int_view
from ..codegen.spirv import LOCAL_SIZE, PushLayout, TaskCodegen
from ..passes.host_eval import host_eval
from ..passes.lower import lower_task
from ..passes.reduction import optimize_reductions
from ..passes.tasks import split_tasks
from ..errors import KernelArgumentError, VkdiffError
from . import binding, loop_guard, state
from .convert import arg_converter


class CompiledTask:
    def __init__(self, task, push, rt):
        self.task = task
        self.per_thread, self.min_groups = _cpu_geometry(rt)
        self.per_thread = loop_guard.prepare(task, rt, self.per_thread)
        self.fields = task.buffers()
        limit = rt.limits.get('max_storage_buffers_per_stage')
        if limit and len(self.fields) > limit:
            from ..errors import CompileError, located
            loop = task.loop
            raise located(CompileError,
                          f'this {"loop" if loop is not None else "kernel part"} uses '
                          f'{len(self.fields)} fields (gradients, duals and kernel-internal '
                          f'temporaries included), more than this device binds to one shader '
                          f'({limit}); split it into several kernels or loops',
                          (loop or next(iter(ir.walk(task.body)), None)).loc
                          if (loop or task.body.stmts) else None)
        reads, writes = task.accesses()
        int_view = fields_needing_int_view(list(ir.walk(task.body)), rt.features)
        self.total = task.loop.args[0] if task.kind == 'parallel' else None
        known = self.total is not None and all(x.op != 'gload' and x.op != 'arg'
                                               for x in ir.dependencies([self.total]))
        self.local_size = LOCAL_SIZE
        self.asm = TaskCodegen(task, self.fields, push, rt.features, int_view).generate()
        self.binary = self.algo = None  # made by finish(), after the SPIR-V tools ran
        self.reads = [binding.storage_for(b) for b in reads]
        self.writes = [binding.storage_for(b) for b in writes]
        # a serial task that adds a reduction's per-workgroup partials (passes.reduction): not
        # launched when the reduction ran as one workgroup, which then adds its sum itself
        self.finishing = getattr(task, 'finishes', None) is not None
        self.max_groups = min(rt.limits['max_workgroup_count_x'], _max_groups(rt))
        if self.total is not None and task.loop.attrs.get('groups'):
            # a reduction: its partials have room for this many workgroups at most
            self.max_groups = min(self.max_groups, task.loop.attrs['groups'])
        self.fixed = None  # the geometry of a trip count known at compile time
        if known:
            self.fixed = self.groups(())

    def finish(self, rt, push, binary):
        self.binary = binary
        self.algo = rt.device.algorithm([binding.storage_for(b).buf for b in self.fields], binary,
                                        push.size)

    def groups(self, args):
        """Workgroups for this launch, from the trip count when the host knows it (constants,
        arguments, and fields whose host copy is current); otherwise a small grid-stride grid on
        a CPU driver (any trip count runs correctly, all cores busy), the largest on a GPU."""
        if self.total is None:
            return 1
        if self.fixed is not None:
            return self.fixed
        n = host_eval(self.total, args, binding.host_load)
        if n is None:
            return min(self.min_groups, self.max_groups) if self.per_thread > 1 else self.max_groups
        size = self.local_size
        groups = -(-n // size)
        if self.per_thread > 1:  # CPU driver: several iterations per invocation, but all cores busy
            groups = min(groups, max(self.min_groups, -(-n // (size * self.per_thread))))
        return max(1, min(groups, self.max_groups))


def _is_cpu_driver(rt):
    """Lavapipe or SwiftShader; VKDIFF_GEOMETRY=cpu|gpu forces either launch geometry (tests)."""
    import os
    forced = os.environ.get('VKDIFF_GEOMETRY')
    if forced in ('cpu', 'gpu'):
        return forced == 'cpu'
    return any(k in rt.name.lower() for k in ('llvmpipe', 'swiftshader', 'cpu'))


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


def _compile_all(asms):
    """SPIR-V binaries of the tasks' assembly; the SPIR-V tools of tasks not in the caches run in
    parallel threads (they are subprocesses: the GIL is released while they run)."""
    todo = [a for a in set(asms) if not tools.is_cached(a)]
    if len(todo) > 1:
        from concurrent.futures import ThreadPoolExecutor
        import os
        with ThreadPoolExecutor(min(len(todo), os.cpu_count() or 2, 8)) as pool:
            done = dict(zip(todo, pool.map(tools.compile_asm, todo)))
    else:
        done = {}
    return [done.get(a) or tools.compile_asm(a) for a in asms]


class TaskList:
    """Compiled tasks launched in order with one set of push constants (a kernel, or its adjoint)."""

    overflow_flags = ()  # an adjoint's run-time sized per-iteration storage (autodiff.reverse)

    def __init__(self, name, tasks, push, packer, converters, ret_field=None):
        rt = state.runtime()
        self.name = name
        self.tasks = tasks            # the IR, kept as built (before lowering) for autodiff
        self.push, self.packer, self.converters = push, packer, converters
        self.ret_field = ret_field
        self.ctasks = []
        for t in tasks:
            t = t.clone()
            lower_task(t, rt.features)
            for u in optimize_reductions(t, rt.features, reduction_groups(rt), _is_cpu_driver(rt),
                                         rt.limits.get('max_storage_buffers_per_stage')):
                self.ctasks.append(CompiledTask(u, push, rt))
        for ct, binary in zip(self.ctasks, _compile_all([ct.asm for ct in self.ctasks])):
            ct.finish(rt, push, binary)

    def pack(self, args):
        rt = state.runtime()
        try:
            values = [c(a) for c, a in zip(self.converters, args)]
        except VkdiffError as e:  # a wrong type or a value out of range: convert.arg_converter
            raise type(e)(f'kernel {self.name}: {e}') from None
        rt.launches += 1
        try:
            return self.packer.pack(rt.launches & 0xFFFFFFFF,
                                    state.config['random_seed'] & 0xFFFFFFFF, *values)
        except (TypeError, ValueError, OverflowError, struct.error) as e:
            kinds = ', '.join(c.__name__ for c in self.converters)
            raise KernelArgumentError(f'{self.name}: bad kernel arguments {tuple(args)!r} for '
                                      f'scalar parameters ({kinds}): {e}') from None

    def launch(self, args, push=None):
        rt = state.runtime()
        if push is None:
            push = self.pack(args)
        single = False  # the last reduction ran as one workgroup (and applied its sum itself)
        for ct in self.ctasks:
            if ct.finishing:
                if single:
                    continue
                groups = 1
            else:
                groups = ct.groups(args)
                single = groups == 1
            rt.dispatch(ct.algo, groups, push, ct.reads, ct.writes)
        if self.ret_field is not None:
            return self.ret_field[None]
        return None

    def ir(self):
        return '\n'.join(t.ir() for t in self.tasks)

    def tangent(self):
        """The forward-mode (JVP) version of these tasks; of an adjoint, forward-over-reverse."""
        if getattr(self, '_tangent', None) is None:
            from ..autodiff.forward import tangent_tasks
            self._tangent = TaskList(self.name + '.jvp', tangent_tasks(self.tasks), self.push,
                                     self.packer, self.converters, self.ret_field)
        return self._tangent

    def spirv(self):
        return '\n'.join(f'; ---- task {ct.task.name}\n' + tools.disassemble(ct.binary)
                          for ct in self.ctasks)


class CompiledKernel(TaskList):
    def __init__(self, kernel, kir):
        self.kernel = kernel
        self.kir = kir
        push = PushLayout(kir.arg_types)
        super().__init__(kir.name, split_tasks(kir.body, kir.name), push,
                         struct.Struct(push.struct_format()),
                         [arg_converter(t, f'argument {n!r} ({t})')
                          for t, n in zip(kir.arg_types, kir.arg_names)], kir.ret_field)
        self._adjoint = None

    def adjoint(self):
        if self._adjoint is None:
            from ..autodiff.reverse import adjoint_tasks
            tasks, flags = adjoint_tasks(self.tasks, self.name,
                                         state.config.get('ad_stack_size', 0))
            self._adjoint = TaskList(self.name + '.grad', tasks, self.push, self.packer,
                                     self.converters)
            self._adjoint.overflow_flags = flags
        return self._adjoint


def check_overflow(tasklist):
    """After an adjoint launch with run-time sized per-iteration storage: was it enough?"""
    for f in tasklist.overflow_flags:
        if binding.storage_for(f).for_host_read()[()]:
            from ..errors import AutodiffError, located
            raise located(AutodiffError, 'a loop ran more iterations than ti.init(ad_stack_size='
                          f'{state.config.get("ad_stack_size")}) can store for its adjoint: the '
                          'gradient would be wrong. Raise ad_stack_size.', f.meta['overflow_loc'])
