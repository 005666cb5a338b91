"""Codegen stage: one task's IR to a SPIR-V compute shader (assembly text).

Layout: binding k of descriptor set 0 is the k-th field of the task; push constants hold
(launch id, seed, kernel arguments...), arguments beyond 128 bytes are read from a spill buffer
bound last (codegen/memory.py PushLayout). A parallel task is a grid-stride loop over its trip count;
a serial task runs on invocation 0. Unknown IR ops raise, never get skipped."""
from .. import ir
from .. import optable
from .. import types as T
from ..errors import CompileError, located
from . import arith, narrow, rng, subgroup, workgroup
from .memory import GlobalMemory, PushLayout  # noqa: F401  (PushLayout: launch/compiled.py)
from .module import LOCAL_SIZE, Module



FLOAT_ARITHMETIC = frozenset(('OpFAdd', 'OpFSub', 'OpFMul', 'OpFDiv', 'OpFNegate', 'OpFRem',
                              'OpFMod', 'OpVectorTimesScalar', 'OpDot'))


class TaskCodegen(GlobalMemory):
    def __init__(self, task, fields, push, features, float_atomic_fallback=(),
                 local_size=LOCAL_SIZE, cpu_driver=False, texel_limit=0, max_texel_views=0,
                 no_contraction=False):
        self.task = task
        # ti.init(fast_math=False): NoContraction on every float operation, so that neither
        # spirv-opt nor the driver fuses a*b + c or reassociates (passes/f32ops.py relies on it)
        self.no_contraction = no_contraction
        # invocations per workgroup (compiler.fitted_local_size); a serial task runs on one
        # invocation: a one-wide workgroup costs a CPU driver less
        self.local_size = 1 if task.kind == 'serial' else local_size
        self.fields = fields                  # binding order
        self.push = push
        self.features = features
        self.m = Module()
        self.values = {}
        self.lines = []                       # function body
        self.vars = []                        # OpVariable lines (function entry)
        self.loops = []                       # (merge label, continue label)
        self.terminated = False
        # float fields that need integer views for compare-exchange atomics
        self.int_view = set(float_atomic_fallback)
        self.vec_loads = {}
        self.vec_fields = set()  # fields read through a vector view (codegen/memory.py)
        self.aliased = set()     # written fields with a vector view: both views Aliased
        # vector loads as 64-bit words (codegen/memory.py vector_load): CPU drivers only
        self.pack64 = cpu_driver and bool(features.get('int64'))
        self.vec_written = {s.buf for s in ir.walk(task.body) if s.op in ('gstore', 'atomic')}
        self.pair_stores = self.plan_pair_stores()  # 64-bit stores of component pairs
        # read-only fields read through storage texel buffer views: [(field index, VkFormat)]
        self.texel_bindings = self.plan_texels(texel_limit if cpu_driver else 0, max_texel_views)

    # ------------------------------------------------------------ helpers
    def fail(self, s, msg):
        return located(CompileError, msg, s.loc)

    def op(self, text_fn, result_type, *operands, hint='v'):
        r = self.m.new(hint)
        self.lines.append(f'{r} = {text_fn} {result_type} ' + ' '.join(operands))
        if self.no_contraction and text_fn in FLOAT_ARITHMETIC:
            self.m.decorations.append(f'OpDecorate {r} NoContraction')
        return r

    def emit(self, line):
        self.lines.append(line)

    def label(self, lbl):
        self.lines.append(f'{lbl} = OpLabel')
        self.terminated = False
        self.m.at_line = None  # (an OpLine holds to the end of its block)

    def branch(self, lbl):
        if not self.terminated:
            self.lines.append(f'OpBranch {lbl}')
        self.terminated = True

    def t(self, dt):
        return self.m.scalar(dt)

    def local_var(self, dt, hint='var'):
        ptr = self.m.pointer('Function', self.t(dt))
        v = self.m.new(hint)
        self.vars.append(f'{v} = OpVariable {ptr} Function')
        return v

    def glsl(self, name, dt, *args):
        return self.op('OpExtInst', self.t(dt), self.m.glsl, name, *args)

    # ------------------------------------------------------------ module setup
    def declare_interface(self):
        m = self.m
        u32, v3 = m.scalar(T.u32), None
        v3 = m.vector(u32, 3)
        pin = m.pointer('Input', v3)
        self.gid_var = m._global('gid', f'OpVariable {pin} Input')
        self.nwg_var = m._global('nwg', f'OpVariable {pin} Input')
        m.decorations.append(f'OpDecorate {self.gid_var} BuiltIn GlobalInvocationId')
        m.decorations.append(f'OpDecorate {self.nwg_var} BuiltIn NumWorkgroups')
        self.interface = [self.gid_var, self.nwg_var]
        # storage buffers
        self.buffers = {}
        read, written = set(), set()
        for s in ir.walk(self.task.body):
            if s.op in ('gload', 'atomic'):
                read.add(s.buf)
            if s.op in ('gstore', 'atomic'):
                written.add(s.buf)
        for k, f in enumerate(self.fields):
            et = self.storage_type(f)
            blk = m.buffer_block(m.scalar(et), et.nbytes)
            var = m._global('buf', f'OpVariable {m.pointer("StorageBuffer", blk)} StorageBuffer')
            m.decorations.append(f'OpDecorate {var} DescriptorSet 0')
            m.decorations.append(f'OpDecorate {var} Binding {k}')
            m.names.append(f'OpName {var} "{_safe(f.name)}"')
            # read-only / write-only bindings let drivers (and synchronization validation) know
            if f not in written:
                m.decorations.append(f'OpDecorate {var} NonWritable')
            elif f not in read:
                m.decorations.append(f'OpDecorate {var} NonReadable')
            self.buffers[f] = var
        # push constants
        members = [m.scalar(t) for t in self.push.members]
        pc = m._global('pc', 'OpTypeStruct ' + ' '.join(members))
        m.decorations.append(f'OpDecorate {pc} Block')
        for k, off in enumerate(self.push.offsets):
            m.decorations.append(f'OpMemberDecorate {pc} {k} Offset {off}')
        self.pc_var = m._global('pcv', f'OpVariable {m.pointer("PushConstant", pc)} PushConstant')

    def push_value(self, k):
        """Push constant k: 0 the launch id, 1 the seed, 2 + a kernel argument a (a spilled
        argument is read from the words of the spill buffer, PushLayout)."""
        if k >= 2:
            a = k - 2
            kind, k = self.push.where[a]
            if kind == 'spill':
                return self.spilled_value(self.push.arg_type(a), k)
        t = self.push.members[k]
        ptr = self.op('OpAccessChain', self.m.pointer('PushConstant', self.t(t)), self.pc_var,
                      self.m.i32(k))
        return self.op('OpLoad', self.t(t), ptr)

    def spilled_value(self, t, word):
        m = self.m
        u32 = self.t(T.u32)
        pw = m.pointer('StorageBuffer', u32)
        buf = self.buffers[self.push.spill]
        ws = [self.op('OpLoad', u32, self.op('OpAccessChain', pw, buf, m.i32(0), m.i32(word + j)))
              for j in range(t.nbytes // 4)]
        if len(ws) == 1:
            return ws[0] if t is T.u32 else self.op('OpBitcast', self.t(t), ws[0])
        pair = self.op('OpCompositeConstruct', m.vector(u32, 2), *ws)
        return self.op('OpBitcast', self.t(t), pair)

    # ------------------------------------------------------------ entry
    def generate(self):
        m = self.m
        self.declare_interface()
        void = m.void()
        fn = m.new('main')
        entry_label = m.new('entry')
        u32 = m.scalar(T.u32)
        gid3 = self.op('OpLoad', m.vector(u32, 3), self.gid_var)
        self.gid = self.op('OpCompositeExtract', u32, gid3, '0')
        nwg3 = self.op('OpLoad', m.vector(u32, 3), self.nwg_var)
        nwg = self.nwg = self.op('OpCompositeExtract', u32, nwg3, '0')
        loop = self.task.loop
        # ti.loop_config(block_dim=B) with ti.simt.block memory: workgroups of B invocations
        block = loop.attrs.get('block_dim') if loop is not None else None
        if block:
            self.local_size = block
        self.stride = self.op('OpIMul', u32, nwg, m.u32(self.local_size))
        self.rng = None
        if any(s.op == 'random' for s in ir.walk(self.task.body)):
            rng.init_rng(self)
        if self.task.kind == 'parallel':
            stmts = self.task.body.stmts
            k = stmts.index(self.task.loop)
            self.gen_block_stmts(stmts[:k])
            self.gen_parfor(self.task.loop)
            self.gen_block_stmts(stmts[k + 1:])
        else:
            is0 = self.op('OpIEqual', m.bool(), self.gid, m.u32(0))
            body, end = m.new('serial'), m.new('end')
            self.emit(f'OpSelectionMerge {end} None')
            self.emit(f'OpBranchConditional {is0} {body} {end}')
            self.terminated = True
            self.label(body)
            self.gen_block(self.task.body)
            self.branch(end)
            self.label(end)
        self.emit('OpReturn')
        m.entry.append(f'OpEntryPoint GLCompute {fn} "main" ' + ' '.join(self.interface))
        m.modes.append(f'OpExecutionMode {fn} LocalSize {self.local_size} 1 1')
        self.preserve_inf_nan(fn)
        m.functions += [f'{fn} = OpFunction {void} None {m.function_type(void)}',
                        f'{entry_label} = OpLabel', *self.vars, *self.lines, 'OpFunctionEnd']
        return m.text()

    def preserve_inf_nan(self, fn):
        """Declare SignedZeroInfNanPreserve (VK_KHR_shader_float_controls, Vulkan 1.2) where the
        device offers it: otherwise a driver may treat float arithmetic as finite (lavapipe folds
        x - x to 0 for x = inf). Zeros the compiler can see are passes/float_zero.py's business."""
        m = self.m
        widths = [w for w in (32, 64) if self.features.get(f'float_controls_preserve{w}')
                  and (w == 32 or 'Float64' in m.capabilities)]
        if widths:
            m.capability('SignedZeroInfNanPreserve')
            m.extension('SPV_KHR_float_controls')
            m.modes += [f'OpExecutionMode {fn} SignedZeroInfNanPreserve {w}' for w in widths]

    # ------------------------------------------------------------ control flow
    def gen_block(self, block):
        self.gen_block_stmts(block.stmts)

    def gen_block_stmts(self, stmts):
        for s in stmts:
            if self.terminated:
                return  # code after break/continue is dead
            self.lines += self.m.line_change(s.loc)  # OpLine: the user's line
            self.gen(s)

    def gen_parfor(self, s):
        """Grid-stride loop over the iterations; with attrs['blocked'] each invocation takes a
        contiguous chunk instead (used by reductions)."""
        m = self.m
        i32 = self.t(T.i32)
        total = self.values[s.args[0]]
        ivar = self.local_var(T.i32, 'i')
        gid = self.op('OpBitcast', i32, self.gid)
        stride = self.op('OpBitcast', i32, self.stride)
        if s.attrs.get('blocked'):
            chunk = self.op('OpSDiv', i32, self.op('OpISub', i32, self.op('OpIAdd', i32, total, stride),
                                                   m.i32(1)), stride)
            start = self.op('OpIMul', i32, gid, chunk)
            end = self.glsl('SMin', T.i32, self.op('OpIAdd', i32, start, chunk), total)
            self.emit(f'OpStore {ivar} {start}')
            self.loop_skeleton(s, ivar, lambda i: self.op('OpSLessThan', m.bool(), i, end),
                               lambda i: self.op('OpIAdd', i32, i, m.i32(1)))
            return
        self.emit(f'OpStore {ivar} {gid}')
        self.loop_skeleton(s, ivar, lambda i: self.op('OpSLessThan', m.bool(), i, total),
                           lambda i: self.op('OpIAdd', i32, i, stride))

    def open_loop(self, hint='loop'):
        """Branch into a new structured loop: emits its header (OpLoopMerge) and opens the first
        block after it. Returns (header, continue, merge labels); the caller ends the body with a
        branch to the continue block, which branches back to the header."""
        m = self.m
        header, first, cont, merge = (m.new(hint + h) for h in ('h', 'f', 'c', 'm'))
        self.branch(header)
        self.label(header)
        self.emit(f'OpLoopMerge {merge} {cont} None')
        self.emit(f'OpBranch {first}')
        self.terminated = True
        self.label(first)
        return header, cont, merge

    def loop_skeleton(self, s, ivar, cond_fn, step_fn):
        """A structured loop. With attrs['unroll'] = U the body is emitted U times per back-edge,
        each copy testing the exit condition and stepping the counter before its body (so
        `continue` in any copy is right). With attrs['count'] = a local (passes/loop_limit.py),
        each back-edge increments it."""
        m = self.m
        header, cont, merge = self.open_loop()
        self.loops.append((merge, cont))
        for copy in range(s.attrs.get('unroll', 1)):
            if self.terminated:
                break  # the body always ends in break/continue: later copies are dead
            if copy:
                self.vec_loads = {}  # keyed by IR block: a copy must not reuse the last one's
            if ivar is not None:
                i = self.op('OpLoad', self.t(T.i32), ivar)
                c = cond_fn(i)
                body = m.new('body')
                self.emit(f'OpBranchConditional {c} {body} {merge}')
                self.terminated = True
                self.label(body)
                self.emit(f'OpStore {ivar} {step_fn(i)}')
                self.values[s] = i
            self.gen_block(s.blocks[0])
        self.loops.pop()
        self.branch(cont)
        self.label(cont)
        if 'count' in s.attrs:
            i32, cv = self.t(T.i32), self.values[s.attrs['count']]
            n = self.op('OpIAdd', i32, self.op('OpLoad', i32, cv), m.i32(1))
            self.emit(f'OpStore {cv} {n}')
        self.emit(f'OpBranch {header}')
        self.terminated = True
        self.label(merge)

    def gen_for(self, s):
        m = self.m
        i32 = self.t(T.i32)
        step = s.attrs['step']
        trips = _known_trips(s)
        if trips is not None and trips <= s.attrs.get('unroll', 1) and not _jumps(s.blocks[0]):
            # unrolled in full: `trips` copies with constant counters, no loop (llvmpipe would
            # run a last copy masked to find every lane done, and count its back-edges)
            for k in range(trips):
                self.vec_loads = {}  # keyed by IR block: a copy must not reuse the last one's
                self.values[s] = m.i32(s.args[0].attrs['value'] + k * step)
                self.gen_block(s.blocks[0])
            return
        ivar = self.local_var(T.i32, 'k')
        self.emit(f'OpStore {ivar} {self.values[s.args[0]]}')
        end = self.values[s.args[1]]
        cmp = 'OpSLessThan' if step > 0 else 'OpSGreaterThan'
        self.loop_skeleton(s, ivar, lambda i: self.op(cmp, m.bool(), i, end),
                           lambda i: self.op('OpIAdd', i32, i, m.i32(step)))

    def gen_while(self, s):
        self.loop_skeleton(s, None, None, None)

    def gen_if(self, s):
        m = self.m
        then_l, else_l, merge = m.new('then'), m.new('else'), m.new('endif')
        self.emit(f'OpSelectionMerge {merge} None')
        self.emit(f'OpBranchConditional {self.values[s.args[0]]} {then_l} {else_l}')
        self.terminated = True
        self.label(then_l)
        self.gen_block(s.blocks[0])
        self.branch(merge)
        self.label(else_l)
        self.gen_block(s.blocks[1])
        self.branch(merge)
        self.label(merge)

    # ------------------------------------------------------------ statements
    def gen(self, s):
        """One statement: the op table's ops through `gen_table_op`, the others by their
        `gen_<op>` method; a method returning an id gives the statement's value."""
        fn = _DISPATCH.get(s.op)
        if fn is None:
            raise self.fail(s, f'internal: codegen has no rule for IR op {s.op!r}')
        v = fn(self, s)
        if v is not None:
            self.values[s] = v

    def gen_table_op(self, s):
        o = optable.OPS[s.op]
        if o.spirv is None or (s.dtype is T.f64 and o.f64 is not None):
            raise self.fail(s, f'internal: {s.dtype} {s.op} must be lowered before codegen')
        v = arith.lower(self, s, o.spirv, [self.values[x] for x in s.args])
        return narrow.narrow(self, s.dtype, v) if s.dtype.is_narrow else v

    def gen_cast(self, s):
        v = self.convert(self.values[s.args[0]], s.args[0].dtype.reg, s.dtype.reg)
        return narrow.narrow(self, s.dtype, v) if s.dtype.is_narrow else v

    def gen_const(self, s):
        return self.m.const(s.dtype, s.attrs['value'])

    def gen_arg(self, s):
        return self.push_value(2 + s.attrs['index'])

    def gen_bitcast(self, s):
        return self.op('OpBitcast', self.t(s.dtype), self.values[s.args[0]])

    def gen_select(self, s):
        c, a, b = (self.values[x] for x in s.args)
        return self.op('OpSelect', self.t(s.dtype), c, a, b)

    def gen_alloca(self, s):
        if 'size' not in s.attrs:
            return self.local_var(s.dtype, 'l')
        arr = self.m.array(self.t(s.dtype), s.attrs['size'])
        v = self.m.new('arr')
        self.vars.append(f'{v} = OpVariable {self.m.pointer("Function", arr)} Function')
        return v

    def array_ptr(self, s):
        return self.op('OpAccessChain', self.m.pointer('Function', self.t(s.args[0].dtype)),
                       self.values[s.args[0]], self.values[s.args[1]])

    def gen_aload(self, s):
        return self.op('OpLoad', self.t(s.dtype), self.array_ptr(s))

    def gen_astore(self, s):
        self.emit(f'OpStore {self.array_ptr(s)} {self.values[s.args[2]]}')

    def gen_load(self, s):
        return self.op('OpLoad', self.t(s.dtype), self.values[s.args[0]])

    def gen_store(self, s):
        self.emit(f'OpStore {self.values[s.args[0]]} {self.values[s.args[1]]}')

    def gen_break(self, s):
        self.emit(f'OpBranch {self.loops[-1][0]}')
        self.terminated = True

    def gen_continue(self, s):
        self.emit(f'OpBranch {self.loops[-1][1]}')
        self.terminated = True

    def gen_random(self, s):
        return rng.gen_random(self, s.dtype)

    def gen_local_index(self, s):
        return self.op('OpBitcast', self.t(T.i32), workgroup.builtin_x(self, 'LocalInvocationId'))

    def gen_group_index(self, s):
        return self.op('OpBitcast', self.t(T.i32), workgroup.builtin_x(self, 'WorkgroupId'))

    def gen_group_count(self, s):
        return self.op('OpBitcast', self.t(T.i32), self.nwg)

    def gen_wg_sum(self, s):
        return workgroup.gen_wg_sum(self, s)

    def gen_subgroup(self, s):
        return subgroup.gen(self, s)

    def convert(self, x, src, dst):
        """A value of scalar type src as dst (the `cast` op)."""
        if src is dst:
            return x
        t = self.t(dst)
        m = self.m
        if src.is_bool:
            return self.op('OpSelect', t, x, m.const(dst, 1), m.const(dst, 0))
        if dst.is_bool:
            return self.op('OpFUnordNotEqual' if src.is_float else 'OpINotEqual', t, x, m.const(src, 0))
        if src.is_float and dst.is_float:
            return self.op('OpFConvert', t, x)
        if src.is_float:
            return self.op('OpConvertFToS' if dst.is_signed else 'OpConvertFToU', t, x)
        if dst.is_float:
            return self.op('OpConvertSToF' if src.is_signed else 'OpConvertUToF', t, x)
        if src.bits == dst.bits:
            return self.op('OpBitcast', t, x)
        if src.bits < dst.bits:
            if src.is_signed and dst.bits == 64:
                return self._sign_extend_64(x, t)
            if src.is_signed or not dst.is_signed:
                return self.op('OpSConvert' if src.is_signed else 'OpUConvert', t, x)
            # unsigned to a wider signed type: OpUConvert needs an unsigned result
            return self.op('OpBitcast', t, self.op('OpUConvert', self.t(T.u64), x))
        # narrowing: convert in the source signedness, then reinterpret
        mid = T.i32 if src.is_signed else T.u32
        y = self.op('OpSConvert' if src.is_signed else 'OpUConvert', self.t(mid), x)
        return y if mid is dst else self.op('OpBitcast', t, y)


    def _sign_extend_64(self, x, t):
        """A 32-bit (or narrower, held in 32 bits) signed integer widened to 64 bits as the pair
        (x, x >> 31) of 32-bit words. Lavapipe (Mesa 22.3) miscompiles comparisons of an
        OpSConvert to 64 bits with constants, also through `+ 0`, `| 0` or max(_, c):
        `OpSConvert(3) > 5` was true (tests/lang/test_widened_compare.py)."""
        m = self.m
        u32 = self.t(T.u32)
        hi = self.op('OpShiftRightArithmetic', self.t(T.i32), x, m.const(T.i32, 31))
        pair = self.op('OpCompositeConstruct', m.vector(u32, 2), self.op('OpBitcast', u32, x),
                       self.op('OpBitcast', u32, hi))
        return self.op('OpBitcast', t, pair)


_DISPATCH = {name: getattr(TaskCodegen, 'gen_' + name) for name in
             ('const', 'arg', 'cast', 'bitcast', 'select', 'alloca', 'aload', 'astore', 'load',
              'store', 'gload', 'gstore', 'atomic', 'if', 'for', 'while', 'break', 'continue',
              'random', 'local_index', 'group_index', 'group_count', 'wg_sum', 'barrier')}
_DISPATCH.update({name: TaskCodegen.gen_subgroup for name in subgroup.OPS})
_DISPATCH.update({name: TaskCodegen.gen_table_op for name in optable.OPS})


def _safe(name):
    return ''.join(c if c.isalnum() or c in '_.' else '_' for c in name)


def _known_trips(s):
    """A `for` loop's trip count where its bounds are constants, else None."""
    lo, hi = s.args
    if lo.op != 'const' or hi.op != 'const':
        return None
    step = s.attrs['step']
    return max(0, -(-(hi.attrs['value'] - lo.attrs['value']) // step))


def _jumps(block):
    """Whether a break or continue lies anywhere in `block` (inner loops included: cautious)."""
    return any(x.op in ('break', 'continue') for x in ir.walk(block))
