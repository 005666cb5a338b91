"""Pass helper (lowering, passes/lower.py; fast_math=False): f32 sin, cos and tan, in f32 and
32-bit integers only, the same bits on every driver.

Reduction by pi/2: for |x| <= 800 Cody-Waite (pi/2 in four parts, n*part exact for the first
three, the differences as double-f32 with two_sum); beyond, inside an IR `if` (so that the common
case does not pay for it), exact over the whole finite range (Payne-Hanek in integer arithmetic,
as passes/f64_trig.py for f64, with 12-bit limbs so that every product and column sum fits an i32):
  |x| = m * 2^e, m the 24-bit integer mantissa. x * 2/pi mod 4 needs the bits of 2/pi from weight
  2^-(e-1) on; a 96-bit window W of them is cut from a table (a per-thread array of 12-bit limbs,
  indexed by e), m * W mod 2^96 is computed exactly in limbs; its top two bits are n mod 4, the
  rest the fraction f, rounded to nearest (|f| <= 1/2). f becomes hi + lo (each a 24-bit integer
  times a power of two, from f's first nonzero limb: >= 37 significant bits; the smallest |f| of
  any f32 is about 2^-30) and r = f * pi/2 a double-f32 rh + rl (f32ops.two_prod).
  |x| <= pi/4 is not reduced (r = x).
Kernels on |r| <= pi/4: sin r = r + r^3 S(r^2), cos r = 1 - r^2/2 + r^4 C(r^2) (coefficients fitted
by tools/f32math_coeffs.py, relative error < 2e-10 before rounding them to f32), each summed as
a double-f32 with rl's first-order term; tan = sin/cos (or -cos/sin) as a double-f32 quotient with
one correction (f32_divsqrt.ratio_dd: no driver's division shows).
"""
import math

from .f32ops import NAN, f32
from .f32_divsqrt import ratio_dd
from .f64_trig import _pi_fixed, limb_product

LIMB = 12
M12 = (1 << LIMB) - 1
WINDOW = 8                              # limbs of 2/pi per reduction (96 bits)
PAD = 26                                # zero bits in front of 2/pi (windows for |x| < 1)
TABLE_LIMBS = 20                        # PAD + 104 (the last exponent) + 96 + 12 bits
_NBITS = TABLE_LIMBS * LIMB
_PI = _pi_fixed(_NBITS + 64)
_TWO_OVER_PI = ((2 << (2 * (_NBITS + 64))) // _PI) >> (64 + PAD)
TABLE = [(_TWO_OVER_PI >> (_NBITS - LIMB * (j + 1))) & M12 for j in range(TABLE_LIMBS)]

PIO2_H = f32(math.pi / 2)
PIO2_L = f32(math.pi / 2 - PIO2_H)
PIO4 = f32(math.pi / 4)                 # (just above pi/4: the kernels' fits reach past it)

# Cody-Waite for |x| <= CW_MAX: pi/2 in four parts, the first three with 15 significant bits (so
# n * part is exact for n <= 2^9), 24 + 45 bits in all
CW = [1.57073974609375, 5.657970905303955e-05, 9.920881893776823e-10, 5.390302953474238e-15]
CW_MAX = 800.0
CW_MAX_BITS = 0x44480000                # the bits of 800.0
TWO_OVER_PI = 0.6366197466850281

SIN_S = [-0.1666666716337204, 0.008333331905305386, -0.00019840057939291, 2.7246344416198554e-06]
COS_C = [0.0416666679084301, -0.00138888880610466, 2.4800578103167936e-05, -2.729812820234656e-07]


def reduce_pio2(b, x):
    """(rh, rl, q): x = n*pi/2 + rh + rl, |rh + rl| <= ~pi/4, q = n mod 4 (i32). Cody-Waite for
    |x| <= CW_MAX; beyond (NaN and infinities included), Payne-Hanek, inside an IR `if`."""
    ax = b.fabs(x)
    nf = b.floor(b.add(b.mul(b.min(ax, CW_MAX), TWO_OVER_PI), 0.5))   # n <= 510 < 2^9
    t1 = b.sub(ax, b.mul(nf, CW[0]))                    # exact (Sterbenz), n*CW[k] exact
    s, e = b.two_sum(t1, b.neg(b.mul(nf, CW[1])))
    s2, e2 = b.two_sum(s, b.neg(b.mul(nf, CW[2])))
    rh, rl = b.fast_two_sum(s2, b.sub(b.add(e, e2), b.mul(nf, CW[3])))
    q = b.band(b.to_i32(nf), 3)
    neg = b.signbit(x)
    cw = (b.select(neg, b.neg(rh), rh), b.select(neg, b.neg(rl), rl),
          b.select(neg, b.band(b.sub(4, q), 3), q))
    rh, rl, q = b.guarded(b.gt(b.abs_bits(x), CW_MAX_BITS), lambda: _payne_hanek(b, x), cw)
    small = b.le(ax, PIO4)
    return b.select(small, x, rh), b.select(small, 0.0, rl), b.select(small, 0, q)


def _payne_hanek(b, x):
    h = b.abs_bits(x)
    m = b.bor(b.band(h, 0x007FFFFF), 0x00800000)
    e = b.sub(b.shr(h, 23), 150)                       # |x| = m * 2^e (normal x)
    # 2/pi's bit p = e - 1 is table bit p + PAD - 1
    u0 = b.min(b.max(b.add(e, PAD - 2), 0), LIMB * (TABLE_LIMBS - WINDOW - 1) + LIMB - 1)
    j = b.shr(b.mul(u0, 5462), 16)                      # u0 // 12 (exact for u0 < 200)
    t = b.sub(u0, b.mul(j, LIMB))
    words = [b.table(TABLE, b.add(j, k)) for k in range(WINDOW + 1)]
    rt = b.sub(LIMB, t)
    w = [b.band(b.bor(b.shl(words[k], t), b.shr(words[k + 1], rt)), M12) for k in range(WINDOW)]
    res = limb_product(b, m, w, LIMB)                   # limbs, least significant first
    top = res[-1]                                       # 2 integer bits + 10 fraction bits
    n = b.shr(top, LIMB - 2)
    g = [b.band(top, (1 << (LIMB - 2)) - 1)] + res[-2::-1]   # fraction limbs, high first
    up = b.ne(b.band(top, 1 << (LIMB - 3)), 0)          # f >= 1/2: n + 1 and 1 - f
    n = b.add(n, b.select(up, 1, 0))
    masks = [(1 << (LIMB - 2)) - 1] + [M12] * (WINDOW - 1)
    g = [b.select(up, b.bxor(gk, mk), gk) for gk, mk in zip(g, masks)]
    hi_i = lo_i = sc = None                             # g[k] counts units of 2^-(10 + 12k)
    for a in (4, 3, 2, 1, 0):
        hv = b.bor(b.shl(g[a], LIMB), g[a + 1])
        lv = b.bor(b.shl(g[a + 2], LIMB), g[a + 3])
        s = 2.0 ** -(10 + LIMB * (a + 1))
        if hi_i is None:
            hi_i, lo_i, sc = hv, lv, b.const(s)
        else:
            nz = b.ne(g[a], 0)
            hi_i, lo_i, sc = b.select(nz, hv, hi_i), b.select(nz, lv, lo_i), b.select(nz, s, sc)
    hi = b.mul(b.to_f32(hi_i), sc)                     # exact
    lo = b.mul(b.mul(b.to_f32(lo_i), sc), 2.0 ** -(2 * LIMB))
    p, pe = b.two_prod(hi, PIO2_H)
    rh, rl = b.fast_two_sum(p, b.add(pe, b.add(b.mul(hi, PIO2_L), b.mul(lo, PIO2_H))))
    neg = b.ne(up, b.signbit(x))                        # r's sign flips with 1 - f, and with x
    rh, rl = b.select(neg, b.neg(rh), rh), b.select(neg, b.neg(rl), rl)
    q = b.band(n, 3)
    q = b.select(b.signbit(x), b.band(b.sub(4, q), 3), q)
    return rh, rl, q


def _kernels(b, rh, rl):
    """(sin r, cos r) for r = rh + rl, |r| <= ~pi/4, each as a double-f32 (hi, lo)."""
    zh, zl = b.two_prod(rh, rh)
    s_tail = b.add(b.mul(rl, b.sub(1.0, b.mul(0.5, zh))),
                   b.mul(b.mul(rh, zh), b.poly(zh, SIN_S)))
    sin = b.fast_two_sum(rh, s_tail)
    hz = b.mul(0.5, zh)
    w = b.sub(1.0, hz)
    c_tail = b.add(b.sub(b.sub(1.0, w), hz),
                   b.sub(b.mul(b.mul(zh, zh), b.poly(zh, COS_C)),
                         b.add(b.mul(0.5, zl), b.mul(rh, rl))))
    return sin, b.fast_two_sum(w, c_tail)


def _quadrant(b, q, s, c):
    """[s, c, -s, -c][q] for i32 q in 0..3."""
    r = b.select(b.eq(b.band(q, 1), 1), c, s)
    return b.select(b.eq(b.band(q, 2), 2), b.neg(r), r)


def _finish(b, x, res, keep_zero=True):
    if keep_zero:       # sin x = tan x = x to the last bit for |x| < 2^-12 (-0 and subnormals)
        res = b.select(b.tiny(x), x, res)
    return b.select(b.isfinite(x), res, NAN)


def sin(b, x):
    rh, rl, q = reduce_pio2(b, x)
    (s, _), (c, _) = _kernels(b, rh, rl)
    return _finish(b, x, _quadrant(b, q, s, c))


def cos(b, x):
    rh, rl, q = reduce_pio2(b, x)
    (s, _), (c, _) = _kernels(b, rh, rl)
    return _finish(b, x, _quadrant(b, b.band(b.add(q, 1), 3), s, c), keep_zero=False)


def tan(b, x):
    rh, rl, q = reduce_pio2(b, x)
    (sh, sl), (ch, cl) = _kernels(b, rh, rl)
    odd = b.eq(b.band(q, 1), 1)
    t = b.select(odd, b.neg(ratio_dd(b, ch, cl, sh, sl)), ratio_dd(b, sh, sl, ch, cl))
    # |r| < 2^-12: tan r = r to the last bit; -1/r with r scaled clear of underflow
    inv = b.mul(ratio_dd(b, b.const(1.0), b.const(0.0), b.mul(rh, 2.0 ** 40), b.mul(rl, 2.0 ** 40)),
                2.0 ** 40)
    t = b.select(b.lt(b.abs(rh), 2.0 ** -12), b.select(odd, b.neg(inv), rh), t)
    return _finish(b, x, t)
