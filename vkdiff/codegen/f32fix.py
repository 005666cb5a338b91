"""Codegen: f32 ops where GLSL.std.450 is undefined or loose and a driver's result differs from
numpy (measured on lavapipe). README "Accuracy" lists the tolerance per op.

- atan2(y, x) with y = +-0: numpy's +-0 (x > 0 or +0) / +-pi (x < 0 or -0), the sign of y. GLSL
  leaves x = y = 0 undefined (lavapipe: 3*pi/4), and SwiftShader gives atan2(-0, 1) = pi (so
  asin(-0) was pi). A NaN operand gives NaN (SwiftShader: atan2(inf, NaN) = pi/4).
- tanh(x) for |x| < 0.25: lavapipe's (e^2x - 1)/(e^2x + 1) loses all digits near 0 (1.3% error
  at 1e-6); here the odd Taylor polynomial through x^9 (truncation < 1e-8 relative; tanh(-0) is
  -0). For |x| >= 10, where f32 tanh rounds to +-1, +-1: SwiftShader's formula gives inf / inf =
  NaN past 44."""
from .. import types as T

_TANH = [-1.0 / 3, 2.0 / 15, -17.0 / 315, 62.0 / 2835]


def atan2(cg, y, x):
    m, f32, u32, bl = cg.m, cg.t(T.f32), cg.t(T.u32), cg.m.bool()
    r = cg.glsl('Atan2', T.f32, y, x)
    zero = m.const(T.f32, 0.0)
    yzero = cg.op('OpFOrdEqual', bl, y, zero)
    sign = m.u32(0x80000000)
    xneg = cg.op('OpINotEqual', bl, cg.op('OpBitwiseAnd', u32, cg.op('OpBitcast', u32, x), sign),
                 m.u32(0))
    base = cg.op('OpSelect', f32, xneg, m.const(T.f32, 3.141592653589793), zero)
    signed = cg.op('OpBitcast', f32, cg.op('OpBitwiseOr', u32, cg.op('OpBitcast', u32, base),
                                           cg.op('OpBitwiseAnd', u32, cg.op('OpBitcast', u32, y),
                                                 sign)))
    nan = cg.op('OpLogicalOr', bl, cg.op('OpIsNan', bl, x), cg.op('OpIsNan', bl, y))
    return cg.op('OpSelect', f32, nan, cg.op('OpFAdd', f32, x, y),
                 cg.op('OpSelect', f32, yzero, signed, r))


def tanh(cg, x):
    m, f32, bl = cg.m, cg.t(T.f32), cg.m.bool()
    r = cg.glsl('Tanh', T.f32, x)
    x2 = cg.op('OpFMul', f32, x, x)
    p = m.const(T.f32, _TANH[-1])
    for c in reversed(_TANH[:-1]):
        p = cg.op('OpFAdd', f32, cg.op('OpFMul', f32, p, x2), m.const(T.f32, c))
    small = cg.op('OpFAdd', f32, x, cg.op('OpFMul', f32, cg.op('OpFMul', f32, x, x2), p))
    small = cg.op('OpSelect', f32, cg.op('OpFOrdEqual', bl, x, m.const(T.f32, 0.0)), x, small)  # -0
    ax = cg.glsl('FAbs', T.f32, x)
    near0 = cg.op('OpFOrdLessThan', bl, ax, m.const(T.f32, 0.25))
    far = cg.op('OpFOrdGreaterThanEqual', bl, ax, m.const(T.f32, 10.0))
    return cg.op('OpSelect', f32, near0, small,
                 cg.op('OpSelect', f32, far, cg.glsl('FSign', T.f32, x), r))
