"""Pass: lowering before codegen. f64 transcendentals (which GLSL.std.450 does not provide) are
replaced by vkdiff's own f64 implementations, inlined as IR (also f64 round, which drivers get wrong)."""
from .. import ir
from .. import types as T
from ..errors import CompileError, located

F64_NATIVE_UNARY = {'neg', 'not', 'bnot', 'sqrt', 'rsqrt', 'floor', 'ceil', 'abs'}
F64_LOWERED = {'sin', 'cos', 'tan', 'asin', 'acos', 'atan', 'exp', 'log', 'tanh', 'pow', 'atan2', 'round'}


def lower_task(task, features):
    for s in list(ir.walk(task.body)):
        if s.dtype is T.f64 and s.op in F64_LOWERED:
            from .f64math import lower_f64
            lower_f64(s)
    for s in ir.walk(task.body):  # after lowering: its statements need features too
        if (s.dtype in (T.f64,) or any(a.dtype is T.f64 for a in s.args)) and not features.get('float64'):
            raise located(CompileError, 'this Vulkan device has no 64-bit floats (shaderFloat64); '
                          'use f32', s.loc)
        if (s.dtype in (T.i64, T.u64)) and not features.get('int64'):
            raise located(CompileError, 'this Vulkan device has no 64-bit integers (shaderInt64)', s.loc)
