"""Codegen stage: the SPIR-V lowerings of the op table's scalar ops that are more than one
instruction (vkdiff/optable.py names them in its `spirv` column). Each is a function
(cg, stmt, *operand ids) -> result id, where cg is the task's codegen (codegen/spirv.py)."""
from .. import types as T
from . import f32fix


def abs_(cg, s, x):
    dt = s.dtype
    if dt.is_float:
        return cg.glsl('FAbs', dt, x)
    return cg.glsl('SAbs', dt, x) if dt.is_signed else x


def _asin_acos(cg, s, x, asin):
    # through atan2(x, sqrt(1 - x^2)): some drivers' Asin/Acos are far less accurate (lavapipe:
    # 4e-4 absolute error) than their Atan2. Undefined outside [-1, 1], as in GLSL
    dt = s.dtype
    t = cg.t(dt)
    one = cg.m.const(dt, 1.0)
    c = cg.glsl('Sqrt', dt, cg.op('OpFMul', t, cg.op('OpFSub', t, one, x), cg.op('OpFAdd', t, one, x)))
    y, x = (x, c) if asin else (c, x)
    return f32fix.atan2(cg, y, x) if dt is T.f32 else cg.glsl('Atan2', dt, y, x)


def asin(cg, s, x):
    return _asin_acos(cg, s, x, True)


def acos(cg, s, x):
    return _asin_acos(cg, s, x, False)


def tanh(cg, s, x):
    return f32fix.tanh(cg, x) if s.dtype is T.f32 else cg.glsl('Tanh', s.dtype, x)


def atan2(cg, s, y, x):
    return f32fix.atan2(cg, y, x)


def lshr(cg, s, a, b):
    """Logical shift right (`ti.bit_shr`). A signed 8/16-bit value lives sign-extended in its
    32-bit register: its own bits are masked out first, so zeros (not copies of the sign) come
    in at the top of its width; `narrow` then re-extends the result."""
    dt = s.dtype
    if dt.is_narrow and dt.is_signed:
        a = cg.op('OpBitwiseAnd', cg.t(dt), a, cg.m.const(dt.reg, (1 << dt.bits) - 1))
    return cg.op('OpShiftRightLogical', cg.t(dt), a, b)


def _python_sign_adjust(cg, dt, r, b):
    """r != 0 and sign(r) != sign(b): the remainder needs moving to the divisor's sign."""
    zero, bl = cg.m.const(dt, 0), cg.m.bool()
    return cg.op('OpLogicalAnd', bl, cg.op('OpINotEqual', bl, r, zero),
                 cg.op('OpLogicalNotEqual', bl, cg.op('OpSLessThan', bl, r, zero),
                       cg.op('OpSLessThan', bl, b, zero)))


def _safe_divisor(cg, dt, a, b):
    """(divisor, zero): b, or 1 where b == 0 or (signed) a == MIN and b == -1, whose SPIR-V
    division is undefined (lavapipe: -1). With 1 there, x // 0 and x % 0 give numpy's 0 after
    the caller's select on `zero`; MIN // -1 wraps to MIN and MIN % -1 is 0, as in numpy."""
    r = dt.reg if dt.is_narrow else dt
    t, bl = cg.t(dt), cg.m.bool()
    zero = cg.op('OpIEqual', bl, b, cg.m.const(r, 0))
    bad = zero
    if dt.is_signed:
        lo = -(1 << (r.bits - 1))
        ovf = cg.op('OpLogicalAnd', bl, cg.op('OpIEqual', bl, a, cg.m.const(r, lo)),
                    cg.op('OpIEqual', bl, b, cg.m.const(r, -1)))
        bad = cg.op('OpLogicalOr', bl, zero, ovf)
    return cg.op('OpSelect', t, bad, cg.m.const(r, 1), b), zero


def mod(cg, s, a, b):
    dt, t = s.dtype, cg.t(s.dtype)
    if dt.is_float:
        return cg.op('OpFMod', t, a, b)
    b, zero = _safe_divisor(cg, dt, a, b)
    if not dt.is_signed:
        r = cg.op('OpUMod', t, a, b)
    else:
        # Python's sign rule (the divisor's), built from OpSRem: some drivers (Mesa's lavapipe)
        # implement OpSMod as a remainder
        r = cg.op('OpSRem', t, a, b)
        r = cg.op('OpSelect', t, _python_sign_adjust(cg, dt, r, b), cg.op('OpIAdd', t, r, b), r)
    return cg.op('OpSelect', t, zero, cg.m.const(dt, 0), r)


def floordiv(cg, s, a, b):
    dt, t = s.dtype, cg.t(s.dtype)
    if dt.is_float:
        return cg.glsl('Floor', dt, cg.op('OpFDiv', t, a, b))
    b, zero = _safe_divisor(cg, dt, a, b)
    if not dt.is_signed:
        q = cg.op('OpUDiv', t, a, b)
    else:
        q = cg.op('OpSDiv', t, a, b)
        r = cg.op('OpSRem', t, a, b)
        adjust = _python_sign_adjust(cg, dt, r, b)
        q = cg.op('OpISub', t, q, cg.op('OpSelect', t, adjust, cg.m.const(dt, 1), cg.m.const(dt, 0)))
    return cg.op('OpSelect', t, zero, cg.m.const(dt, 0), q)


def lower(cg, s, spirv, xs):
    """The SPIR-V of a table op from its `spirv` entry (see vkdiff/optable.py)."""
    at = s.args[0].dtype
    if isinstance(spirv, tuple):
        k = 3 if at.is_bool and len(spirv) > 3 else 0 if at.is_float else 1 if at.is_signed else 2
        spirv = spirv[k]
        if spirv is None:
            raise cg.fail(s, f'internal: no SPIR-V for {s.op} on {at}')
    if callable(spirv):
        return spirv(cg, s, *xs)
    if spirv.startswith('Op'):
        return cg.op(spirv, cg.t(s.dtype), *xs)
    return cg.glsl(spirv, s.dtype, *xs)
