"""Pass helper (lowering, passes/lower.py; fast_math=False): f32 division and sqrt correctly
rounded, from the driver's approximate OpFDiv / Sqrt (Vulkan allows 2.5 and 3 ulp).

  div   a = ma * 2^ka, b = mb * 2^kb with ma, mb in [1, 2) (taken from the bits, so subnormal
        inputs work on drivers that flush them); q = ma / mb by the driver, one Newton step with
        the residual ma - q*mb computed exactly (f32ops.two_prod; it is representable), then the
        neighbour toward the true quotient is taken if its exact residual is smaller: the result
        is the correctly rounded quotient whatever the driver's first guess was (so the bits are
        the same on every driver), then scaled by 2^(ka - kb) from the bits (f32ops.scale_dd:
        a subnormal result is rounded once, the residual's sign breaking ties).
  sqrt  x = m * 2^2k with m in [1, 4); s = sqrt(m) by the driver, one Newton step, then the
        rounding decided exactly: with r = m - s^2 (exact), sqrt(m) is above s + ulp/2 iff
        r - s*ulp > 0, below s - ulp/2 iff r + s*ulp <= 0 (every term is a multiple of 2^-46
        and (ulp/2)^2 = 2^-48).
Special values (zeros, infinities, NaN) as IEEE. `div_core` / `sqrt_core` are the unscaled
steps, for the other f32 lowerings' operands in [1, 2) (or any moderate range: see two_prod)."""
from .f32ops import EXP, INF, NAN

_MANT = 0x007FFFFF


def decompose(b, x):
    """(m, k): |x| = m * 2^k exactly, m in [1, 2), for finite nonzero x (subnormals included:
    the integer mantissa is converted to f32, never the subnormal itself)."""
    h = b.abs_bits(x)
    e = b.shr(h, 23)
    mi = b.bor(b.band(h, _MANT), b.select(b.gt(e, 0), 0x00800000, 0))
    mf = b.to_f32(mi)                                   # exact: < 2^24
    mb = b.bits(mf)
    ef = b.sub(b.shr(mb, 23), 127)                      # mf = m * 2^ef
    m = b.from_bits(b.bor(b.band(mb, _MANT), 0x3F800000))
    k = b.add(ef, b.sub(b.max(e, 1), 150))
    return m, k


def _residual(b, a, q, d):
    """a - q*d exactly (representable when q is within an ulp or so of a/d)."""
    p, e = b.two_prod(q, d)
    return b.sub(b.sub(a, p), e)


def _step(b, q, up):
    """q one ulp away from zero (up) or toward it, for q > 0."""
    return b.from_bits(b.add(b.bits(q), b.select(up, 1, -1)))


def div_core(b, a, d, residual=False):
    """a / d correctly rounded for a, d > 0 in a moderate range (quotient normal, partial
    products clear of underflow: e.g. a, d in [2^-40, 2^40]); with residual=True also
    a - q*d (its sign says on which side of q the true quotient lies)."""
    q = b.div(a, d)
    q = b.add(q, b.mul(_residual(b, a, q, d), b.div(1.0, d)))
    r = _residual(b, a, q, d)
    c = _step(b, q, b.gt(r, 0.0))
    rc = _residual(b, a, c, d)
    closer = b.lt(b.abs(rc), b.abs(r))
    q = b.select(closer, c, q)
    return (q, b.select(closer, rc, r)) if residual else q


def ratio_dd(b, nh, nl, dh, dl):
    """(nh + nl) / (dh + dl) (double-f32 operands, |nl| <= ulp(nh), |dl| <= ulp(dh)) within
    about 0.5 ulp, the same bits on every driver: the reciprocal of dh correctly rounded
    (div_core), a first quotient, one correction from the exact residual. dh nonzero, in a
    moderate range."""
    rcp = b.with_sign_of(div_core(b, b.const(1.0), b.abs(dh)), dh)
    q = b.mul(nh, rcp)
    p, pe = b.two_prod(q, dh)
    r = b.sub(b.add(b.sub(b.sub(nh, p), pe), nl), b.mul(q, dl))
    return b.add(q, b.mul(r, rcp))


def div(b, x, y):
    mx, kx = decompose(b, x)
    my, ky = decompose(b, y)
    q, r = div_core(b, mx, my, residual=True)           # q in (1/2, 2]
    k = b.min(b.max(b.sub(kx, ky), -170), 130)
    res = b.with_sign_of(b.scale_dd(q, r, k), b.from_bits(b.bxor(b.bits(x), b.bits(y))))
    ax, ay = b.abs_bits(x), b.abs_bits(y)
    sign = b.band(b.bxor(b.bits(x), b.bits(y)), -0x80000000)
    # x / inf = 0 (x finite), x / 0 = inf (x nonzero), 0 / y = 0, inf / y = inf, signed
    zero = b.lor(b.eq(ax, 0), b.eq(ay, EXP))
    big = b.lor(b.eq(ay, 0), b.eq(ax, EXP))
    res = b.select(zero, b.from_bits(sign), res)
    res = b.select(big, b.from_bits(b.bor(sign, EXP)), res)
    bad = b.lor(b.lor(b.isnan(x), b.isnan(y)),
                b.lor(b.land(b.eq(ax, 0), b.eq(ay, 0)), b.land(b.eq(ax, EXP), b.eq(ay, EXP))))
    return b.select(bad, NAN, res)


def sqrt_core(b, m):
    """sqrt(m) correctly rounded for m in [1, 4)."""
    s = b.sqrt(m)
    s = b.add(s, b.mul(_residual(b, m, s, s), b.div(0.5, s)))
    s = b.min(b.max(s, 1.0), 1.9999998807907104)        # in [1, 2): ulp = 2^-23
    r = _residual(b, m, s, s)
    sul = b.mul(s, 1.1920928955078125e-07)              # s * ulp, exact
    up = b.gt(b.sub(r, sul), 0.0)
    down = b.le(b.add(r, sul), 0.0)
    s = b.select(up, _step(b, s, True), s)
    return b.select(down, _step(b, s, False), s)


def sqrt(b, x):
    m, k = decompose(b, x)
    odd = b.ne(b.band(k, 1), 0)
    m = b.select(odd, b.mul(m, 2.0), m)
    k = b.shr(b.sub(k, b.select(odd, 1, 0)), 1)         # even / 2 (arithmetic shift)
    res = b.mul(sqrt_core(b, m), b.pow2(k))
    res = b.select(b.eq(b.bits(x), EXP), INF, res)
    res = b.select(b.eq(b.abs_bits(x), 0), x, res)      # +-0 (-0 keeps its sign)
    neg = b.land(b.signbit(x), b.ne(b.abs_bits(x), 0))  # (from the bits: drivers may flush)
    return b.select(b.lor(b.isnan(x), neg), NAN, res)


def rsqrt(b, x):
    """1/sqrt(x) within about 0.5 ulp: x = m * 2^2k, y = 1/sqrt(m) correctly rounded in two
    steps, then one correction y*(1 + e/2) with e = 1 - m*y^2 computed exactly."""
    m, k = decompose(b, x)
    odd = b.ne(b.band(k, 1), 0)
    m = b.select(odd, b.mul(m, 2.0), m)
    k = b.shr(b.sub(k, b.select(odd, 1, 0)), 1)
    y = div_core(b, b.const(1.0), sqrt_core(b, m))      # in (1/2, 1]
    p, pe = b.two_prod(y, y)
    q, qe = b.two_prod(m, p)
    e = b.sub(b.sub(b.sub(1.0, q), qe), b.mul(m, pe))   # 1 - q exact (q is near 1)
    res = b.mul(b.add(y, b.mul(b.mul(y, e), 0.5)), b.pow2(b.sub(0, k)))
    res = b.select(b.eq(b.bits(x), EXP), 0.0, res)
    zero = b.eq(b.abs_bits(x), 0)
    res = b.select(zero, b.with_sign_of(b.const(INF), x), res)   # 1/sqrt(+-0) = +-inf
    neg = b.land(b.signbit(x), b.lnot(zero))
    return b.select(b.lor(b.isnan(x), neg), NAN, res)


def floordiv(b, x, y):
    """Float `//`: floor of the correctly rounded quotient."""
    return b.floor(div(b, x, y))


def mod(b, x, y):
    """Float `%` as Taichi and GLSL's mod compute it, x - y*floor(x/y), from the correctly
    rounded quotient (so the same bits on every driver)."""
    return b.sub(x, b.mul(y, floordiv(b, x, y)))
