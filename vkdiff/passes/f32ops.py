"""Pass helper (lowering, passes/lower.py): the building blocks of vkdiff's own f32 math under
`ti.init(fast_math=False)` (passes/f32_trig.py, f32_explog.py, f32_divsqrt.py).

Only f32 and 32-bit integer operations (SwiftShader has neither f64 nor i64), and among those only
the ones Vulkan defines exactly: f32 add, sub and mul are correctly rounded, conversions between
i32 and f32, floor, min/max, bit casts and integer ops are exact. Division, sqrt and the
GLSL.std.450 functions are not (2.5 ulp, 3 ulp, 2^-11 absolute for sin...): their results differ
between drivers, so they are used only as first guesses that a correction makes exact
(f32_divsqrt.py), never as results.

The SPIR-V of a program compiled with fast_math=False carries NoContraction on every float
operation (codegen/spirv.py), so neither spirv-opt nor the driver fuses a*b + c or reassociates:
the error-free transformations below (two_sum, two_prod by splitting into 12-bit halves) hold.
The lowered code is straight-line: every branch is computed and the right one chosen by `select`.
"""
import struct

from .. import types as T

F32, I32 = T.f32, T.i32

ABS = 0x7FFFFFFF
EXP = 0x7F800000
HI12 = -0x1000                          # keeps sign, exponent and the top 11 mantissa bits


def f32(v):
    """v rounded to the nearest f32, as a Python float (constants are exact in the IR)."""
    return struct.unpack('<f', struct.pack('<f', v))[0]


def w32(bits):
    """The f32 whose IEEE bits are `bits`."""
    return struct.unpack('<f', struct.pack('<I', bits & 0xFFFFFFFF))[0]


INF = float('inf')
NAN = float('nan')


class F32Ops:
    """Helpers mixed into an irbuild.Builder with default_fp=f32 (passes/lower.py F32Builder)."""

    # ------------------------------------------------------------ bits and conversions
    def bits(self, a): return self.bitcast(a, I32)
    def from_bits(self, a): return self.bitcast(a, F32)
    def to_i32(self, a): return self.cast(a, I32)       # truncates
    def to_f32(self, a): return self.cast(a, F32)

    def abs_bits(self, x):
        return self.band(self.bits(x), ABS)

    def fabs(self, x):
        """|x| from the bits (a driver that flushes subnormals may flush FAbs's result)."""
        return self.from_bits(self.abs_bits(x))

    def tiny(self, x):
        """|x| < 2^-12 (subnormals included, whatever the driver does with them)."""
        return self.lt(self.abs_bits(x), 0x39800000)

    def is_integer(self, x):
        """(x is an integer, x is an odd integer), from the bits: drivers that flush subnormals
        see a subnormal as 0 in float comparisons."""
        h = self.abs_bits(x)
        e = self.shr(h, 23)
        m = self.bor(self.band(h, 0x007FFFFF), 0x00800000)
        sh = self.min(self.max(self.sub(150, e), 0), 31)   # bits below the binary point
        frac = self.band(m, self.sub(self.shl(1, sh), 1))
        whole = self.lor(self.ge(e, 150), self.land(self.ge(e, 127), self.eq(frac, 0)))
        whole = self.land(self.lor(whole, self.eq(h, 0)), self.lt(h, EXP))
        odd = self.land(self.land(self.ge(e, 127), self.le(e, 150)),
                        self.eq(self.band(self.shr(m, sh), 1), 1))
        return whole, self.land(whole, odd)

    def isnan(self, x):
        return self.gt(self.abs_bits(x), EXP)

    def isinf(self, x):
        return self.eq(self.abs_bits(x), EXP)

    def isfinite(self, x):
        return self.lt(self.abs_bits(x), EXP)

    def signbit(self, x):
        return self.lt(self.bits(x), 0)

    def with_sign_of(self, r, x):
        """r (>= 0 or +0) with x's sign bit."""
        return self.from_bits(self.bor(self.bits(r), self.band(self.bits(x), -0x80000000)))

    def pow2(self, k):
        """2.0**k for an i32 k in [-126, 127]."""
        return self.from_bits(self.shl(self.add(k, 127), 23))

    def ldexp(self, y, k):
        """y * 2**k for an i32 k in about [-250, 250] and y near 1 (two factors: a subnormal
        result rounds once)."""
        k1 = self.shr(k, 1)
        return self.mul(self.mul(y, self.pow2(k1)), self.pow2(self.sub(k, k1)))

    def scale_dd(self, yh, yl, k):
        """(yh + yl) * 2^k correctly rounded, for yh >= 0 normal, |yl| <= ulp(yh)/2 (only its sign
        matters) and an i32 k, built from the bits: a subnormal result is rounded once (yl breaks the ties) and
        written as bits, so drivers that flush subnormal arithmetic still return it; beyond
        the range, inf or 0."""
        h = self.bits(yh)
        e = self.add(self.shr(h, 23), k)               # the result's biased exponent
        normal = self.from_bits(self.add(h, self.shl(k, 23)))
        m = self.bor(self.band(h, 0x007FFFFF), 0x00800000)
        s = self.min(self.sub(1, e), 31)               # right shift of the 24-bit mantissa
        q = self.shr(m, s)
        rem = self.band(m, self.sub(self.shl(1, s), 1))
        half = self.shl(1, self.sub(s, 1))
        tie = self.eq(rem, half)
        up = self.lor(self.gt(rem, half),
                      self.land(tie, self.lor(self.gt(yl, 0.0),
                                              self.land(self.eq(yl, 0.0),
                                                        self.eq(self.band(q, 1), 1)))))
        sub = self.from_bits(self.add(q, self.select(up, 1, 0)))
        res = self.select(self.ge(e, 1), normal, sub)
        res = self.select(self.ge(e, 255), INF, res)
        return self.select(self.lt(e, -30), 0.0, res)

    def poly(self, x, coeffs):
        """c0 + x*(c1 + x*(c2 + ...)) (Horner)."""
        acc = self.const(coeffs[-1])
        for c in reversed(coeffs[:-1]):
            acc = self.add(c, self.mul(x, acc))
        return acc

    def guarded(self, cond, fn, fallback):
        """The values fn() returns where `cond` holds, else `fallback` (a tuple of values of
        the same types): fn's code runs inside an IR `if`, so an invocation (a SIMD row of
        them, on CPU drivers) skips it when cond is false everywhere."""
        fallback = [self.value(v) for v in fallback]
        var = [self.emit('alloca', v.dtype) for v in fallback]
        for p, v in zip(var, fallback):
            self.emit('store', None, [p, v])
        block = type(self.blocks[-1])           # ir.Block (not imported: ir -> optable -> here)
        then = block()
        consts, self._consts = self._consts, ({} if self._consts is not None else None)
        try:                    # (constants made inside the `if` stay inside it)
            with self.open(then):
                for p, v, f in zip(var, fn(), fallback):
                    self.emit('store', None, [p, self.value(v, f.dtype)])
        finally:
            self._consts = consts
        self.emit('if', None, [cond], blocks=[then, block()])
        return [self.V(self.emit('load', v.dtype, [p])) for p, v in zip(var, fallback)]

    def table(self, values, index):
        """values[index] for a table of i32 constants (a per-thread array, made once per
        lowered statement) and an i32 index."""
        tables = self.__dict__.setdefault('_tables', {})
        t = tables.get(id(values))
        if t is None:
            t = self.emit('alloca', I32, [], {'size': len(values)})
            for k, v in enumerate(values):
                self.emit('astore', None, [t, self.const(k, I32), self.const(v, I32)])
            tables[id(values)] = t
        return self.V(self.emit('aload', I32, [t, index]))

    # ------------------------------------------------------------ error-free transformations
    def hi_part(self, x):
        """x with its low 12 mantissa bits cleared: 12 significant bits, so the product of two
        is exact."""
        return self.from_bits(self.band(self.bits(x), HI12))

    def split(self, x):
        h = self.hi_part(x)
        return h, self.sub(x, h)

    def two_prod(self, a, b):
        """(p, e) with p = fl(a*b) and p + e = a*b exactly (Dekker; no fma: Vulkan's Fma need
        not be fused). Needs a*b and its partial products clear of overflow and underflow."""
        p = self.mul(a, b)
        ah, al = self.split(a)
        bh, bl = self.split(b)
        e = self.add(self.add(self.add(self.sub(self.mul(ah, bh), p), self.mul(ah, bl)),
                              self.mul(al, bh)), self.mul(al, bl))
        return p, e

    def fast_two_sum(self, a, b):
        """(s, e) with s = fl(a + b), s + e = a + b exactly, for |a| >= |b| (or a = 0)."""
        s = self.add(a, b)
        return s, self.sub(b, self.sub(s, a))

    def two_sum(self, a, b):
        s = self.add(a, b)
        bb = self.sub(s, a)
        return s, self.add(self.sub(a, self.sub(s, bb)), self.sub(b, bb))


class HostF32(F32Ops):
    """The builder interface of the f32 lowerings evaluated with numpy on f32 / i32 arrays
    (numpy's f32 add, sub and mul are IEEE's, as Vulkan's), so tools and tests check the
    algorithms over millions of inputs without a device. The driver's approximate OpFDiv and
    Sqrt are numpy's correctly rounded ones here."""

    def __init__(self):
        import numpy as np
        self.np = np

    def _t(self, x):
        np = self.np
        if isinstance(x, bool):
            return np.bool_(x)
        if isinstance(x, int):
            return np.int32(x)
        if isinstance(x, float):
            return np.float32(x)
        return x

    def const(self, v, dtype=None):
        return self._t(v) if dtype is None else self.np.asarray(v, dtype=dtype.np)[()]

    def bitcast(self, a, dtype):
        return self.np.asarray(self._t(a)).view(dtype.np)

    def cast(self, a, dtype):
        return self.np.asarray(self._t(a)).astype(dtype.np)

    def select(self, c, a, b):
        a, b = self._t(a), self._t(b)
        dt = a.dtype if hasattr(a, 'dtype') else b.dtype
        return self.np.where(c, a, b).astype(dt)

    def guarded(self, cond, fn, fallback):
        return [self.np.where(cond, v, f) for v, f in zip(fn(), fallback)]

    def value(self, v, dtype=None):
        return self._t(v)

    def table(self, values, index):
        """values[index] (a constant table, an i32 index array)."""
        return self.np.asarray(values, dtype=self.np.int32)[index]

    _NP = {'add': 'add', 'sub': 'subtract', 'mul': 'multiply', 'div': 'true_divide',
           'neg': 'negative', 'abs': 'abs', 'floor': 'floor', 'sqrt': 'sqrt', 'min': 'minimum',
           'max': 'maximum', 'lt': 'less', 'le': 'less_equal', 'gt': 'greater',
           'ge': 'greater_equal', 'eq': 'equal', 'ne': 'not_equal', 'band': 'bitwise_and',
           'bor': 'bitwise_or', 'bxor': 'bitwise_xor', 'shl': 'left_shift',
           'shr': 'right_shift', 'land': 'logical_and', 'lor': 'logical_or'}

    def __getattr__(self, name):
        fn = self._NP.get(name)
        if fn is None:
            raise AttributeError(name)
        f = getattr(self.np, fn)
        return lambda *a: f(*[self._t(v) for v in a])

    def lnot(self, a):
        return self.np.logical_not(a)
