"""Codegen stage: one task's IR to a SPIR-V compute shader (assembly text).

Layout: binding k of descriptor set 0 is the k-th field of the task; push constants hold
(launch id, seed, kernel arguments...). A parallel task is a grid-stride loop over its trip count;
a serial task runs on invocation 0. Unknown IR ops raise, never get skipped."""
from .. import ir
from .. import types as T
from ..errors import CompileError, located
from .module import Module

LOCAL_SIZE = 128
SCOPE_DEVICE, SCOPE_SUBGROUP = 1, 3

_GLSL = {'sin': 'Sin', 'cos': 'Cos', 'tan': 'Tan', 'asin': 'Asin', 'acos': 'Acos', 'atan': 'Atan',
         'sqrt': 'Sqrt', 'rsqrt': 'InverseSqrt', 'exp': 'Exp', 'log': 'Log', 'tanh': 'Tanh',
         'floor': 'Floor', 'ceil': 'Ceil', 'round': 'RoundEven', 'pow': 'Pow', 'atan2': 'Atan2'}
_F64_OK = {'sqrt', 'rsqrt', 'floor', 'ceil', 'round', 'abs', 'min', 'max'}
_FCMP = {'lt': 'OpFOrdLessThan', 'le': 'OpFOrdLessThanEqual', 'gt': 'OpFOrdGreaterThan',
         'ge': 'OpFOrdGreaterThanEqual', 'eq': 'OpFOrdEqual', 'ne': 'OpFUnordNotEqual'}
_SCMP = {'lt': 'OpSLessThan', 'le': 'OpSLessThanEqual', 'gt': 'OpSGreaterThan',
         'ge': 'OpSGreaterThanEqual', 'eq': 'OpIEqual', 'ne': 'OpINotEqual'}
_UCMP = {'lt': 'OpULessThan', 'le': 'OpULessThanEqual', 'gt': 'OpUGreaterThan',
         'ge': 'OpUGreaterThanEqual', 'eq': 'OpIEqual', 'ne': 'OpINotEqual'}
_INT_ATOMIC = {'add': 'OpAtomicIAdd', 'sub': 'OpAtomicISub', 'band': 'OpAtomicAnd',
               'bor': 'OpAtomicOr', 'bxor': 'OpAtomicXor'}


class PushLayout:
    """Byte layout of the push constants: launch id, seed, then the kernel's scalar arguments."""

    def __init__(self, arg_types):
        self.members = [T.u32, T.u32]
        self.offsets = [0, 4]
        off = 8
        for t in arg_types:
            if t is T.u1:
                t = T.i32
            size = t.nbytes
            off = (off + size - 1) // size * size
            self.members.append(t)
            self.offsets.append(off)
            off += size
        self.size = (off + 7) // 8 * 8
        if self.size > 128:
            raise CompileError('too many kernel arguments: push constants are limited to 128 bytes')

    def struct_format(self):
        """A struct module format string packing (launch id, seed, *args)."""
        fmt, pos = '<', 0
        codes = {'f32': 'f', 'f64': 'd', 'i32': 'i', 'u32': 'I', 'i64': 'q', 'u64': 'Q'}
        for t, off in zip(self.members, self.offsets):
            if off > pos:
                fmt += f'{off - pos}x'
            fmt += codes[t.name]
            pos = off + t.nbytes
        if self.size > pos:
            fmt += f'{self.size - pos}x'
        return fmt


class TaskCodegen:
    def __init__(self, task, fields, push, features, float_atomic_fallback=()):
        self.task = task
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
        self.vec_written = {s.buf for s in ir.walk(task.body) if s.op in ('gstore', 'atomic')}

    # ------------------------------------------------------------ helpers
    def fail(self, s, msg):
        return located(CompileError, msg, s.loc)

    def op(self, text_fn, result_type, *operands, hint='v'):
        r = self.m.new(hint)
        self.lines.append(f'{r} = {text_fn} {result_type} ' + ' '.join(operands))
        return r

    def emit(self, line):
        self.lines.append(line)

    def label(self, lbl):
        self.lines.append(f'{lbl} = OpLabel')
        self.terminated = False

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

    def storage_type(self, f):
        if f.dtype.is_narrow:
            return T.u32  # packed words (codegen/narrow.py)
        if f in self.int_view:
            return T.u64 if f.dtype.bits == 64 else T.u32
        return f.dtype

    def push_value(self, k):
        t = self.push.members[k]
        ptr = self.op('OpAccessChain', self.m.pointer('PushConstant', self.t(t)), self.pc_var,
                      self.m.i32(k))
        return self.op('OpLoad', self.t(t), ptr)

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
        self.stride = self.op('OpIMul', u32, nwg, m.u32(LOCAL_SIZE))
        self.rng = None
        if any(s.op == 'random' for s in ir.walk(self.task.body)):
            self.init_rng()
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
        # a serial task runs on one invocation: a one-wide workgroup costs a CPU driver less
        size = 1 if self.task.kind == 'serial' else LOCAL_SIZE
        m.modes.append(f'OpExecutionMode {fn} LocalSize {size} 1 1')
        m.functions += [f'{fn} = OpFunction {void} None {m.function_type(void)}',
                        f'{entry_label} = OpLabel', *self.vars, *self.lines, 'OpFunctionEnd']
        return m.text()

    # ------------------------------------------------------------ control flow
    def gen_block(self, block):
        self.gen_block_stmts(block.stmts)

    def gen_block_stmts(self, stmts):
        for s in stmts:
            if self.terminated:
                return  # code after break/continue is dead
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
        op = s.op
        if op in ('const',):
            self.values[s] = self.m.const(s.dtype, s.attrs['value'])
        elif op == 'arg':
            self.values[s] = self.push_value(2 + s.attrs['index'])
        elif op in ir.UNARY or op in ir.BINARY or op == 'cast':
            if op == 'cast':
                v = self.gen_cast(self.values[s.args[0]], s.args[0].dtype.reg, s.dtype.reg)
            else:
                v = self.gen_unary(s) if op in ir.UNARY else self.gen_binary(s)
            if s.dtype.is_narrow:  # 8/16-bit results wrap / round (codegen/narrow.py)
                from .narrow import narrow
                v = narrow(self, s.dtype, v)
            self.values[s] = v
        elif op == 'bitcast':
            self.values[s] = self.op('OpBitcast', self.t(s.dtype), self.values[s.args[0]])
        elif op == 'select':
            c, a, b = (self.values[x] for x in s.args)
            self.values[s] = self.op('OpSelect', self.t(s.dtype), c, a, b)
        elif op == 'alloca':
            if 'size' in s.attrs:
                arr = self.m.array(self.t(s.dtype), s.attrs['size'])
                v = self.m.new('arr')
                self.vars.append(f'{v} = OpVariable {self.m.pointer("Function", arr)} Function')
                self.values[s] = v
            else:
                self.values[s] = self.local_var(s.dtype, 'l')
        elif op in ('aload', 'astore'):
            ptr = self.op('OpAccessChain', self.m.pointer('Function', self.t(s.args[0].dtype)),
                          self.values[s.args[0]], self.values[s.args[1]])
            if op == 'aload':
                self.values[s] = self.op('OpLoad', self.t(s.dtype), ptr)
            else:
                self.emit(f'OpStore {ptr} {self.values[s.args[2]]}')
        elif op == 'load':
            self.values[s] = self.op('OpLoad', self.t(s.dtype), self.values[s.args[0]])
        elif op == 'store':
            self.emit(f'OpStore {self.values[s.args[0]]} {self.values[s.args[1]]}')
        elif op in ('gload', 'gstore') and s.buf.dtype.is_narrow:
            from . import narrow
            if op == 'gload':
                self.values[s] = narrow.load(self, s)
            else:
                narrow.store(self, s)
        elif op == 'gload':
            vec = self.vector_load(s)
            if vec is not None:
                self.values[s] = self.op('OpCompositeExtract', self.t(s.dtype), vec,
                                         str(s.attrs.get('comp', 0)))
                return
            ptr = self.element_ptr(s)
            v = self.op('OpLoad', self.t(self.storage_type(s.buf)), ptr)
            self.values[s] = self.from_storage(s.buf, v)
        elif op == 'gstore':
            ptr = self.element_ptr(s)
            self.emit(f'OpStore {ptr} {self.to_storage(s.buf, self.values[s.value_arg])}')
        elif op == 'atomic':
            self.values[s] = self.gen_atomic(s)
        elif op == 'if':
            self.gen_if(s)
        elif op == 'for':
            self.gen_for(s)
        elif op == 'while':
            self.gen_while(s)
        elif op == 'break':
            self.emit(f'OpBranch {self.loops[-1][0]}')
            self.terminated = True
        elif op == 'continue':
            self.emit(f'OpBranch {self.loops[-1][1]}')
            self.terminated = True
        elif op == 'random':
            self.values[s] = self.gen_random(s.dtype)
        elif op in ('local_index', 'group_index'):
            self.values[s] = self.op('OpBitcast', self.t(T.i32), self.builtin_x(
                'LocalInvocationId' if op == 'local_index' else 'WorkgroupId'))
        elif op in ('sg_reduce', 'sg_elect', 'sg_invocation_id', 'sg_size'):
            from .subgroup import gen as gen_subgroup
            self.values[s] = gen_subgroup(self, s)
        elif op == 'group_count':
            self.values[s] = self.op('OpBitcast', self.t(T.i32), self.nwg)
        elif op == 'wg_sum':
            self.values[s] = self.gen_wg_sum(s)
        else:
            raise self.fail(s, f'internal: codegen has no rule for IR op {op!r}')

    def gen_unary(self, s):
        x, dt = self.values[s.args[0]], s.dtype
        op = s.op
        if op == 'neg':
            return self.op('OpFNegate' if dt.is_float else 'OpSNegate', self.t(dt), x)
        if op == 'not':
            return self.op('OpLogicalNot', self.t(dt), x)
        if op == 'bnot':
            return self.op('OpNot', self.t(dt), x)
        if op == 'abs':
            if dt.is_float:
                return self.glsl('FAbs', dt, x)
            return self.glsl('SAbs', dt, x) if dt.is_signed else x
        if dt.bits == 64 and op not in _F64_OK:
            raise self.fail(s, f'internal: f64 {op} must be lowered before codegen')
        if op in ('asin', 'acos'):
            # through atan2(x, sqrt(1 - x^2)): some drivers' Asin/Acos are far less accurate
            # (lavapipe: 4e-4 absolute error) than their Atan2. Undefined outside [-1, 1], as in GLSL
            t = self.t(dt)
            one = self.m.const(dt, 1.0)
            c = self.glsl('Sqrt', dt, self.op('OpFMul', t, self.op('OpFSub', t, one, x),
                                              self.op('OpFAdd', t, one, x)))
            return self.glsl('Atan2', dt, x, c) if op == 'asin' else self.glsl('Atan2', dt, c, x)
        if op == 'tanh' and dt is T.f32:
            from . import f32fix
            return f32fix.tanh(self, x)
        return self.glsl(_GLSL[op], dt, x)

    def gen_binary(self, s):
        a, b = (self.values[x] for x in s.args)
        op, at = s.op, s.args[0].dtype
        dt, t = s.dtype, self.t(s.dtype)
        if op in _FCMP:
            table = _FCMP if at.is_float else _SCMP if at.is_signed else _UCMP
            if at.is_bool:
                return self.op('OpLogicalEqual' if op == 'eq' else 'OpLogicalNotEqual', t, a, b)
            return self.op(table[op], t, a, b)
        if op in ('land', 'lor'):
            return self.op('OpLogicalAnd' if op == 'land' else 'OpLogicalOr', t, a, b)
        f = dt.is_float
        simple = {'add': ('OpFAdd', 'OpIAdd'), 'sub': ('OpFSub', 'OpISub'),
                  'mul': ('OpFMul', 'OpIMul')}
        if op in simple:
            return self.op(simple[op][0 if f else 1], t, a, b)
        if op == 'div':
            return self.op('OpFDiv', t, a, b)
        if op == 'mod':
            if f or not dt.is_signed:
                return self.op('OpFMod' if f else 'OpUMod', t, a, b)
            # Python's sign rule (the divisor's), built from OpSRem: some drivers (Mesa's
            # lavapipe) implement OpSMod as a remainder
            r = self.op('OpSRem', t, a, b)
            zero, bl = self.m.const(dt, 0), self.m.bool()
            adjust = self.op('OpLogicalAnd', bl, self.op('OpINotEqual', bl, r, zero),
                             self.op('OpLogicalNotEqual', bl, self.op('OpSLessThan', bl, r, zero),
                                     self.op('OpSLessThan', bl, b, zero)))
            return self.op('OpSelect', t, adjust, self.op('OpIAdd', t, r, b), r)
        if op == 'floordiv':
            if f:
                return self.glsl('Floor', dt, self.op('OpFDiv', t, a, b))
            if not dt.is_signed:
                return self.op('OpUDiv', t, a, b)
            q = self.op('OpSDiv', t, a, b)
            r = self.op('OpSRem', t, a, b)
            zero = self.m.const(dt, 0)
            bl = self.m.bool()
            adjust = self.op('OpLogicalAnd', bl, self.op('OpINotEqual', bl, r, zero),
                             self.op('OpLogicalNotEqual', bl, self.op('OpSLessThan', bl, r, zero),
                                     self.op('OpSLessThan', bl, b, zero)))
            return self.op('OpISub', t, q, self.op('OpSelect', t, adjust, self.m.const(dt, 1), zero))
        if op in ('min', 'max'):
            name = ('F' if f else 'S' if dt.is_signed else 'U') + ('Min' if op == 'min' else 'Max')
            return self.glsl(name, dt, a, b)
        if op in ('pow', 'atan2'):
            if dt.bits == 64:
                raise self.fail(s, f'internal: f64 {op} must be lowered before codegen')
            if op == 'atan2':
                from . import f32fix
                return f32fix.atan2(self, a, b)
            return self.glsl(_GLSL[op], dt, a, b)
        if op in ('band', 'bor', 'bxor'):
            if dt.is_bool:
                name = {'band': 'OpLogicalAnd', 'bor': 'OpLogicalOr', 'bxor': 'OpLogicalNotEqual'}[op]
            else:
                name = {'band': 'OpBitwiseAnd', 'bor': 'OpBitwiseOr', 'bxor': 'OpBitwiseXor'}[op]
            return self.op(name, t, a, b)
        if op == 'shl':
            return self.op('OpShiftLeftLogical', t, a, b)
        if op == 'shr':
            return self.op('OpShiftRightArithmetic' if dt.is_signed else 'OpShiftRightLogical', t, a, b)
        raise self.fail(s, f'internal: no rule for binary op {op}')

    def gen_cast(self, x, src, dst):
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
            if src.is_signed or not dst.is_signed:
                return self.op('OpSConvert' if src.is_signed else 'OpUConvert', t, x)
            # unsigned to a wider signed type: OpUConvert needs an unsigned result
            return self.op('OpBitcast', t, self.op('OpUConvert', self.t(T.u64), x))
        # narrowing: convert in the source signedness, then reinterpret
        mid = T.i32 if src.is_signed else T.u32
        y = self.op('OpSConvert' if src.is_signed else 'OpUConvert', self.t(mid), x)
        return y if mid is dst else self.op('OpBitcast', t, y)

    # ------------------------------------------------------------ global memory
    def element_ptr(self, s):
        f = s.buf
        i32 = self.t(T.i32)
        idx = None
        for k, (ix, n) in enumerate(zip(s.indices, f.shape)):
            v = self.values[ix]
            idx = v if idx is None else self.op('OpIAdd', i32, self.op('OpIMul', i32, idx,
                                                                       self.m.i32(n)), v)
        comp = s.attrs.get('comp', 0)
        if f.ncomp > 1:
            base = self.op('OpIMul', i32, idx, self.m.i32(f.ncomp)) if idx is not None else None
            idx = self.op('OpIAdd', i32, base, self.m.i32(comp)) if base is not None else self.m.i32(comp)
        elif idx is None:
            idx = self.m.i32(0)
        st = self.storage_type(f)
        return self.op('OpAccessChain', self.m.pointer('StorageBuffer', self.t(st)),
                       self.buffers[f], self.m.i32(0), idx)

    def vector_load(self, s):
        """Components of one vec2/vec4 field element read in the same block share one vector
        load (through a second, vector-typed view of the same binding)."""
        f = s.buf
        if f.ncomp not in (2, 4) or f in self.int_view or f.dtype.is_narrow or not s.indices or \
                s.attrs.get('comp', 0) < 0 or f in self.vec_written:
            return None
        key = (id(s.parent), f, tuple(id(i) for i in s.indices))
        vec = self.vec_loads.get(key)
        if vec is None:
            m = self.m
            vt = m.vector(self.t(f.dtype), f.ncomp)
            var = m._cached(('vecview', f), lambda: self._vector_view(f, vt))
            i32 = self.t(T.i32)
            idx = None
            for ix, n in zip(s.indices, f.shape):
                v = self.values[ix]
                idx = v if idx is None else self.op('OpIAdd', i32, self.op('OpIMul', i32, idx,
                                                                           m.i32(n)), v)
            ptr = self.op('OpAccessChain', m.pointer('StorageBuffer', vt), var, m.i32(0), idx)
            vec = self.vec_loads[key] = self.op('OpLoad', vt, ptr)
        return vec

    def _vector_view(self, f, vt):
        m = self.m
        k = self.fields.index(f)
        blk = m.buffer_block(vt, f.dtype.nbytes * f.ncomp)
        var = m._global('vbuf', f'OpVariable {m.pointer("StorageBuffer", blk)} StorageBuffer')
        m.decorations.append(f'OpDecorate {var} DescriptorSet 0')
        m.decorations.append(f'OpDecorate {var} Binding {k}')
        m.decorations.append(f'OpDecorate {var} NonWritable')
        return var

    def from_storage(self, f, v):
        return self.op('OpBitcast', self.t(f.dtype), v) if f in self.int_view else v

    def to_storage(self, f, v):
        return self.op('OpBitcast', self.t(self.storage_type(f)), v) if f in self.int_view else v

    def gen_atomic(self, s):
        from .atomics import gen_atomic
        return gen_atomic(self, s)

    # ------------------------------------------------------------ delegated
    def builtin_x(self, name):
        from .workgroup import builtin_x
        return builtin_x(self, name)

    def gen_wg_sum(self, s):
        from .workgroup import gen_wg_sum
        return gen_wg_sum(self, s)

    def init_rng(self):
        from .rng import init_rng
        init_rng(self)

    def gen_random(self, dt):
        from .rng import gen_random
        return gen_random(self, dt)


def _safe(name):
    return ''.join(c if c.isalnum() or c in '_.' else '_' for c in name)
