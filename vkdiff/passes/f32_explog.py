"""Pass helper (lowering, passes/lower.py; fast_math=False): f32 exp, exp2, expm1, tanh, log and
log2, in f32 and 32-bit integers only, the same bits on every driver.

  exp    k = round(x/ln2), r = x - k*ln2 as a double-f32 rh + rl (ln2 in three parts, the first
         two with 12 significant bits, so k*part is exact), exp(r) = 1 + r + r^2 P(r) (P fitted
         by tools/f32math_coeffs.py) summed as a double-f32, times 2^k from the bits
         (f32ops.scale_dd: subnormal results rounded once, and returned by flushing drivers too).
  exp2   k = round(x), r = (x - k)*ln2 as a double-f32 (f32ops.two_prod), then as exp.
  expm1  2^k * (1 + r + ...) - 1 with the subtraction of 1 done exactly (two_sum): full relative
         precision near 0 without a separate branch.
  tanh   -t / (2 + t) with t = expm1(-2|x|) as a double-f32, through f32_divsqrt.ratio_dd.
  log    x = 2^k * m with m in [sqrt(2)/2, sqrt(2)) from the bits (subnormals included), f = m - 1
         (exact), log(1 + f) = f + c, c = s*(f^2/2 + R(s^2)) - f^2/2 with s = f/(2 + f) (fdlibm's
         formula: s's rounding only reaches the small c), then k*ln2 + f + c as a double-f32.
  log2   k + (f + c)/ln2 with 1/ln2 as a double-f32: exact at powers of two.
Special values as numpy's (C99's)."""
from .f32ops import EXP, INF, NAN, f32
from .f32_divsqrt import decompose, div_core, ratio_dd

LN2_A = 0.693115234375                  # ln2 in three parts, the first two with 12 bits
LN2_B = 3.1888484954833984e-05
LN2_C = 5.769998878690785e-08
LN2_BC = f32(3.194618329871446e-05)     # ln2 - LN2_A
LN2_F = 0.6931471824645996              # f32(ln2)
LN2_L = -1.904654323148236e-09          # ln2 - LN2_F
INVLN2 = 1.4426950216293335
INVLN2_L = 1.925963033500011e-08
SQRT2 = 1.4142135381698608

EXP_P = [0.5, 0.1666666716337204, 0.04166645556688309, 0.008333361707627773,
         0.0013934504240751266, 0.0001985812996281311]      # (e^r - 1 - r)/r^2, |r| <= ln2/2
LOG_Q = [0.6666666865348816, 0.40000125765800476, 0.2855037450790405, 0.23342479765415192]


def _reduce_ln2(b, x):
    """(k as f32, rh, rl): x = k*ln2 + rh + rl, |rh| <= ~ln2/2, for |x| <= ~200."""
    kf = b.floor(b.add(b.mul(x, INVLN2), 0.5))
    t = b.sub(x, b.mul(kf, LN2_A))                      # exact
    r1, e1 = b.two_sum(t, b.neg(b.mul(kf, LN2_B)))      # k*LN2_B exact
    rh, rl = b.fast_two_sum(r1, b.sub(e1, b.mul(kf, LN2_C)))
    return kf, rh, rl


def _exp_r(b, rh, rl):
    """e^(rh + rl) - 1 = yh + yl - 1 with yh = fl(1 + rh): (yh, yl), |rh| <= ~ln2/2."""
    yh, yl = b.fast_two_sum(1.0, rh)
    tail = b.add(b.add(yl, b.mul(rl, b.add(1.0, rh))), b.mul(b.mul(rh, rh), b.poly(rh, EXP_P)))
    return yh, tail


def _nan_in(b, x, res):
    return b.select(b.isnan(x), x, res)


def exp(b, x):
    kf, rh, rl = _reduce_ln2(b, b.min(b.max(x, -110.0), 90.0))
    yh, yl = _exp_r(b, rh, rl)
    zh, zl = b.fast_two_sum(yh, yl)
    return _nan_in(b, x, b.scale_dd(zh, zl, b.to_i32(kf)))


def exp2(b, x):
    xc = b.min(b.max(x, -160.0), 130.0)
    kf = b.floor(b.add(xc, 0.5))
    r = b.sub(xc, kf)                                   # exact
    p, pe = b.two_prod(r, LN2_F)
    rh, rl = b.fast_two_sum(p, b.add(pe, b.mul(r, LN2_L)))
    yh, yl = _exp_r(b, rh, rl)
    zh, zl = b.fast_two_sum(yh, yl)
    res = b.scale_dd(zh, zl, b.to_i32(kf))
    res = b.select(b.eq(b.abs_bits(x), 0), 1.0, res)    # (r*LN2_F of a tiny r: split underflows)
    return _nan_in(b, x, res)


def _expm1_dd(b, x):
    """e^x - 1 as a double-f32 (hi, lo) for x in [-20, 89]."""
    kf, rh, rl = _reduce_ln2(b, x)
    yh, yl = _exp_r(b, rh, rl)
    k = b.to_i32(kf)
    a = b.ldexp(yh, k)                                  # exact (short of overflow)
    lo = b.ldexp(yl, k)
    s, e = b.two_sum(a, -1.0)
    return b.fast_two_sum(s, b.add(e, lo))


def expm1(b, x):
    h, l = _expm1_dd(b, b.min(b.max(x, -20.0), 89.0))
    res = b.add(h, l)
    small = b.lt(b.abs_bits(x), 0x33000000)             # |x| < 2^-25: e^x - 1 = x
    res = b.select(small, x, res)
    res = b.select(b.lt(x, -20.0), -1.0, res)
    res = b.select(b.gt(x, 88.72283172607422), INF, res)   # e^x rounds to inf beyond
    return _nan_in(b, x, res)


def tanh(b, x):
    ax = b.min(b.abs(x), 9.5)                           # tanh(9.5) rounds to 1
    th, tl = _expm1_dd(b, b.mul(-2.0, ax))              # in (-1, 0]
    dh, dl = b.fast_two_sum(2.0, th)
    res = ratio_dd(b, b.neg(th), b.neg(tl), dh, b.add(dl, tl))
    res = b.select(b.tiny(x), x, b.with_sign_of(res, x))   # tanh = x to the last bit
    return _nan_in(b, x, res)


def _log_parts(b, x):
    """(k as f32, f, c) with log(x) = k*ln2 + f + c for finite x > 0 (|c| < |f|/4)."""
    m, k = decompose(b, x)
    big = b.gt(m, SQRT2)
    m = b.select(big, b.mul(m, 0.5), m)
    kf = b.to_f32(b.add(k, b.select(big, 1, 0)))
    f = b.sub(m, 1.0)                                   # exact
    s = b.mul(f, div_core(b, b.const(1.0), b.add(2.0, f)))
    z = b.mul(s, s)
    hfsq = b.mul(b.mul(0.5, f), f)
    c = b.sub(b.mul(s, b.add(hfsq, b.mul(z, b.poly(z, LOG_Q)))), hfsq)
    return kf, f, c


def _log_special(b, x, res):
    res = b.select(b.eq(b.bits(x), EXP), INF, res)
    res = b.select(b.eq(b.abs_bits(x), 0), -INF, res)
    neg = b.land(b.signbit(x), b.ne(b.abs_bits(x), 0))
    return b.select(b.lor(b.isnan(x), neg), NAN, res)


def log(b, x):
    kf, f, c = _log_parts(b, x)
    s1, e1 = b.two_sum(b.mul(kf, LN2_A), f)
    res = b.add(s1, b.add(b.add(e1, c), b.mul(kf, LN2_BC)))
    return _log_special(b, x, res)


def log2(b, x):
    kf, f, c = _log_parts(b, x)
    p, pe = b.two_prod(f, INVLN2)
    s1, e1 = b.two_sum(kf, p)
    res = b.add(s1, b.add(b.add(e1, pe), b.add(b.mul(f, INVLN2_L), b.mul(c, INVLN2))))
    return _log_special(b, x, res)
