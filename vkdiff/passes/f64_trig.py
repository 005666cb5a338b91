"""Pass helper (used by f64math): f64 sin/cos/tan argument reduction by pi/2 over the whole finite
range, and the tan kernel.

`reduce_pio2(b, x)` returns (r, q): x = n*pi/2 + r with |r| <= ~pi/4 and q = n mod 4 (i64), with
r within about half an ulp of the exact reduced argument for EVERY finite double (Payne-Hanek
reduction done in integer arithmetic, as IR statements appended through f64math's builder `b`):

  |x| = m * 2^E with m the 53-bit integer mantissa. x*2/pi mod 4 only needs the bits of 2/pi
  from weight 2^-(E-1) on (earlier bits contribute multiples of 4), and 182 of them are enough:
  the smallest distance of a double's x*2/pi to an integer is about 2^-61.5, the bits dropped
  weigh less than m * 2^-180 < 2^-127. The 182-bit window W is cut from a table of 2/pi in
  26-bit limbs (a per-thread array, indexed by E), m*W mod 2^182 is computed exactly in 26-bit
  limbs (products < 2^53, column sums < 2^55: no i64 overflow anywhere), its top two bits are n
  mod 4 and the rest the fraction f. f is rounded to nearest (|f| <= 1/2), turned into a double
  pair hi + lo (each exact: 52-bit integers times a power of two, starting at f's first nonzero
  limb, so they carry >= 79 significant bits) and multiplied by pi/2 with one final rounding.
  |x| <= pi/4 is not reduced (r = x, q = 0).

`ktan(b, r, odd)` is fdlibm's __kernel_tan (tan(r), or -1/tan(r) for odd n, each within 1 ulp;
tan as sin/cos of r was up to 3 ulp).

Only integer ops, exact f64 operations and one rounded sum of a tiny tail: nothing that the
driver's fast-math folding (see f64math's docstring) can spoil beyond the last bit.
"""
import struct

from .. import types as T

F64, I64, I32 = T.f64, T.i64, T.i32

LIMB = 26
M26 = (1 << LIMB) - 1
WINDOW_LIMBS = 7                       # 182 bits of 2/pi per reduction
PAD = 55                               # zero bits in front of 2/pi (windows for |x| < 1 start there)
TABLE_LIMBS = 48                       # PAD + 970 (the last exponent's start) + 208 bits, in limbs
PIO4 = 0.7853981633974483              # the double nearest pi/4 (fdlibm's 0x3FE921FB54442D18)


def _pi_fixed(bits):
    """floor(pi * 2^bits), by Machin's formula in integers (with guard bits)."""
    g = bits + 32
    one = 1 << g

    def atan_inv(k):                   # atan(1/k) * 2^g
        total, term, n, sign = 0, one // k, 1, 1
        while term:
            total += sign * (term // n)
            term //= k * k
            n += 2
            sign = -sign
        return total
    return (16 * atan_inv(5) - 4 * atan_inv(239)) >> 32


_NBITS = TABLE_LIMBS * LIMB
_PI = _pi_fixed(_NBITS + 64)           # pi * 2^(NBITS+64)
# 2/pi * 2^-PAD as an NBITS-bit fraction: table bit u (from the top, 0-based) is 2/pi's bit u-PAD+1
_TWO_OVER_PI = ((2 << (2 * (_NBITS + 64))) // _PI) >> (64 + PAD)
TABLE = [(_TWO_OVER_PI >> (_NBITS - LIMB * (j + 1))) & M26 for j in range(TABLE_LIMBS)]


def _f(v):
    return struct.unpack('<d', struct.pack('<Q', v))[0]


TAN_T = [_f(v) for v in (
    0x3FD5555555555563, 0x3FC111111110FE7A, 0x3FABA1BA1BB341FE, 0x3F9664F48406D637,
    0x3F8226E3E96E8493, 0x3F6D6D22C9560328, 0x3F57DBC8FEE08315, 0x3F4344D8F2F26501,
    0x3F3026F71A8D1068, 0x3F147E88A03792A6, 0x3F12B80F32F0A7E9, 0xBEF375CBDB605373,
    0x3EFB2A7074BF7AD4)]
PIO4_LO = _f(0x3C81A62633145C07)
TAN_BIG = _f(0x3FE5942800000000)       # 0.6744...: above it tan(x) = tan(pi/4 - (pi/4 - x))


# pi/2 = PIO2_1 + PIO2_2 to ~2^-74: PIO2_1 has 21 significant bits (products with <= 32-bit
# numbers are exact)
_PIO2_FIX = _PI >> 1                   # pi/2 * 2^(NBITS+64)
_SHIFT = _NBITS + 64
PIO2_1 = (_PIO2_FIX >> (_SHIFT - 20)) / 2.0 ** 20
PIO2 = _PIO2_FIX / (1 << _SHIFT)
PIO2_2 = (_PIO2_FIX - ((_PIO2_FIX >> (_SHIFT - 20)) << (_SHIFT - 20))) / (1 << _SHIFT)


def reduce_pio2(b, x):
    """(r, q): see the module docstring. `b` is f64math's builder."""
    ax = b.abs(x)
    bits = b.bits(ax)
    m = b.bor(b.band(bits, (1 << 52) - 1), 1 << 52)
    e = b.sub(b.shr(bits, 52), 1075)                       # |x| = m * 2^e (normal x)
    # window start in table bits: 2/pi's bit p = e - 1 is table bit p + PAD - 1
    u0 = b.min(b.max(b.add(e, PAD - 2), 0), LIMB * (TABLE_LIMBS - WINDOW_LIMBS - 1) + LIMB - 1)
    j = b.shr(b.mul(u0, 2521), 16)                         # u0 // 26 (exact for u0 < 1400)
    t = b.sub(u0, b.mul(j, LIMB))
    table = b.emit('alloca', I64, [], {'size': TABLE_LIMBS})
    for k, v in enumerate(TABLE):
        b.emit('astore', None, [table, b.const(k, I32), b.const(v, I64)])
    ji = b.emit('cast', I32, [j])
    words = [b.emit('aload', I64, [table, b.add(ji, k)]) for k in range(WINDOW_LIMBS + 1)]
    rt = b.sub(LIMB, t)
    w = [b.band(b.bor(b.shl(words[k], t), b.shr(words[k + 1], rt)), M26)
         for k in range(WINDOW_LIMBS)]                     # w[0] most significant
    # m * W mod 2^182, 26-bit limbs from the least significant
    res = limb_product(b, m, w, LIMB)
    top = res[-1]                                          # 2 integer bits + 24 fraction bits
    n = b.shr(top, LIMB - 2)
    g = [b.band(top, (1 << (LIMB - 2)) - 1)] + res[-2::-1]  # fraction limbs, most significant first
    up = b.ne(b.band(top, 1 << (LIMB - 3)), 0)             # fraction >= 1/2: round n up, f - 1
    n = b.add(n, b.select(up, b.const(1, I64), b.const(0, I64)))
    masks = [(1 << (LIMB - 2)) - 1] + [M26] * (WINDOW_LIMBS - 1)
    g = [b.select(up, b.bxor(gk, mk), gk) for gk, mk in zip(g, masks)]   # |f - 1| (to 2^-180)
    # hi, lo from the first nonzero limb among g[0..2] (|f| >= 2^-62 for every double)
    weights = [24 + LIMB * k for k in range(WINDOW_LIMBS)]  # g[k] counts units of 2^-weights[k]
    hi_i, lo_i, sc = None, None, None
    for a in (2, 1, 0):
        hv = b.add(b.shl(g[a], LIMB), g[a + 1])
        lv = b.add(b.shl(g[a + 2], LIMB), g[a + 3])
        s = 2.0 ** -weights[a + 1]
        if hi_i is None:
            hi_i, lo_i, sc = hv, lv, b.const(s)
        else:
            nz = b.ne(g[a], 0)
            hi_i, lo_i, sc = b.select(nz, hv, hi_i), b.select(nz, lv, lo_i), b.select(nz, s, sc)
    hi = b.mul(b.to_f64(hi_i), sc)                         # exact
    lo = b.mul(b.to_f64(lo_i), b.mul(sc, 2.0 ** -(2 * LIMB)))
    # r = (hi + lo) * pi/2, one rounding of a sum whose big part is exact
    h1 = b.hi_part(hi)
    h2 = b.sub(hi, h1)                                     # exact (masked-off bits)
    tail = b.add(b.mul(hi, PIO2_2), b.mul(lo, PIO2))     # lo may be 2^-27 of hi
    r = b.add(b.mul(h1, PIO2_1), b.add(b.mul(b.opaque(h2), PIO2_1), tail))
    r = b.select(up, b.neg(r), r)
    q = b.band(n, 3)
    neg = b.signbit(x)
    r = b.select(neg, b.neg(r), r)
    q = b.select(neg, b.band(b.sub(4, q), 3), q)
    small = b.le(ax, PIO4)
    return b.select(small, x, r), b.select(small, b.const(0, I64), q)


def ktan(b, x, odd):
    """tan(x) (odd false) or -1/tan(x) (odd true, a u1 statement) for |x| <= ~pi/4: fdlibm's
    __kernel_tan with no tail, straight-line (both branches computed, one selected)."""
    big = b.ge(b.abs(x), TAN_BIG)
    sign = b.signbit(x)
    ax = b.abs(x)
    xb = b.add(b.sub(PIO4, ax), PIO4_LO)                # pi/4 - |x|
    x = b.select(big, xb, x)
    z = b.mul(x, x)
    w = b.mul(z, z)
    r = b.poly(w, TAN_T[1::2])
    v = b.mul(z, b.poly(w, TAN_T[2::2]))
    s = b.mul(z, x)
    r = b.add(b.mul(z, b.mul(s, b.add(r, v))), b.mul(s, TAN_T[0]))
    w = b.add(x, r)
    # big: tan = sgn * (one_s - 2*(x + (r - w*w/(w + one_s)))), one_s = 1 (even) or -1 (odd)
    one_s = b.select(odd, -1.0, 1.0)
    vb = b.sub(one_s, b.mul(2.0, b.add(x, b.sub(r, b.div(b.mul(w, w), b.add(w, one_s))))))
    vb = b.select(sign, b.neg(vb), vb)
    # odd, small: -1/(x + r) with a hi/lo correction
    w0 = b.hi_part(w)
    v = b.sub(r, b.sub(w0, x))                          # w0 + v = x + r
    a = b.div(-1.0, w)
    a0 = b.hi_part(a)
    vo = b.add(a0, b.mul(a, b.add(b.add(1.0, b.mul(a0, w0)), b.mul(b.opaque(a0), v))))
    return b.select(big, vb, b.select(odd, vo, w))


def limb_product(b, m, w, limb):
    """m (two `limb`-bit limbs) times the window w (limbs, most significant first), truncated to
    len(w) limbs: the limbs of the product from the least significant (schoolbook, one carry).
    f32_trig uses it with 12-bit limbs in 32-bit integers, this module with 26-bit limbs in i64."""
    mask = (1 << limb) - 1
    m0, m1 = b.band(m, mask), b.shr(m, limb)
    wl = w[::-1]
    res, carry = [], None
    for c in range(len(w)):
        col = b.mul(m0, wl[c])
        if c:
            col = b.add(col, b.mul(m1, wl[c - 1]))
        if carry is not None:
            col = b.add(col, carry)
        res.append(b.band(col, mask))
        carry = b.shr(col, limb)
    return res
