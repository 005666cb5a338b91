"""Pass helper (lowering, passes/lower.py): f64 transcendentals as inlined, straight-line IR.

GLSL.std.450's Sin/Cos/Exp/Log/Pow/... accept only 16/32-bit floats, so passes/lower.py replaces
an f64 `sin cos tan asin acos atan exp exp2 expm1 log log2 tanh pow atan2` statement (the op
table's `f64` column names the functions below, each (builder, *operands) -> value) by a sequence
of operations that codegen supports natively in f64 (add sub mul div neg abs floor round sqrt
min max, comparisons, select, casts, f64<->i64 bitcasts and i64 integer ops). No control flow is
created: every branch of the classic algorithms is computed and the right one chosen with
`select`.

The algorithms and coefficients are those of fdlibm (Sun Microsystems, freely redistributable):
  exp   k = round(x/ln2), r = x - k*ln2 (ln2 in two parts), Remez rational for exp(r), then 2^k
        through the exponent bits (in two factors, so results that are subnormal round only once).
  log   x = 2^k * m with m in [sqrt(2)/2, sqrt(2)) from the bits, log(m) = log1p(f) through
        s = f/(2+f) and a degree-14 polynomial in s.
  sin cos tan   reduction by pi/2 exact over the whole finite range (Payne-Hanek in integer
        arithmetic, passes/f64_trig.py), then fdlibm's degree-13/14 sin/cos kernels on
        [-pi/4, pi/4] and its __kernel_tan.
  atan  reduction to |t| < 7/16 around atan(0.5), atan(1), atan(1.5), atan(inf), odd polynomial.
  asin acos   rational approximation, sqrt-based for |x| >= 0.5 with a hi/lo split of the sqrt.
  atan2 atan(|y/x|) placed in the right quadrant, with all the C99 special cases.
  tanh  through expm1 (fdlibm's expm1 with all its k cases).
  pow   fdlibm's: log2|x| in extra precision (hi parts with 32 zero low bits, made by masking),
        y*log2|x| as a double-double, 2^that; C99 special cases (negative x with integer y,
        zeros, infinities, NaN).
Measured against numpy on lavapipe: at most ~3 ulp (tan), 1-2 ulp for the others.

The driver's compiler treats this arithmetic as fast-math (the SPIR-V carries no NoContraction):
on lavapipe (Mesa 22.3), `(a + b) - a` folds to `b`, and after spirv-opt has contracted `a*b + c`
into Fma, fma(a, b, fma(a, c, d)) is merged into fma(a, b + c, d). So hi/lo splits are made by
masking bits, never by cancellation tricks, and where two products sharing a factor must stay
separate (Cody-Waite, double-double steps) one of them uses `F64Ops.opaque`.
"""
import struct

from .. import types as T
from .f64_trig import ktan, reduce_pio2

F64, I64, B = T.f64, T.i64, T.u1


def _w(hi, lo=0):
    """The double whose IEEE bits are hi:lo (two 32-bit words, as fdlibm lists its constants)."""
    return struct.unpack('<d', struct.pack('<Q', (hi << 32) | lo))[0]


INF = float('inf')
NAN = float('nan')

# exp / expm1
O_THRESHOLD = _w(0x40862E42, 0xFEFA39EF)   # 709.78...: exp overflows above
U_THRESHOLD = _w(0xC0874910, 0xD52D3051)   # -745.13...: exp underflows to 0 below
LN2_HI = _w(0x3FE62E42, 0xFEE00000)
LN2_LO = _w(0x3DEA39EF, 0x35793C76)
INVLN2 = _w(0x3FF71547, 0x652B82FE)
EXP_P = [_w(0x3FC55555, 0x5555553E), _w(0xBF66C16C, 0x16BEBD93), _w(0x3F11566A, 0xAF25DE2C),
         _w(0xBEBBBD41, 0xC5D26BF1), _w(0x3E663769, 0x72BEA4D0)]
EXPM1_Q = [_w(0xBFA11111, 0x111110F4), _w(0x3F5A01A0, 0x19FE5585), _w(0xBF14CE19, 0x9EAADBB7),
           _w(0x3ED0CFCA, 0x86E65239), _w(0xBE8AFDB7, 0x6E09C32D)]
# log
LG = [_w(0x3FE55555, 0x55555593), _w(0x3FD99999, 0x9997FA04), _w(0x3FD24924, 0x94229359),
      _w(0x3FCC71C5, 0x1D8E78AF), _w(0x3FC74664, 0x96CB03DE), _w(0x3FC39A09, 0xD078C69F),
      _w(0x3FC2F112, 0xDF3E5244)]
# sin / cos
SIN_S = [_w(0xBFC55555, 0x55555549), _w(0x3F811111, 0x1110F8A6), _w(0xBF2A01A0, 0x19C161D5),
         _w(0x3EC71DE3, 0x57B1FE7D), _w(0xBE5AE5E6, 0x8A2B9CEB), _w(0x3DE5D93A, 0x5ACFD57C)]
COS_C = [_w(0x3FA55555, 0x5555554C), _w(0xBF56C16C, 0x16C15177), _w(0x3EFA01A0, 0x19CB1590),
         _w(0xBE927E4F, 0x809C52AD), _w(0x3E21EE9E, 0xBDB4B1C4), _w(0xBDA8FAE9, 0xBE8838D4)]
# atan
ATAN_HI = [_w(0x3FDDAC67, 0x0561BB4F), _w(0x3FE921FB, 0x54442D18), _w(0x3FEF730B, 0xD281F69B),
           _w(0x3FF921FB, 0x54442D18)]
ATAN_LO = [_w(0x3C7A2B7F, 0x222F65E2), _w(0x3C81A626, 0x33145C07), _w(0x3C700788, 0x7AF0CBBD),
           _w(0x3C91A626, 0x33145C07)]
AT = [_w(0x3FD55555, 0x5555550D), _w(0xBFC99999, 0x9998EBC4), _w(0x3FC24924, 0x920083FF),
      _w(0xBFBC71C6, 0xFE231671), _w(0x3FB745CD, 0xC54C206E), _w(0xBFB3B0F2, 0xAF749A6D),
      _w(0x3FB10D66, 0xA0D03D51), _w(0xBFADDE2D, 0x52DEFD9A), _w(0x3FA97B4B, 0x24760DEB),
      _w(0xBFA2B444, 0x2C6A6C2F), _w(0x3F90AD3A, 0xE322DA11)]
# asin / acos / atan2
PIO2_HI = _w(0x3FF921FB, 0x54442D18)
PIO2_LO = _w(0x3C91A626, 0x33145C07)
PIO4_HI = _w(0x3FE921FB, 0x54442D18)
PI = _w(0x400921FB, 0x54442D18)
PI_LO = _w(0x3CA1A626, 0x33145C07)
ASIN_P = [_w(0x3FC55555, 0x55555555), _w(0xBFD4D612, 0x03EB6F7D), _w(0x3FC9C155, 0x0E884455),
          _w(0xBFA48228, 0xB5688F3B), _w(0x3F49EFE0, 0x7501B288), _w(0x3F023DE1, 0x0DFDF709)]
ASIN_Q = [_w(0xC0033A27, 0x1C8A2D4B), _w(0x40002AE5, 0x9C598AC8), _w(0xBFE6066C, 0x1B8D0159),
          _w(0x3FB3B8C5, 0xB12E9282)]
ASIN_BIG = _w(0x3FEF3333)              # 0.97499990...: above it asin uses the simple big-x formula
# pow
DP_H1 = _w(0x3FE2B803, 0x40000000)     # log2(1.5) hi
DP_L1 = _w(0x3E4CFDEB, 0x43CFD006)     # log2(1.5) lo
POW_L = [_w(0x3FE33333, 0x33333303), _w(0x3FDB6DB6, 0xDB6FABFF), _w(0x3FD55555, 0x518F264D),
         _w(0x3FD17460, 0xA91D4101), _w(0x3FCD864A, 0x93C9DB65), _w(0x3FCA7E28, 0x4A454EEF)]
LG2 = _w(0x3FE62E42, 0xFEFA39EF)
LG2_H = _w(0x3FE62E43)
LG2_L = _w(0xBE205C61, 0x0CA86C39)
CP = _w(0x3FEEC709, 0xDC3A03FD)        # 2/(3 ln2)
CP_H = _w(0x3FEEC709, 0xE0000000)
CP_L = _w(0xBE3E2FE0, 0x145B01F5)

EXP_MASK = 0x7FF0000000000000             # i64 bit patterns
ABS_MASK = 0x7FFFFFFFFFFFFFFF
MANT_MASK = 0x000FFFFFFFFFFFFF
HI_MASK = -(1 << 32)                   # keeps the high 32 bits (21 mantissa bits)
ONE_BITS = 0x3FF0000000000000


class F64Ops:
    """The f64 helpers the lowerings use, mixed into an irbuild.Builder (passes/lower.py makes
    one with default_fp=f64, so Python numbers become f64 constants, i64 next to i64 operands).
    `guard_input` is the lowered statement's first operand (see `opaque`)."""
    guard_input = None
    _guard = None
    _opaque_count = 0

    def round(self, a):
        """To nearest, ties to even, from floor (the range reductions' own; GLSL's f64 RoundEven is
        unreliable: Mesa 22.3.6 of Debian's deb12u2 returns its input unchanged from about 2^26
        on; ti.round is optable._round_half_away). Exact: a - floor(a) is."""
        f = self.floor(a)
        d = self.sub(a, f)
        odd = self.ne(self.sub(f, self.mul(2.0, self.floor(self.mul(f, 0.5)))), 0.0)
        up = self.lor(self.gt(d, 0.5), self.land(self.eq(d, 0.5), odd))
        return self.select(up, self.add(f, 1.0), f)

    # conversions and bits
    def to_i64(self, a): return self.cast(a, I64)   # truncates
    def to_f64(self, a): return self.cast(a, F64)
    def bits(self, a): return self.bitcast(a, I64)
    def from_bits(self, a): return self.bitcast(a, F64)

    # ------------------------------------------------------------ composite helpers
    def poly(self, x, coeffs):
        """c0 + x*(c1 + x*(c2 + ...)) (Horner)."""
        acc = self.const(coeffs[-1])
        for c in reversed(coeffs[:-1]):
            acc = self.add(c, self.mul(x, acc))
        return acc

    def abs_bits(self, x):
        return self.band(self.bits(x), ABS_MASK)

    def isnan(self, x):
        return self.gt(self.abs_bits(x), EXP_MASK)

    def isinf(self, x):
        return self.eq(self.abs_bits(x), EXP_MASK)

    def isfinite(self, x):
        return self.lt(self.abs_bits(x), EXP_MASK)

    def signbit(self, x):
        return self.lt(self.bits(x), 0)

    def with_sign_of(self, r, x):
        """r (>= 0 or -0) with x's sign bit (copysign for non-negative r)."""
        return self.select(self.signbit(x), self.neg(r), r)

    def hi_part(self, x):
        """x with its low 32 bits cleared: 21 significant bits, so products of two are exact."""
        return self.from_bits(self.band(self.bits(x), HI_MASK))

    def opaque(self, x):
        """A copy of x that the driver's compiler cannot prove equal to x: a select on whether
        the function's input is NaN (in which case the final result is NaN or fixed anyway).

        Needed where two products share a factor and must stay separate: otherwise the merge of
        fma(a, b, fma(a, c, d)) into fma(a, b + c, d) (see the module docstring) turns e.g.
        Cody-Waite's `(x - n*p1) - n*p2` into `x - n*(p1 + p2)` and loses the extra bits (sin
        of 1e5 was off by 1e-11). Each call gives a distinct value, so that copies are not
        merged with each other either."""
        if self._guard is None:
            self._guard = self.isnan(self.guard_input)
        self._opaque_count += 1
        return self.select(self._guard, float(self._opaque_count), x)

    def pow2(self, k):
        """2.0**k for an i64 k in [-1022, 1023]."""
        return self.from_bits(self.shl(self.add(k, 1023), 52))

    def ldexp(self, y, k):
        """y * 2**k for an i64 k in about [-2000, 2000] and y near 1; the two factors make a
        subnormal result round only once."""
        k1 = self.shr(k, 1)
        k2 = self.sub(k, k1)
        return self.mul(self.mul(y, self.pow2(k1)), self.pow2(k2))


# ---------------------------------------------------------------- the functions
def _exp(b, x):
    xc = b.min(b.max(x, -746.0), 710.0)
    kf = b.round(b.mul(xc, INVLN2))
    hi = b.sub(xc, b.mul(kf, LN2_HI))         # exact: kf*LN2_HI has 32 spare bits
    lo = b.mul(b.opaque(kf), LN2_LO)
    r = b.sub(hi, lo)
    t = b.mul(r, r)
    c = b.sub(r, b.mul(t, b.poly(t, EXP_P)))
    # exp(r) = 1 - ((lo - r*c/(2-c)) - hi)
    y = b.sub(1.0, b.sub(b.sub(lo, b.div(b.mul(r, c), b.sub(2.0, c))), hi))
    res = b.ldexp(y, b.to_i64(kf))
    res = b.select(b.gt(x, O_THRESHOLD), INF, res)
    res = b.select(b.lt(x, U_THRESHOLD), 0.0, res)
    return b.select(b.isnan(x), x, res)


def _expm1(b, x):
    """exp(x) - 1 for x in [-60, 60] (the caller clamps); keeps full relative precision near 0."""
    kf = b.round(b.mul(x, INVLN2))
    hi = b.sub(x, b.mul(kf, LN2_HI))
    lo = b.mul(b.opaque(kf), LN2_LO)
    r = b.sub(hi, lo)
    c = b.sub(b.sub(hi, r), lo)               # rounding error of r (may be folded to 0: harmless)
    hfx = b.mul(0.5, r)
    hxs = b.mul(r, hfx)
    r1 = b.add(1.0, b.mul(hxs, b.poly(hxs, EXPM1_Q)))
    t = b.sub(3.0, b.mul(r1, hfx))
    e = b.mul(hxs, b.div(b.sub(r1, t), b.sub(6.0, b.mul(r, t))))
    res_k0 = b.sub(r, b.sub(b.mul(r, e), hxs))
    e = b.sub(b.sub(b.mul(r, b.sub(e, c)), c), hxs)
    k = b.to_i64(kf)
    twopk = b.pow2(k)
    res_km1 = b.sub(b.mul(0.5, b.sub(r, e)), 0.5)
    res_k1 = b.select(b.lt(r, -0.25), b.mul(-2.0, b.sub(e, b.add(r, 0.5))),
                      b.add(1.0, b.mul(2.0, b.sub(r, e))))
    res_far = b.sub(b.mul(b.sub(1.0, b.sub(e, r)), twopk), 1.0)       # k <= -2 or k > 56
    # 2 <= k < 20: 2^k * ((1 - 2^-k) - (e - r));  20 <= k <= 56: 2^k * ((r - (e + 2^-k)) + 1)
    two_mk = b.pow2(b.sub(0, k))
    res_mid = b.mul(b.sub(b.sub(1.0, two_mk), b.sub(e, r)), twopk)
    res_big = b.mul(b.add(b.sub(r, b.add(e, two_mk)), 1.0), twopk)
    res = b.select(b.lt(k, 20), res_mid, res_big)
    res = b.select(b.lor(b.le(k, -2), b.gt(k, 56)), res_far, res)
    res = b.select(b.eq(k, 1), res_k1, res)
    res = b.select(b.eq(k, -1), res_km1, res)
    return b.select(b.eq(k, 0), res_k0, res)


def _log(b, x):
    hx = b.bits(x)
    sub = b.lt(hx, 0x0010000000000000)        # subnormal (or zero / negative: fixed up below)
    xs = b.select(sub, b.mul(x, _w(0x43500000)), x)   # * 2^54
    h = b.bits(xs)
    k = b.add(b.sub(b.shr(h, 52), 1023), b.select(sub, b.const(-54, I64), b.const(0, I64)))
    m = b.band(h, MANT_MASK)
    # mantissa in [sqrt(2)/2, sqrt(2)): take exponent 0x3fe instead of 0x3ff when m >= sqrt(2)-1
    i = b.band(b.add(m, 0x00095F6400000000), 0x0010000000000000)
    f = b.sub(b.from_bits(b.bor(m, b.bxor(i, ONE_BITS))), 1.0)
    k = b.add(k, b.shr(i, 52))
    s = b.div(f, b.add(2.0, f))
    z = b.mul(s, s)
    w = b.mul(z, z)
    t1 = b.mul(w, b.poly(w, [LG[1], LG[3], LG[5]]))
    t2 = b.mul(z, b.poly(w, [LG[0], LG[2], LG[4], LG[6]]))
    R = b.add(t2, t1)
    hfsq = b.mul(b.mul(0.5, f), f)
    dk = b.to_f64(k)
    # log(x) = k*ln2_hi - ((hfsq - (s*(hfsq+R) + k*ln2_lo)) - f)
    inner = b.add(b.mul(s, b.add(hfsq, R)), b.mul(b.opaque(dk), LN2_LO))
    res = b.sub(b.mul(dk, LN2_HI), b.sub(b.sub(hfsq, inner), f))
    res = b.select(b.eq(hx, EXP_MASK), INF, res)          # +inf
    res = b.select(b.lt(x, 0.0), NAN, res)
    res = b.select(b.eq(x, 0.0), -INF, res)               # +-0
    return b.select(b.isnan(x), x, res)


def _ksin(b, x):
    z = b.mul(x, x)
    w = b.mul(z, z)
    r = b.add(b.poly(z, SIN_S[1:4]), b.mul(b.mul(z, w), b.poly(z, SIN_S[4:])))
    v = b.mul(z, x)
    return b.add(x, b.mul(v, b.add(SIN_S[0], b.mul(z, r))))


def _kcos(b, x):
    z = b.mul(x, x)
    w = b.mul(z, z)
    r = b.add(b.mul(z, b.poly(z, COS_C[:3])), b.mul(b.mul(w, w), b.poly(z, COS_C[3:])))
    hz = b.mul(0.5, b.opaque(z))
    w = b.sub(1.0, hz)
    return b.add(w, b.add(b.sub(b.sub(1.0, w), hz), b.mul(z, r)))


def _trig(b, x, fn):
    r, q = reduce_pio2(b, x)
    odd = b.eq(b.band(q, 1), 1)
    if fn == 'tan':
        res = ktan(b, r, odd)
    else:
        s = _ksin(b, r)
        c = _kcos(b, r)
        if fn == 'cos':
            q = b.add(q, 1)                   # cos(x) = sin(x + pi/2)
            odd = b.eq(b.band(q, 1), 1)
        res = b.select(odd, c, s)
        res = b.select(b.eq(b.band(q, 2), 2), b.neg(res), res)
        res = b.min(b.max(res, -1.0), 1.0)
    if fn != 'cos':
        res = b.select(b.eq(x, 0.0), x, res)   # sin(-0) = tan(-0) = -0
    return b.select(b.isfinite(x), res, NAN)


def _atan_pos(b, ax):
    """atan(ax) for ax >= 0 (ax may be +inf)."""
    axc = b.min(ax, _w(0x43B00000))           # 2^60: atan is pi/2 to the last bit beyond
    id0 = b.ge(axc, 0.4375)
    id1 = b.ge(axc, 0.6875)
    id2 = b.ge(axc, 1.1875)
    id3 = b.ge(axc, 2.4375)

    def pick(vals):                            # vals for id = -1, 0, 1, 2, 3
        v = b.select(id0, vals[1], vals[0])
        v = b.select(id1, vals[2], v)
        v = b.select(id2, vals[3], v)
        return b.select(id3, vals[4], v)

    # t = (a*x - c) / (d + e*x):  x,  (2x-1)/(2+x),  (x-1)/(x+1),  (x-1.5)/(1+1.5x),  -1/x
    a = pick([1.0, 2.0, 1.0, 1.0, 0.0])
    c = pick([0.0, 1.0, 1.0, 1.5, 1.0])
    d = pick([1.0, 2.0, 1.0, 1.0, 0.0])
    e = pick([0.0, 1.0, 1.0, 1.5, 1.0])
    hi = pick([0.0] + ATAN_HI)
    lo = pick([0.0] + ATAN_LO)
    t = b.div(b.sub(b.mul(a, axc), c), b.add(d, b.mul(e, axc)))
    z = b.mul(t, t)
    w = b.mul(z, z)
    s1 = b.mul(z, b.poly(w, AT[0::2]))
    s2 = b.mul(w, b.poly(w, AT[1::2]))
    # hi - ((t*(s1+s2) - lo) - t)
    return b.sub(hi, b.sub(b.sub(b.mul(t, b.add(s1, s2)), lo), t))


def _atan(b, x):
    res = b.with_sign_of(_atan_pos(b, b.abs(x)), x)
    return b.select(b.isnan(x), x, res)


def _asin_r(b, t):
    p = b.mul(t, b.poly(t, ASIN_P))
    q = b.add(1.0, b.mul(t, b.poly(t, ASIN_Q)))
    return b.div(p, q)


def _asin(b, x):
    ax = b.abs(x)
    small = b.lt(ax, 0.5)
    t = b.select(small, b.mul(ax, ax), b.mul(b.sub(1.0, ax), 0.5))
    rr = _asin_r(b, t)
    res_small = b.add(ax, b.mul(ax, rr))
    s = b.sqrt(t)
    res_big = b.sub(PIO2_HI, b.sub(b.mul(2.0, b.add(s, b.mul(s, rr))), PIO2_LO))
    df = b.hi_part(s)
    cc = b.div(b.sub(t, b.mul(df, df)), b.max(b.add(s, df), 1e-300))
    p = b.sub(b.mul(b.mul(2.0, s), rr), b.sub(PIO2_LO, b.mul(2.0, cc)))
    q = b.sub(PIO4_HI, b.mul(2.0, df))
    res_mid = b.sub(PIO4_HI, b.sub(p, q))
    res = b.select(small, res_small, b.select(b.ge(ax, ASIN_BIG), res_big, res_mid))
    res = b.with_sign_of(res, x)
    return b.select(b.le(ax, 1.0), res, NAN)            # |x| > 1 and NaN -> NaN


def _acos(b, x):
    ax = b.abs(x)
    small = b.lt(ax, 0.5)
    t = b.select(small, b.mul(x, x), b.mul(b.sub(1.0, ax), 0.5))
    rr = _asin_r(b, t)
    res_small = b.sub(PIO2_HI, b.sub(x, b.sub(PIO2_LO, b.mul(x, rr))))
    s = b.sqrt(t)
    res_neg = b.sub(PI, b.mul(2.0, b.add(s, b.sub(b.mul(rr, s), PIO2_LO))))
    df = b.hi_part(s)
    cc = b.div(b.sub(t, b.mul(df, df)), b.max(b.add(s, df), 1e-300))
    res_pos = b.mul(2.0, b.add(df, b.add(b.mul(rr, s), cc)))
    res = b.select(small, res_small, b.select(b.lt(x, 0.0), res_neg, res_pos))
    return b.select(b.le(ax, 1.0), res, NAN)


def _atan2(b, y, x):
    ax, ay = b.abs(x), b.abs(y)
    z = _atan_pos(b, b.div(ay, b.select(b.eq(ax, 0.0), 1.0, ax)))
    z = b.select(b.eq(ax, 0.0), PIO2_HI, z)               # not |y|/0 = inf: drivers fold 0
    z = b.select(b.land(b.isinf(x), b.isinf(y)), PIO4_HI, z)
    z = b.select(b.eq(ay, 0.0), 0.0, z)                    # y = +-0 (also 0/0)
    res = b.select(b.signbit(x), b.sub(PI, b.sub(z, PI_LO)), z)
    res = b.with_sign_of(res, y)
    return b.select(b.lor(b.isnan(x), b.isnan(y)), NAN, res)


def _tanh(b, x):
    ax = b.min(b.abs(x), 22.0)
    big = b.ge(ax, 1.0)
    t = _expm1(b, b.select(big, b.mul(2.0, ax), b.mul(-2.0, ax)))
    z_big = b.sub(1.0, b.div(2.0, b.add(t, 2.0)))
    z_small = b.div(b.neg(t), b.add(t, 2.0))
    res = b.with_sign_of(b.select(big, z_big, z_small), x)
    return b.select(b.lor(b.isnan(x), b.eq(x, 0.0)), x, res)   # NaN, +-0 unchanged


def _log2_dd(b, ax):
    """log2(ax) for finite ax > 0 as t1 + t2, t1 with 32 zero low bits (fdlibm pow's)."""
    sub = b.lt(ax, _w(0x00100000))
    axs = b.select(sub, b.mul(ax, _w(0x43400000)), ax)  # * 2^53
    ix = b.bits(axs)
    n = b.add(b.sub(b.shr(ix, 52), 1023), b.select(sub, b.const(-53, I64), b.const(0, I64)))
    j = b.band(ix, MANT_MASK)
    jhi = b.shr(j, 32)
    k1 = b.land(b.gt(jhi, 0x3988E), b.lt(jhi, 0xBB67A))  # in (sqrt(3/2), sqrt(3)): base 1.5
    up = b.ge(jhi, 0xBB67A)                               # >= sqrt(3): use m/2 and n+1
    mb = b.bor(j, ONE_BITS)
    mb = b.select(up, b.sub(mb, 0x0010000000000000), mb)
    n = b.select(up, b.add(n, 1), n)
    m = b.from_bits(mb)
    bp = b.select(k1, 1.5, 1.0)
    dp_h = b.select(k1, DP_H1, 0.0)
    dp_l = b.select(k1, DP_L1, 0.0)
    # ss = s_h + s_l = (m - bp)/(m + bp)
    u = b.sub(m, bp)
    v = b.div(1.0, b.add(m, bp))
    ss = b.mul(u, v)
    s_h = b.hi_part(ss)
    m_h = b.hi_part(m)
    t_h = b.add(m_h, bp)                      # exact; t_h + t_l = m + bp
    t_l = b.sub(m, m_h)
    s_l = b.mul(v, b.sub(b.sub(u, b.mul(s_h, t_h)), b.mul(b.opaque(s_h), t_l)))
    # log(m/bp) = 2 ss + 2/3 ss^3 + ...
    s2 = b.mul(ss, ss)
    r = b.mul(b.mul(s2, s2), b.poly(s2, POW_L))
    r = b.add(r, b.mul(s_l, b.add(s_h, ss)))
    s2 = b.mul(s_h, s_h)
    t_h = b.hi_part(b.add(b.add(3.0, s2), r))
    t_l = b.sub(r, b.sub(b.sub(t_h, 3.0), s2))
    u = b.mul(s_h, t_h)
    v = b.add(b.mul(s_l, b.opaque(t_h)), b.mul(t_l, ss))
    p_h = b.hi_part(b.add(u, v))
    p_l = b.sub(v, b.sub(p_h, u))
    z_h = b.mul(CP_H, p_h)
    z_l = b.add(b.add(b.mul(CP_L, b.opaque(p_h)), b.mul(p_l, CP)), dp_l)
    t = b.to_f64(n)
    t1 = b.hi_part(b.add(b.add(b.add(z_h, z_l), dp_h), t))
    t2 = b.sub(z_l, b.sub(b.sub(b.sub(t1, t), dp_h), z_h))
    return t1, t2


def _exp2_dd(b, p_h, p_l):
    """2^(p_h + p_l) for |p_l| << |p_h|; overflows to inf / underflows to 0 past the range."""
    zs = b.add(p_h, p_l)
    inr = b.le(b.abs(zs), 1100.0)            # outside: certain overflow / underflow
    p_h = b.select(inr, p_h, 0.0)
    p_l = b.select(inr, p_l, 0.0)
    nf = b.round(p_h)
    p_h = b.sub(p_h, nf)                      # exact
    t = b.hi_part(b.add(p_l, p_h))
    u = b.mul(t, LG2_H)
    v = b.add(b.mul(b.sub(p_l, b.sub(t, p_h)), LG2), b.mul(b.opaque(t), LG2_L))
    z = b.add(u, v)
    w = b.sub(v, b.sub(z, u))                 # rounding error of z (may be folded to 0: harmless)
    tt = b.mul(z, z)
    t1 = b.sub(z, b.mul(tt, b.poly(tt, EXP_P)))
    r = b.sub(b.div(b.mul(z, t1), b.sub(t1, 2.0)), b.add(w, b.mul(z, w)))
    z = b.sub(1.0, b.sub(r, z))
    return b.select(inr, b.ldexp(z, b.to_i64(nf)), b.select(b.gt(zs, 0.0), INF, 0.0))


def _pow(b, x, y):
    ax, ay = b.abs(x), b.abs(y)
    xneg = b.signbit(x)
    yfin = b.isfinite(y)
    yint = b.land(yfin, b.eq(b.floor(y), y))
    # odd integer: |y| < 2^53 and y - 2*floor(y/2) == 1 (all exact)
    yodd = b.land(b.land(yint, b.lt(ay, _w(0x43400000))),
                  b.eq(b.sub(y, b.mul(2.0, b.floor(b.mul(y, 0.5)))), 1.0))
    # |x|^y for finite nonzero x, finite y
    axc = b.select(b.land(b.gt(ax, 0.0), b.isfinite(ax)), ax, 1.0)
    t1, t2 = _log2_dd(b, axc)
    y1 = b.hi_part(y)
    p_l = b.add(b.mul(b.sub(y, y1), b.opaque(t1)), b.mul(y, t2))
    p_h = b.mul(y1, t1)
    core = _exp2_dd(b, p_h, p_l)
    res = b.select(b.land(xneg, yodd), b.neg(core), core)
    res = b.select(b.land(xneg, b.lnot(yint)), NAN, res)   # negative ** non-integer
    # x = +-0 or +-inf: 0 or inf, negative when x is negative and y an odd integer
    mag = b.select(b.eq(b.eq(ax, 0.0), b.gt(y, 0.0)), 0.0, INF)
    mag = b.select(b.land(xneg, yodd), b.neg(mag), mag)
    res = b.select(b.lor(b.eq(ax, 0.0), b.isinf(x)), mag, res)
    # y = +-inf
    yinf = b.select(b.eq(b.lt(ax, 1.0), b.lt(y, 0.0)), INF, 0.0)
    yinf = b.select(b.eq(ax, 1.0), 1.0, yinf)
    res = b.select(b.isinf(y), yinf, res)
    res = b.select(b.lor(b.isnan(x), b.isnan(y)), NAN, res)
    return b.select(b.lor(b.eq(y, 0.0), b.eq(x, 1.0)), 1.0, res)


# the lowerings the op table (vkdiff/optable.py) names, each (builder, *operands) -> value
exp, log, atan, asin, acos, tanh, pow, atan2 = _exp, _log, _atan, _asin, _acos, _tanh, _pow, _atan2


def sin(b, x):
    return _trig(b, x, 'sin')


def cos(b, x):
    return _trig(b, x, 'cos')


def tan(b, x):
    return _trig(b, x, 'tan')


def log2(b, x):
    """log2 as pow computes it (_log2_dd: t1 + t2 in extra precision), so exact at powers of 2."""
    ok = b.land(b.gt(x, 0.0), b.isfinite(x))
    t1, t2 = _log2_dd(b, b.select(ok, x, 1.0))
    res = b.select(b.isinf(x), INF, b.add(t1, t2))
    res = b.select(b.lt(x, 0.0), NAN, res)
    res = b.select(b.eq(x, 0.0), -INF, res)            # +-0
    return b.select(b.isnan(x), x, res)


def exp2(b, x):
    """2^x as pow's final step computes it (exact at integers)."""
    return b.select(b.isnan(x), x, _exp2_dd(b, x, b.const(0.0)))


def expm1(b, x):
    """fdlibm's expm1 on [-60, 60]; beyond, exp(x) (to which exp(x) - 1 rounds) and -1."""
    res = _expm1(b, b.min(b.max(x, -60.0), 60.0))
    res = b.select(b.gt(x, 60.0), _exp(b, x), res)
    res = b.select(b.lt(x, -60.0), -1.0, res)
    return b.select(b.lor(b.isnan(x), b.eq(x, 0.0)), x, res)   # NaN, +-0 unchanged
