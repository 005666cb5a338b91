"""Scalar operations usable in both scopes: on Python numbers they compute at once (compile-time
folding, and `ti.sin(1.0)` in Python scope); on run-time `Value`s they emit IR with Taichi's
type rules. Matrices are handled elementwise by `lang.matrix`."""
import math

import numpy as np

from .. import types as T
from .context import Value, emit, error, current

FLOAT_UNARY = {'sin', 'cos', 'tan', 'asin', 'acos', 'atan', 'sqrt', 'rsqrt', 'exp', 'log', 'tanh'}
ROUNDING = {'floor', 'ceil', 'round'}


def _is_matrix(x):
    from ..lang.matrix import Matrix
    return isinstance(x, Matrix)


def is_number(x):
    return isinstance(x, (int, float, bool, np.integer, np.floating, np.bool_))


def _py(x):
    """numpy scalar -> Python number."""
    if isinstance(x, np.generic):
        return x.item()
    return x


def dtype_of(x):
    if isinstance(x, Value):
        return x.dtype
    return T.literal_type(_py(x))


def as_value(x, dtype=None):
    """A Value of `x` (a number becomes a constant of `dtype` or its literal type)."""
    if isinstance(x, Value):
        return x if dtype is None or x.dtype is dtype else cast(x, dtype)
    if not is_number(x):
        raise error(f'expected a number or a scalar kernel value, got {type(x).__name__}: {x!r}')
    x = _py(x)
    dtype = dtype or T.literal_type(x)
    if dtype.is_float:
        x = float(x)
    elif dtype.is_bool:
        x = bool(x)
    else:
        x = int(x)
    return Value(emit('const', dtype, attrs={'value': x}))


def cast(x, dtype):
    dtype = T.resolve(dtype)
    if _is_matrix(x):
        return x._map(lambda e: cast(e, dtype))
    if not isinstance(x, Value):
        x = _py(x)
        if dtype.is_float:
            v = float(np.dtype(dtype.np).type(x))
        else:
            v = int(np.array(x).astype(dtype.np))
        # in a kernel the number keeps the type it was cast to: `a = ti.cast(0, ti.f64)` is an
        # f64 local, `ti.cast(3000000000, ti.i64) * 3` an i64 product
        return as_value(v, dtype) if in_kernel() else v
    if x.dtype is dtype:
        return x
    return Value(emit('cast', dtype, [x]))


T.set_cast(cast)  # `ti.f32(x)`: types.py sits below the frontend


def to_bool(x):
    """Truth value of a run-time scalar as u1."""
    if isinstance(x, Value):
        if x.dtype is T.u1:
            return x
        return binary('ne', x, 0)
    if _is_matrix(x):
        raise error('a vector or matrix has no single truth value: compare its entries '
                    '(e.g. v[0] > 1 and v[1] > 1)')
    return bool(x)


def _operand_types(a, b):
    """Result type of a binary op; a Python literal adopts the other side's type where it fits."""
    ta, tb = dtype_of(a), dtype_of(b)
    if not isinstance(a, Value):
        ta = tb if (tb.is_float or isinstance(_py(a), (int, bool))) and not tb.is_bool else ta
    if not isinstance(b, Value):
        tb = ta if (ta.is_float or isinstance(_py(b), (int, bool))) and not ta.is_bool else tb
    return T.promote(ta, tb)


def _fold(op, a, b):
    a, b = _py(a), _py(b)
    if op == 'div':
        return a / b
    if op == 'floordiv':
        return a // b
    if op == 'mod':
        return a % b
    if op == 'pow':
        return a ** b
    if op == 'atan2':
        return math.atan2(a, b)
    fn = {'add': lambda: a + b, 'sub': lambda: a - b, 'mul': lambda: a * b,
          'min': lambda: min(a, b), 'max': lambda: max(a, b), 'lt': lambda: a < b,
          'le': lambda: a <= b, 'gt': lambda: a > b, 'ge': lambda: a >= b, 'eq': lambda: a == b,
          'ne': lambda: a != b, 'band': lambda: a & b, 'bor': lambda: a | b, 'bxor': lambda: a ^ b,
          'shl': lambda: a << b, 'shr': lambda: a >> b, 'land': lambda: bool(a and b),
          'lor': lambda: bool(a or b)}[op]
    return fn()


def binary(op, a, b):
    if _is_matrix(a) or _is_matrix(b):
        from ..lang.matrix import elementwise, _as_matrix  # `v == [1, 2]`: a list is a vector
        return elementwise(lambda x, y: binary(op, x, y), _as_matrix(a), _as_matrix(b))
    if not isinstance(a, Value) and not isinstance(b, Value):
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return _numpy_binary(op, a, b)
        return _fold(op, a, b)
    if op == 'pow':
        return _pow(a, b)
    if op in ('land', 'lor'):
        return Value(emit(op, T.u1, [as_value(to_bool(a), T.u1), as_value(to_bool(b), T.u1)]))
    t = _operand_types(a, b)
    if op == 'div':
        if not t.is_float:
            t = T.Defaults.fp
    elif op in ('band', 'bor', 'bxor', 'shl', 'shr'):
        if t.is_float:
            raise error(f'bitwise operation on a float ({t})')
    elif op == 'atan2' and not t.is_float:
        t = T.Defaults.fp
    va, vb = as_value(a, t), as_value(b, t)
    if op in ('shl', 'shr'):
        va, vb = as_value(a), as_value(b, dtype_of(a) if isinstance(a, Value) else t)
        t = va.dtype
    rt = T.u1 if op in ('lt', 'le', 'gt', 'ge', 'eq', 'ne') else t
    return Value(emit(op, rt, [va, vb]))


def _numpy_binary(op, a, b):
    f = {'add': np.add, 'sub': np.subtract, 'mul': np.multiply, 'div': np.true_divide,
         'floordiv': np.floor_divide, 'mod': np.mod, 'pow': np.power, 'min': np.minimum,
         'max': np.maximum, 'atan2': np.arctan2}[op]
    return f(a, b)


def _pow(a, b):
    """`**`: a compile-time integer exponent becomes multiplications (exact, cheap to
    differentiate); otherwise pow on floats."""
    bc = None if isinstance(b, Value) else _py(b)
    if isinstance(a, Value) and (isinstance(bc, int) or (
            isinstance(bc, float) and bc.is_integer() and abs(bc) <= 64)):
        if isinstance(bc, float) and not a.dtype.is_float:
            a = cast(a, T.Defaults.fp)
        n = int(bc)
        if n == 0:
            return as_value(1, a.dtype)
        if n < 0 and not a.dtype.is_float:
            raise error('integer ** negative integer is not supported; cast to float first')
        base = a if n > 0 else binary('div', 1.0, a)
        result, p, k = None, base, abs(n)
        while k:  # square-and-multiply
            if k & 1:
                result = p if result is None else binary('mul', result, p)
            k >>= 1
            if k:
                p = binary('mul', p, p)
        return result
    t = _operand_types(a, b)
    if not t.is_float:
        return _int_pow(as_value(a, t), as_value(b, t))
    return Value(emit('pow', t, [as_value(a, t), as_value(b, t)]))


def _int_pow(a, b):
    """Integer ** run-time integer, as Taichi computes it: square-and-multiply over the bits of
    |b| (wrapping like repeated multiplication), unrolled branch-free over the type's width."""
    e = unary('abs', b)
    result, p = as_value(1, a.dtype), a
    for k in range(a.dtype.bits - 1):
        bit = binary('ne', binary('band', binary('shr', e, k), 1), 0)
        result = select(bit, binary('mul', result, p), result)
        if k < a.dtype.bits - 2:
            p = binary('mul', p, p)
    return result


_NUMPY_UNARY = {'sin': np.sin, 'cos': np.cos, 'tan': np.tan, 'asin': np.arcsin, 'acos': np.arccos,
                'atan': np.arctan, 'sqrt': np.sqrt, 'exp': np.exp, 'log': np.log, 'tanh': np.tanh,
                'floor': np.floor, 'ceil': np.ceil, 'round': np.round, 'abs': np.abs,
                'neg': np.negative, 'rsqrt': lambda x: 1 / np.sqrt(x), 'not': np.logical_not,
                'bnot': np.invert}


def unary(op, a):
    if _is_matrix(a):
        return a._map(lambda e: unary(op, e))
    if not isinstance(a, Value):
        a = _py(a)
        if op == 'neg':
            return -a
        if op == 'not':
            return not a
        if op == 'bnot':
            return ~a
        if op == 'abs':
            return abs(a)
        r = _NUMPY_UNARY[op](a)
        return float(r) if isinstance(r, np.floating) else r
    t = a.dtype
    if op == 'not':
        return Value(emit('not', T.u1, [to_bool(a)]))
    if op in FLOAT_UNARY or op in ROUNDING:
        if not t.is_float:
            t = T.Defaults.fp
    if op == 'bnot' and t.is_float:
        raise error('~ on a float')
    if op == 'neg' and t.is_bool:
        t = T.i32
    return Value(emit(op, t, [as_value(a, t)]))


def select(cond, a, b):
    if _is_matrix(cond) or _is_matrix(a) or _is_matrix(b):  # entry by entry, cond included
        from ..lang.matrix import elementwise
        return elementwise(select, cond, a, b)
    if not isinstance(cond, Value):
        return a if cond else b
    t = _operand_types(a, b)
    return Value(emit('select', t, [to_bool(cond), as_value(a, t), as_value(b, t)]))


def in_kernel():
    return current() is not None
