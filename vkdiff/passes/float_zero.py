"""Pass helper (lowering, passes/lower.py): float `x / 0.0` and `x * 0.0` with a zero the compiler
can see, computed by vkdiff with IEEE results.

Lavapipe (Mesa 22.3) folds a float division by a constant +0.0 to 0 and a product with a
constant zero to +0, even when the shader declares the SignedZeroInfNanPreserve execution mode
(measured: `OpFDiv %x %float_0` stored 0 for x = 1, -2, 0, inf; with a run-time zero read from a
field it gives inf / -inf / NaN). So a `div` or `mul` whose operand is a constant +-0 (after
simplification: `t = 0.0; y / (t * t)` too) is replaced by integer operations on the bits:
  x / +-0 = +-inf (sign of x times sign of the zero), NaN for x = +-0 or NaN;
  x * +-0 = +-0 (the same sign rule), NaN for x = +-inf or NaN.
"""
import math

from .. import ir
from .. import types as T

_INT = {32: T.i32, 64: T.i64}


def _zero_operand(s):
    """The index of a constant +-0.0 operand of a float div (divisor) or mul, else None."""
    if s.dtype is None or not s.dtype.is_float or s.dtype.bits not in _INT:
        return None
    idx = (1,) if s.op == 'div' else (1, 0) if s.op == 'mul' else ()
    for k in idx:
        a = s.args[k]
        if a.op == 'const' and a.attrs['value'] == 0.0:
            return k
    return None


def rewrite(s, lower_stmt):
    """Replace `s` in place when it divides or multiplies by a visible zero (see the docstring).
    `lower_stmt(stmt, fn)` is passes/lower.py's in-place expansion."""
    k = _zero_operand(s)
    if k is None:
        return False
    op, bits = s.op, s.dtype.bits
    zero_negative = math.copysign(1.0, s.args[k].attrs['value']) < 0
    it = _INT[bits]
    sign_bit = -(1 << (bits - 1))
    abs_mask = (1 << (bits - 1)) - 1
    exp_bits = 0x7F800000 if bits == 32 else 0x7FF0000000000000

    def fn(b, *args):
        x = args[1 - k] if op == 'mul' else args[0]
        xb = b.bitcast(x, it)
        sign = b.band(xb, sign_bit)
        if zero_negative:
            sign = b.bxor(sign, sign_bit)
        mag = b.band(xb, abs_mask)
        if op == 'div':
            res = b.bitcast(b.bor(sign, exp_bits), s.dtype)            # +-inf
            bad = b.lor(b.eq(mag, 0), b.gt(mag, exp_bits))              # 0 / 0, NaN / 0
        else:
            res = b.bitcast(sign, s.dtype)                              # +-0
            bad = b.ge(mag, exp_bits)                                   # inf * 0, NaN * 0
        return b.select(bad, b.const(float('nan'), s.dtype), res)
    lower_stmt(s, fn)
    return True


def rewrite_task(body, lower_stmt):
    for s in list(ir.walk(body)):
        if s.op in ('div', 'mul'):
            rewrite(s, lower_stmt)
