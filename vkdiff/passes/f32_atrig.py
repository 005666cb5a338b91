"""Pass helper (lowering, passes/lower.py; fast_math=False): f32 atan, atan2, asin and acos, in
f32 and 32-bit integers only, the same bits on every driver.

The algorithms and float coefficients are fdlibm's float versions (FreeBSD's s_atanf.c,
e_atan2f.c, e_asinf.c; Sun Microsystems, freely redistributable), with every division, square
root and near-cancelling sum done exactly or as a double-f32 (f32_divsqrt.ratio_dd, div_core,
sqrt; f32ops.two_sum) instead of fdlibm's double intermediates:
  atan   |x| reduced to |t| <= 7/16 around atan(1/2), atan(1), atan(3/2), atan(inf), an odd
         polynomial; |x| >= 2^26 is pi/2.
  atan2  |y/x| as a double-f32 (quotient of the mantissas correctly rounded, its residual), atan
         of it with the low part's first-order term, placed in its quadrant with pi as a
         double-f32; C99's special cases (zeros, infinities).
  asin acos   R(t) = p(t)/q(t) rational; |x| < 1/2 directly, else through s = sqrt((1-|x|)/2)
         as a double-f32.
"""
import math

from .f32ops import NAN, f32
from .f32_divsqrt import decompose, div_core, ratio_dd, sqrt

ATAN_HI = [4.6364760399e-01, 7.8539812565e-01, 9.8279368877e-01, 1.5707962513e+00]
ATAN_LO = [5.0121582440e-09, 3.7748947079e-08, 3.4473217170e-08, 7.5497894159e-08]
AT = [3.3333328366e-01, -1.9999158382e-01, 1.4253635705e-01, -1.0648017377e-01,
      6.1687607318e-02]
PS = [1.6666586697e-01, -4.2743422091e-02, -8.6563630030e-03]
QS1 = -7.0662963390e-01
PIO2_H = f32(math.pi / 2)
PIO2_L = f32(math.pi / 2 - PIO2_H)
PI_H = f32(math.pi)
PI_L = f32(math.pi - PI_H)


def _atan_parts(b, ax):
    """(hi, tail) with atan(ax) = hi + tail (hi = 0 or a table value), for 2^-12 <= ax <= 2^26;
    the caller rounds hi + tail once (after adding any correction to tail)."""
    id0, id1 = b.ge(ax, 0.4375), b.ge(ax, 0.6875)
    id2, id3 = b.ge(ax, 1.1875), b.ge(ax, 2.4375)

    def pick(vals):                                      # for id = -1, 0, 1, 2, 3
        v = b.select(id0, vals[1], vals[0])
        v = b.select(id1, vals[2], v)
        v = b.select(id2, vals[3], v)
        return b.select(id3, vals[4], v)
    # t = num / den: x/1, (2x-1)/(2+x), (x-1)/(x+1), (x-1.5)/(1+1.5x), -1/x (numerators exact)
    num = pick([ax, b.sub(b.mul(2.0, ax), 1.0), b.sub(ax, 1.0), b.sub(ax, 1.5), b.const(-1.0)])
    d0h, d0l = b.two_sum(b.const(2.0), ax)
    d1h, d1l = b.two_sum(b.const(1.0), ax)
    p, pe = b.two_prod(ax, 1.5)
    d2h, d2l = b.two_sum(b.const(1.0), p)
    dh = pick([b.const(1.0), d0h, d1h, d2h, ax])
    dl = pick([b.const(0.0), d0l, d1l, b.add(d2l, pe), b.const(0.0)])
    t = ratio_dd(b, num, b.const(0.0), dh, dl)
    z = b.mul(t, t)
    w = b.mul(z, z)
    s1 = b.mul(z, b.poly(w, AT[0::2]))
    s2 = b.mul(w, b.poly(w, AT[1::2]))
    hi = pick([0.0] + ATAN_HI)
    lo = pick([0.0] + ATAN_LO)
    return hi, b.sub(t, b.sub(b.mul(t, b.add(s1, s2)), lo))


def atan(b, x):
    ax = b.fabs(x)
    hi, tail = _atan_parts(b, b.min(b.max(ax, 2.0 ** -12), 2.0 ** 26))
    res = b.add(hi, tail)
    res = b.select(b.ge(ax, 2.0 ** 26), PIO2_H, res)
    res = b.select(b.tiny(x), ax, res)                   # atan x = x to the last bit
    res = b.with_sign_of(res, x)
    return b.select(b.isnan(x), x, res)


def atan2(b, y, x):
    my, ky = decompose(b, y)
    mx, kx = decompose(b, x)
    q, r = div_core(b, my, mx, residual=True)            # my/mx = q + r/mx
    k = b.sub(ky, kx)
    kc = b.min(b.max(k, -40), 40)
    t = b.ldexp(q, kc)                                   # |y/x|, exact scaling
    tl = b.ldexp(b.mul(r, div_core(b, b.const(1.0), mx)), kc)
    tc = b.min(b.max(t, 2.0 ** -12), 2.0 ** 26)
    hi, tail = _atan_parts(b, tc)
    corr = b.mul(tl, div_core(b, b.const(1.0), b.add(1.0, b.mul(tc, tc))))
    tail = b.add(tail, corr)
    # |y/x| < 2^-12: atan = y/x (correctly rounded, subnormal included); > 2^26: pi/2
    small = b.lor(b.lt(k, -40), b.lt(t, 2.0 ** -12))
    big = b.lor(b.gt(k, 40), b.gt(t, 2.0 ** 26))
    hi = b.select(small, b.scale_dd(q, r, k), b.select(big, PIO2_H, hi))
    tail = b.select(small, 0.0, b.select(big, PIO2_L, tail))
    hi = b.select(b.eq(b.abs_bits(x), 0), PIO2_H, hi)    # x = +-0, y != 0
    tail = b.select(b.eq(b.abs_bits(x), 0), PIO2_L, tail)
    inf_x, inf_y = b.isinf(x), b.isinf(y)
    hi = b.select(inf_x, b.select(inf_y, f32(math.pi / 4), 0.0), b.select(inf_y, PIO2_H, hi))
    tail = b.select(b.lor(inf_x, inf_y), 0.0, tail)
    hi = b.select(b.eq(b.abs_bits(y), 0), 0.0, hi)      # y = +-0 (also 0/0)
    tail = b.select(b.eq(b.abs_bits(y), 0), 0.0, tail)
    # hi + (+0) is hi: kept as bits (a subnormal y/x, which a driver flushing subnormal
    # arithmetic would turn into 0 in the sum)
    pos = b.select(b.eq(b.bits(tail), 0), hi, b.add(hi, tail))
    # x < 0: pi - (hi + tail)
    a, ae = b.two_sum(b.const(PI_H), b.neg(hi))
    neg = b.add(a, b.sub(b.add(ae, PI_L), tail))
    res = b.select(b.signbit(x), neg, pos)
    res = b.with_sign_of(res, y)
    return b.select(b.lor(b.isnan(x), b.isnan(y)), NAN, res)


def _r(b, t):
    """R(t) = p(t)/q(t), asin(s) = s + s*R(s^2), for t in (0, 1/2] (p, q > 0)."""
    p = b.mul(t, b.poly(t, PS))
    return div_core(b, p, b.add(1.0, b.mul(t, QS1)))


def _big(b, x):
    """(s_h, s_l, R) for |x| >= 1/2: s_h + s_l = sqrt((1 - |x|)/2) (double-f32), R = R(s^2)."""
    t = b.mul(b.sub(1.0, b.abs(x)), 0.5)                 # exact
    tc = b.max(t, 2.0 ** -40)
    sh = sqrt(b, tc)
    p, pe = b.two_prod(sh, sh)
    sl = b.mul(b.sub(b.sub(tc, p), pe), div_core(b, b.const(0.5), sh))
    sh = b.select(b.eq(t, 0.0), 0.0, sh)
    sl = b.select(b.eq(t, 0.0), 0.0, sl)
    return sh, sl, _r(b, tc)


def asin(b, x):
    ax = b.fabs(x)
    axs = b.max(ax, 2.0 ** -12)
    small = b.add(axs, b.mul(axs, _r(b, b.mul(axs, axs))))
    sh, sl, r = _big(b, x)
    a, ae = b.two_sum(b.const(PIO2_H), b.mul(-2.0, sh))
    big = b.add(a, b.sub(b.add(ae, PIO2_L), b.mul(2.0, b.add(sl, b.mul(sh, r)))))
    res = b.select(b.lt(ax, 0.5), b.select(b.tiny(x), ax, small), big)
    res = b.with_sign_of(res, x)
    return b.select(b.le(ax, 1.0), res, NAN)             # |x| > 1 and NaN: NaN


def acos(b, x):
    ax = b.abs(x)
    a, ae = b.two_sum(b.const(PIO2_H), b.neg(x))
    xr = b.mul(x, _r(b, b.max(b.mul(x, x), 2.0 ** -30)))   # (R's argument clear of underflow)
    small = b.add(a, b.sub(b.add(ae, PIO2_L), xr))
    sh, sl, r = _big(b, x)
    tail = b.mul(2.0, b.add(sl, b.mul(sh, r)))
    pos = b.add(b.mul(2.0, sh), tail)                    # x >= 1/2: 2 asin(s)
    c, ce = b.two_sum(b.const(PI_H), b.mul(-2.0, sh))    # x <= -1/2: pi - 2 asin(s)
    neg = b.add(c, b.sub(b.add(ce, PI_L), tail))
    res = b.select(b.lt(ax, 0.5), small, b.select(b.signbit(x), neg, pos))
    return b.select(b.le(ax, 1.0), res, NAN)
