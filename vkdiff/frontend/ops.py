"""Values floor: scalar operations usable in both scopes: on Python numbers they compute at once (compile-time
folding, and `ti.sin(1.0)` in Python scope, with the op table's host functions); on run-time
`Value`s they emit IR through the kernel's builder (irbuild), which applies the op table's typing
(Taichi's rules). Matrices are handled elementwise by `lang.matrix`."""
import numpy as np

from .. import optable
from .. import types as T
from ..errors import TaichiTypeError
from .context import Value, error, current


def _is_matrix(x):
    return isinstance(x, _matrix.Matrix)


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


def as_value(x, dtype=None, exact=False):
    """A Value of `x` (a number becomes a constant of `dtype` or its literal type). A Python
    float is a default_fp constant first, as in Taichi 1.7.4: under default_fp=f32, 1.1 stored
    into an f64 is 1.100000023841858 (`exact`: ti.f64(1.1), which Taichi keeps exact)."""
    if not isinstance(x, Value) and not is_number(x):
        raise error(f'expected a number or a scalar kernel value, got {type(x).__name__}: {x!r}')
    v = _py(x)
    if (not exact and isinstance(v, float) and dtype is not None and dtype.is_float
            and dtype.bits > T.Defaults.fp.bits):
        with np.errstate(over='ignore'):
            x = float(T.Defaults.fp.np.type(v))
    return current().value(x, dtype)


def cast(x, dtype, exact=False):
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
        return as_value(v, dtype, exact) if in_kernel() else v
    return current().cast(x, dtype)


T.set_cast(lambda x, dtype: cast(x, dtype, exact=True))  # `ti.f32(x)`: types.py sits below the frontend


def to_bool(x):
    """Truth value of a run-time scalar as u1."""
    if isinstance(x, Value):
        return current().to_bool(x)
    if _is_matrix(x):
        raise error('a vector or matrix has no single truth value: compare its entries '
                    '(e.g. v[0] > 1 and v[1] > 1)')
    return bool(x)


def _shape(m):
    return (m.n, m.m, m.ndim)


def _operand_types(a, b):
    """Result type of a binary op; a Python literal adopts the other side's type where it fits."""
    return current().operand_types(a, b)


def _fold(op, a, b):
    return optable.OPS[op].fold(_py(a), _py(b))


def taichi_literal(x, other):
    """A Python number `x` next to the run-time Value `other`, typed as Taichi 1.7.4 types it: a
    default_ip / default_fp constant promoted with `other`. The builder lets a literal adopt the
    other side's type, which is the same type except next to an 8/16-bit value (`u8 - 1` is the
    i32 -1, `f16 * 1.1` is f32) or a value narrower than the defaults (`f32 * 1.1` is f64 under
    default_fp=f64); there `x` becomes a constant of Taichi's type. A float literal next to a
    wider float keeps default_fp's precision (with default_fp=f32, `f64 * 1.1` multiplies by
    1.100000023841858, as Taichi does). An integer that does not
    fit default_ip (Taichi rejects it) or a bool keeps adopting the other side's type."""
    if not isinstance(other, Value) or isinstance(x, Value) or not is_number(x):
        return x
    v = _py(x)
    if isinstance(v, bool) or other.dtype.is_bool:
        return x
    lt = T.literal_type(v)
    if isinstance(v, int):
        lo, hi = np.iinfo(lt.np).min, np.iinfo(lt.np).max
        if not lo <= v <= hi:
            return x
    t = T.promote(lt, other.dtype)
    if isinstance(v, float) and lt.bits < t.bits:
        with np.errstate(over='ignore'):  # an f32 literal next to an f64 value (1e300: inf)
            return as_value(float(lt.np.type(v)), t)
    adopted = other.dtype if other.dtype.is_float or isinstance(v, int) else lt
    return x if t is T.promote(adopted, other.dtype) else as_value(v, t)


def binary(op, a, b):
    if _is_matrix(a) or _is_matrix(b):
        a, b = _matrix._as_matrix(a), _matrix._as_matrix(b)  # `v == [1, 2]`
        if not in_kernel() and _is_matrix(a) and _is_matrix(b) and _shape(a) != _shape(b):
            return _matrix.host_broadcast(optable.OPS[op].host, a, b)  # Python scope: as Taichi does
        return _matrix.elementwise(lambda x, y: binary(op, x, y), a, b)
    if not isinstance(a, Value) and not isinstance(b, Value):
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            return _numpy_binary(op, a, b)
        return _fold(op, a, b)
    other = b if isinstance(a, Value) else a
    if not isinstance(other, Value) and not is_number(other):  # e.g. a field, not x[i]
        raise error(f"unsupported operand type(s) for '{op}': '{type(a).__name__}' and "
                    f"'{type(b).__name__}'", TaichiTypeError)
    if op == 'pow':
        return _pow(a, b)
    if op == 'div':  # Taichi's truediv: an integer operand is first a default_fp value
        a, b = _real(a), _real(b)
    return current().binary(op, taichi_literal(a, b), taichi_literal(b, a))


def _real(x):
    if isinstance(x, Value):
        return x if x.dtype.is_float else cast(x, T.Defaults.fp)
    return float(_py(x))


def _numpy_binary(op, a, b):
    return optable.OPS[op].host(a, b)


def _taichi_type(x):
    """The type Taichi gives an operand: a Value's own, a Python number's default_ip/fp."""
    return x.dtype if isinstance(x, Value) else T.literal_type(_py(x))


def _as_typed(x, lt, t):
    """Operand `x` of Taichi type `lt` as a Value of type `t` (a float literal is rounded to
    default_fp first: 1.1 under default_fp=f32 next to an f64 is 1.100000023841858)."""
    if isinstance(x, Value):
        return x if x.dtype is t else cast(x, t)
    v = _py(x)
    if isinstance(v, float) and lt.bits < t.bits:
        with np.errstate(over='ignore'):
            v = float(lt.np.type(v))
    return as_value(v, t)


def _pow(a, b):
    """`**` with Taichi 1.7.4's typing: Python numbers are default_ip / default_fp values; an
    integral exponent keeps the base's type (`u8 ** i32` is u8, `f32 ** 3` f32 under
    default_fp=f64), a float exponent promotes both (`f16 ** 2.5` is f32). A compile-time
    integer exponent becomes multiplications (exact, cheap to differentiate); a run-time
    integer one square-and-multiply (Taichi's demote_operations); otherwise pow on floats."""
    ta, tb = _taichi_type(a), _taichi_type(b)
    bc = None if isinstance(b, Value) else _py(b)
    if tb.is_float:
        t = T.promote(ta, tb)
        if not t.is_float:
            t = T.Defaults.fp
    else:
        t = ta
    a = _as_typed(a, ta, t)
    if isinstance(bc, int) or (isinstance(bc, float) and bc.is_integer() and abs(bc) <= 64):
        n = int(bc)
        if n == 0:
            return as_value(1, t)
        if n < 0 and not t.is_float:
            raise error(f'Negative exponent in pow(int, int) is not allowed (** {n}); cast '
                        'the base to float first')
        base = a if n > 0 else binary('div', as_value(1.0, t), a)
        result, p, k = None, base, abs(n)
        while k:  # square-and-multiply
            if k & 1:
                result = p if result is None else binary('mul', result, p)
            k >>= 1
            if k:
                p = binary('mul', p, p)
        return result
    if not tb.is_float:  # a run-time integer exponent
        if not t.is_float:
            if b.dtype.is_signed:
                _checks.check_exponent(a, b)  # (ti.init(check_out_of_bound=True))
            return _int_pow(a, b)
        # float ** run-time integer: the reciprocal for a negative exponent -- exact, and
        # defined for a negative base
        mag = _int_pow(a, b)
        return select(binary('lt', b, 0), binary('div', as_value(1.0, t), mag), mag)
    return current().binary('pow', a, _as_typed(b, tb, t))


def _int_pow(a, b):
    """a ** run-time integer b, as Taichi computes it: square-and-multiply over the bits of
    |b| (wrapping like repeated multiplication for an integer a), unrolled branch-free over b's
    width."""
    e = unary('abs', b)
    bits = b.dtype.bits
    result, p = as_value(1, a.dtype), a
    for k in range(bits - 1):
        bit = binary('ne', binary('band', binary('shr', e, k), 1), 0)
        result = select(bit, binary('mul', result, p), result)
        if k < bits - 2:  # squared only while higher bits remain: a float p never overflows
            # beyond the result (an inf there would make the gradient 0 * inf = NaN)
            p = select(binary('ne', binary('shr', e, k + 1), 0), binary('mul', p, p), p)
    return result


def unary(op, a):
    if _is_matrix(a):
        return a._map(lambda e: unary(op, e))
    if not isinstance(a, Value):
        a, o = _py(a), optable.OPS[op]
        if o.fold is not None:
            return o.fold(a)
        r = o.host(a)
        return float(r) if isinstance(r, np.floating) else r
    return current().unary(op, a)


def select(cond, a, b):
    if _is_matrix(cond) or _is_matrix(a) or _is_matrix(b):  # entry by entry, cond included
        return _matrix.elementwise(select, cond, a, b)
    if not isinstance(cond, Value):
        return a if cond else b
    return current().select(cond, taichi_literal(a, b), taichi_literal(b, a))


def in_kernel():
    return current() is not None


def reduce(fn, args):
    """ti.max(a, b, c) = max(a, max(b, c)): Taichi's order (it matters for NaN); one iterable
    argument is its items."""
    if len(args) == 1:
        args = tuple(args[0])
    acc = args[-1]
    for a in reversed(args[:-1]):
        acc = binary(fn, a, acc)
    return acc


# cycles inside the values floor: lang/matrix.py and frontend/checks.py import this module (only
# module objects here, bound after everything above is defined)
from ..lang import matrix as _matrix  # noqa: E402
from . import checks as _checks  # noqa: E402
