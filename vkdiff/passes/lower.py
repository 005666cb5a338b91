"""Pass: lowering before codegen. Ops whose op-table entry (vkdiff/optable.py) has an IR lowering
for the statement's type are expanded in place: f64 transcendentals (which GLSL.std.450 does not
provide) become vkdiff's own f64 implementations (passes/f64math.py), inlined as IR (also round,
ties away from zero, which GLSL leaves to the driver); a few f32 ops get an expansion where GLSL has no instruction.
Under ti.init(fast_math=False) the f32 ops with vkdiff's own accurate implementation (the op
table's `f32` column: passes/f32_trig.py, f32_explog.py, f32_divsqrt.py) are expanded into them."""
from .. import ir
from .. import optable
from .. import types as T
from ..errors import CompileError, located
from ..irbuild import Builder, building
from . import float_zero
from .f32ops import F32Ops
from .f64math import F64Ops

F64_LOWERED = optable.F64_LOWERED


class F64Builder(F64Ops, Builder):
    """The builder f64 lowerings run on: Python floats are f64 constants, deduplicated."""

    def __init__(self, block, loc, guard_input):
        super().__init__(block, loc=loc, default_fp=T.f64, cache_consts=True)
        self.guard_input = guard_input


class F32Builder(F32Ops, Builder):
    """The builder accurate f32 lowerings (fast_math=False) run on: Python floats are f32
    constants, deduplicated."""

    def __init__(self, block, loc):
        super().__init__(block, loc=loc, default_fp=T.f32, cache_consts=True)


def lowering(s, fast_math=True):
    """The op table's IR lowering for statement `s`, or None. With fast_math=False, an f32 op
    with vkdiff's own accurate implementation (the table's `f32` column) gets that."""
    o = optable.OPS.get(s.op)
    if o is None or s.dtype is None or not s.dtype.is_float:
        return None
    if s.dtype is T.f32 and not fast_math and o.f32 is not None:
        return o.f32
    return o.f64 if s.dtype is T.f64 else o.lower


def lower_stmt(stmt, fn):
    """Replace `stmt` in place by the IR `fn(builder, *operands)` builds (operands as irbuild
    Values, Python operators emitting into `builder`); `stmt` becomes its last operation, so its
    users are unchanged."""
    block = ir.Block()
    if stmt.dtype is T.f64:
        b = F64Builder(block, stmt.loc, stmt.args[0])
    elif stmt.dtype is T.f32 and stmt.op in optable.ACCURATE_F32 and fn is optable.OPS[stmt.op].f32:
        b = F32Builder(block, stmt.loc)
    else:
        b = Builder(block, loc=stmt.loc, default_fp=stmt.dtype)
    with building(b):  # operands are Values: the lowering may use Python operators
        result = b.value(fn(b, *[b.V(a) for a in stmt.args]), stmt.dtype).stmt
    if block.stmts and block.stmts[-1] is result and result.dtype is stmt.dtype:
        block.stmts.pop()                     # stmt takes over the final operation
        stmt.op, stmt.args, stmt.attrs = result.op, list(result.args), dict(result.attrs)
    else:
        true = b.const(True, T.u1).stmt
        stmt.op, stmt.args, stmt.attrs = 'select', [true, result, result], {}
    parent = stmt.parent
    i = parent.stmts.index(stmt)
    for s in block.stmts:
        parent.insert(i, s)
        i += 1
    return stmt


def lower_f64(stmt):
    """Replace the f64 transcendental `stmt` in place by inlined f64 arithmetic."""
    fn = optable.OPS[stmt.op].f64 if stmt.op in optable.OPS else None
    if fn is None:
        raise ValueError(f'internal: no f64 lowering for {stmt.op!r}')
    return lower_stmt(stmt, fn)


def lower_task(task, features, fast_math=True):
    for s in list(ir.walk(task.body)):
        fn = lowering(s, fast_math)
        if fn is not None:
            lower_stmt(s, fn)
    float_zero.rewrite_task(task.body, lower_stmt)   # x / 0.0, x * 0.0: drivers fold them wrongly
    for s in ir.walk(task.body):  # after lowering: its statements need features too
        if (s.dtype in (T.f64,) or any(a.dtype is T.f64 for a in s.args)) and not features.get('float64'):
            raise located(CompileError, 'this Vulkan device has no 64-bit floats (shaderFloat64); '
                          'use f32', s.loc)
        if (s.dtype in (T.i64, T.u64)) and not features.get('int64'):
            raise located(CompileError, 'this Vulkan device has no 64-bit integers (shaderInt64)', s.loc)
