"""Pass helper (lowering, passes/lower.py; fast_math=False): f32 pow, in f32 and 32-bit integers
only, the same bits on every driver (the exp/log family: f32_explog.py has the rest).

|x|^y = e^(y * log|x|) needs log|x| to about 2^-33 relative (y*log|x| reaches ~100 before the
result overflows), so log is computed as a double-f32 (Lh, Ll):
  x = 2^k * m, m in [sqrt(2)/2, sqrt(2)), f = m - 1, s = f/(2 + f) as a double-f32 (correctly
  rounded reciprocal, exact residual), log m = 2s + s^3 Q(s^2) with Q atanh's series through
  s^10 (truncation < 2^-33) and s^3, Q and their product as double-f32s, plus k*ln2 in three
  parts, summed with two_sum.
y * (Lh + Ll) as a double-f32 (two_prod) goes to f32_explog's exp reduction with the low part
added to r; the result is scaled from the bits (f32ops.scale_dd). C99's special cases (numpy's):
negative x with an integral y takes the sign of an odd power, +-0, +-inf, y = +-inf, y = 0 and
x = 1 give 1 (NaN included), a negative x with a non-integral y is NaN."""
from .f32ops import INF, NAN
from .f32_divsqrt import decompose, div_core
from .f32_explog import INVLN2, LN2_A, LN2_B, LN2_C, SQRT2, _exp_r

Q0_H = 0.6666666865348816               # 2/3 as a double-f32
Q0_L = -1.9868215517249155e-08
Q1 = [2 / 5, 2 / 7, 2 / 9, 2 / 11, 2 / 13]


def _log_dd(b, x):
    """log(x) as a double-f32 (hi, lo) for finite x > 0."""
    m, k = decompose(b, x)
    big = b.gt(m, SQRT2)
    m = b.select(big, b.mul(m, 0.5), m)
    kf = b.to_f32(b.add(k, b.select(big, 1, 0)))
    f = b.sub(m, 1.0)                                    # exact
    dh, dl = b.fast_two_sum(2.0, f)                      # 2 + f
    rcp = div_core(b, b.const(1.0), dh)
    sh = b.mul(f, rcp)
    p, pe = b.two_prod(sh, dh)
    sl = b.mul(b.sub(b.sub(b.sub(f, p), pe), b.mul(sh, dl)), rcp)
    zh, zl = b.two_prod(sh, sh)
    zl = b.add(zl, b.mul(2.0, b.mul(sh, sl)))
    qh, ql = b.fast_two_sum(Q0_H, b.mul(zh, b.poly(zh, Q1)))
    ql = b.add(ql, Q0_L)
    ch, cl = b.two_prod(sh, zh)                          # s^3
    cl = b.add(cl, b.add(b.mul(sh, zl), b.mul(sl, zh)))
    th, tl = b.two_prod(ch, qh)                          # s^3 Q
    tl = b.add(tl, b.add(b.mul(ch, ql), b.mul(cl, qh)))
    u, ue = b.two_sum(b.mul(2.0, sh), th)
    lo = b.add(b.add(ue, b.mul(2.0, sl)), tl)
    v, ve = b.two_sum(b.mul(kf, LN2_A), u)               # k*LN2_A, k*LN2_B exact
    v2, ve2 = b.two_sum(v, b.mul(kf, LN2_B))
    lo = b.add(b.add(ve, ve2), b.add(lo, b.mul(kf, LN2_C)))
    return b.fast_two_sum(v2, lo)


def _exp_dd(b, ph, pl):
    """e^(ph + pl) for |ph| <= ~110, |pl| <= ulp(ph)."""
    kf = b.floor(b.add(b.mul(ph, INVLN2), 0.5))
    t = b.sub(ph, b.mul(kf, LN2_A))                      # exact
    r1, e1 = b.two_sum(t, b.neg(b.mul(kf, LN2_B)))
    rh, rl = b.fast_two_sum(r1, b.add(b.sub(e1, b.mul(kf, LN2_C)), pl))
    yh, yl = _exp_r(b, rh, rl)
    zh, zl = b.fast_two_sum(yh, yl)
    return b.scale_dd(zh, zl, b.to_i32(kf))


def pow(b, x, y):
    ax = b.fabs(x)
    xneg = b.signbit(x)
    xzero = b.eq(b.abs_bits(x), 0)
    yint, yodd = b.is_integer(y)
    ok = b.land(b.lnot(xzero), b.isfinite(x))
    lh, ll = _log_dd(b, b.select(ok, ax, 1.0))
    yc = b.select(b.isfinite(y), y, 0.0)
    ph, pl = b.two_prod(yc, lh)
    pl = b.add(pl, b.mul(yc, ll))
    inr = b.le(b.abs(ph), 120.0)
    core = _exp_dd(b, b.select(inr, ph, 0.0), b.select(inr, pl, 0.0))
    core = b.select(inr, core, b.select(b.gt(ph, 0.0), INF, 0.0))
    res = b.select(b.land(xneg, yodd), b.neg(core), core)
    res = b.select(b.land(xneg, b.lnot(yint)), NAN, res)     # negative ** non-integer
    # x = +-0 or +-inf: 0 or inf, negative when x is negative and y an odd integer
    ypos = b.land(b.lnot(b.signbit(y)), b.ne(b.abs_bits(y), 0))
    mag = b.select(b.eq(xzero, ypos), 0.0, INF)
    mag = b.select(b.land(xneg, yodd), b.neg(mag), mag)
    res = b.select(b.lor(xzero, b.isinf(x)), mag, res)
    # y = +-inf
    yinf = b.select(b.eq(b.lt(ax, 1.0), b.lt(y, 0.0)), INF, 0.0)
    yinf = b.select(b.eq(ax, 1.0), 1.0, yinf)
    res = b.select(b.isinf(y), yinf, res)
    res = b.select(b.lor(b.isnan(x), b.isnan(y)), NAN, res)
    return b.select(b.lor(b.eq(b.abs_bits(y), 0), b.eq(b.bits(x), 0x3F800000)), 1.0, res)
