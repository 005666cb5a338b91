"""Data floor: Taichi's quantized types (`ti.types.quant.int/fixed/float`) and
`ti.BitpackedFields`, which stores several quantized scalar fields in one physical 32-bit word per
cell: one i32 vkdiff field (the *word field*) holds the bits of every member, so `x`, `y` of 16
bits each take 4 bytes a cell instead of 8 (2-8x less memory than i32/f32 fields).

A member (QuantField) is a Field whose own buffer is never allocated: kernels read the word and
extract, sign-extend and scale the member's bits; they write with an atomic `and` that clears the
member's bits then an atomic `or` that sets them (frontend/quant_access.py), so concurrent writes
to sibling members of one word never lose each other. Python scope decodes/encodes here.

What vkdiff has: quant.int, quant.fixed and quant.float members of a BitpackedFields
(max_num_bits <= 32) placed under dense (and pointer/bitmasked) nodes. Shared exponents,
`quant_array`, 64-bit words, atomics on members and gradients refuse clearly."""
import builtins

import numpy as np

from .. import types as T
from ..errors import TaichiCompilationError, UnsupportedError, VkdiffTypeError, VkdiffValueError
from ..frontend.context import current
from . import hooks
from .field import Field
from .torch_io import as_numpy

_int, _float = builtins.int, builtins.float


class QuantType:
    """A quantized scalar type: `bits` stored bits, computed as `compute`."""
    kind = 'quant'

    def __init__(self, bits, signed, compute):
        if not isinstance(bits, _int) or isinstance(bits, bool) or not 1 <= bits <= 64:
            raise VkdiffValueError(f'quantized type: bits must be an int in 1..64, got {bits!r}')
        self.bits, self.signed, self.compute = bits, bool(signed), T.resolve(compute)

    def __eq__(self, other):
        return type(self) is type(other) and self._key() == other._key()

    def __hash__(self):
        return hash((type(self).__name__,) + self._key())

    def _key(self):
        return (self.bits, self.signed, self.compute.name)

    # ------------------------------------------------------------------ host encode/decode
    def encode(self, values):
        """numpy values (compute type) -> the stored bit patterns, as uint64 (wrapped)."""
        raise NotImplementedError

    def decode(self, raw):
        """uint64 bit patterns (low `bits` bits) -> numpy values of the compute type."""
        raise NotImplementedError

    def _sign_extend(self, raw):
        raw = raw.astype(np.int64) & ((1 << self.bits) - 1)
        if self.signed:
            raw = np.where(raw >= (1 << (self.bits - 1)), raw - (1 << self.bits), raw)
        return raw


class QuantIntType(QuantType):
    """`ti.types.quant.int(bits, signed=True, compute=None)`: stores bits, wraps like Taichi."""

    def __repr__(self):
        return f"q{'i' if self.signed else 'u'}{self.bits}"

    def encode(self, values):
        v = np.asarray(values)
        v = np.trunc(v).astype(np.int64) if v.dtype.kind == 'f' else v.astype(np.int64)
        return v.astype(np.uint64) & np.uint64((1 << self.bits) - 1)

    def decode(self, raw):
        return self._sign_extend(raw).astype(self.compute.np)


class QuantFixedType(QuantType):
    """`ti.types.quant.fixed(bits, signed=True, max_value=1.0, compute=None, scale=None)`: a
    quant.int of `bits` times `scale` (f32 by default). Stores round(value / scale), rounding
    half away from zero, and wraps, as Taichi 1.7.4 does (checked against its printed values)."""

    def __init__(self, bits, signed, compute, scale):
        super().__init__(bits, signed, compute)
        self.scale = _float(scale)

    def _key(self):
        return super()._key() + (self.scale,)

    def __repr__(self):
        return f"qfx(d=q{'i' if self.signed else 'u'}{self.bits} c={self.compute.name} " \
               f"s={self.scale:g})"

    def encode(self, values):
        ft = self.compute.np.type
        s = np.asarray(values, dtype=ft) * ft(1.0 / self.scale)
        s = s + np.copysign(ft(0.5), s).astype(ft)
        return np.trunc(s).astype(np.int64).astype(np.uint64) & np.uint64((1 << self.bits) - 1)

    def decode(self, raw):
        ft = self.compute.np.type
        return self._sign_extend(raw).astype(ft) * ft(self.scale)


class QuantFloatType(QuantType):
    """`ti.types.quant.float(exp, frac, signed=True, compute=None)`: `exp` + `frac` bits."""

    def __init__(self, exp, frac, signed, compute):
        # (Taichi's frac type is a quant.int of `frac` bits, the sign among them when signed:
        # quant.float(exp=5, frac=10) is the 15-bit type its tests call f15)
        super().__init__(exp + frac, signed, compute)
        self.exp, self.frac = exp, frac

    def _key(self):
        return super()._key() + (self.exp, self.frac)

    # The stored bits, low to high: `m` mantissa bits (frac - 1 when signed), the sign bit when
    # signed, then `exp` exponent bits (bias 2**(exp-1) - 1; exponent 0 is the value 0, no
    # denormals, no inf/nan). Stores as Taichi 1.7.4 does (checked against its printed values):
    # the f32's magnitude bits plus half a unit of the last kept bit, then truncated (round half
    # away from zero, carrying into the exponent); too small is 0; the exponent wraps. Unsigned
    # types store the magnitude.
    @property
    def mant_bits(self):
        return self.frac - (1 if self.signed else 0)

    @property
    def bias(self):
        return (1 << (self.exp - 1)) - 1

    def encode(self, values):
        f = np.asarray(values, dtype=np.float32)
        bits = f.view(np.uint32).astype(np.int64)
        m = self.mant_bits
        mag = (bits & 0x7FFFFFFF) + (1 << (22 - m) if m < 23 else 0)  # (23 bits: exact)
        e = (mag >> 23) - (127 - self.bias)
        mant = (mag >> (23 - m)) & ((1 << m) - 1)
        zero = e <= 0
        e = np.where(zero, 0, e & ((1 << self.exp) - 1))
        code = np.where(zero, 0, mant) | (e << self.frac)
        if self.signed:
            code |= ((bits >> 31) & 1) << m
        return code.astype(np.uint64)

    def decode(self, raw):
        raw = np.asarray(raw).astype(np.int64)
        m = self.mant_bits
        mant = raw & ((1 << m) - 1)
        e = (raw >> self.frac) & ((1 << self.exp) - 1)
        sign = (raw >> m) & 1 if self.signed else 0
        bits = (sign << 31) | ((e + 127 - self.bias) << 23) | (mant << (23 - m))
        f = np.asarray(bits & 0xFFFFFFFF).astype(np.uint32).view(np.float32)
        return np.where(e == 0, np.float32(0), f).astype(self.compute.np)

    def __repr__(self):
        return f"qfl(d=q{'i' if self.signed else 'u'}{self.frac} e=qu{self.exp} " \
               f"c={self.compute.name})"


def int(bits, signed=True, compute=None):  # noqa: A001 (Taichi's name: ti.types.quant.int)
    """Taichi's `ti.types.quant.int`: a quantized integer type of `bits` bits."""
    return QuantIntType(bits, signed, compute or (T.i32 if signed else T.u32))


def fixed(bits, signed=True, max_value=1.0, compute=None, scale=None):
    """Taichi's `ti.types.quant.fixed`: `scale` wins over `max_value` (max_value / 2**(bits-1)
    when signed, / 2**bits unsigned)."""
    if scale is None:
        scale = max_value / 2 ** (bits - 1) if signed else max_value / 2 ** bits
    return QuantFixedType(bits, signed, compute or T.f32, scale)


def float(exp, frac, signed=True, compute=None):  # noqa: A001 (Taichi's name)
    """Taichi's `ti.types.quant.float`: exponent and fraction bits (see QuantFloatType)."""
    return QuantFloatType(exp, frac, signed, compute or T.f32)


__all__ = ['int', 'fixed', 'float']


def is_quant(dtype):
    return isinstance(dtype, QuantType)


# ---------------------------------------------------------------------- BitpackedFields
class BitpackedFields:
    """Taichi's `ti.BitpackedFields(max_num_bits=32)`: `.place(x, y, shared_exponent=False)` its
    quantized members, then `node.place(bitpack)` stores them in one word per cell."""

    def __init__(self, max_num_bits):
        if not isinstance(max_num_bits, _int) or max_num_bits not in (8, 16, 32, 64):
            raise VkdiffValueError(f'BitpackedFields: max_num_bits must be 8, 16, 32 or 64, got '
                                   f'{max_num_bits!r}')
        self.max_num_bits = max_num_bits
        self.fields = []  # the QuantFields in bit order
        self.used = 0
        self._word = None

    def place(self, *args, shared_exponent=False):
        """Lay out members from the lowest bit up (Taichi's order)."""
        if shared_exponent and len(args) < 2:
            raise TaichiCompilationError('At least 2 fields need to be placed when '
                                         'shared_exponent=True')
        for f in args:
            if not isinstance(f, QuantField):
                raise VkdiffTypeError(f'BitpackedFields.place takes fields of quantized types '
                                      f'(ti.types.quant), got {f!r}')
            if f._bitpack is not None:
                raise VkdiffValueError(f'field {f.name} is placed in a BitpackedFields already')
        if shared_exponent:
            raise UnsupportedError('BitpackedFields.place(..., shared_exponent=True): shared '
                                   'exponents are not implemented in vkdiff')
        for f in args:
            if isinstance(f.qtype, QuantFloatType) and not 2 <= f.qtype.exp <= 8 or \
                    isinstance(f.qtype, QuantFloatType) and not 1 <= f.qtype.mant_bits <= 23:
                raise UnsupportedError(f'field {f.name}: vkdiff stores quant.float with 2..8 '
                                       'exponent bits and 1..23 mantissa bits (f32 computing)')
            if self.used + f.qtype.bits > self.max_num_bits:
                raise VkdiffValueError(f'BitpackedFields(max_num_bits={self.max_num_bits}): '
                                       f'placing {f.name} needs {self.used + f.qtype.bits} bits')
            f._bitpack, f._shift = self, self.used
            self.used += f.qtype.bits
            self.fields.append(f)

    @property
    def _members(self):  # (lang/snode.py's _member_fields: what this stores into)
        return {'word': self.word}

    @property
    def word(self):
        """The i32 field holding every member's bits."""
        if self._word is None:
            if self.max_num_bits > 32:
                raise UnsupportedError('BitpackedFields(max_num_bits=64): vkdiff stores bit-packed '
                                       'fields in 32-bit words (max_num_bits <= 32)')
            names = '_'.join(f.name for f in self.fields)
            self._word = Field(T.i32, None, (), name=f'bitpack_{names}')
        return self._word

    def _place(self, shape):
        if not self.fields:
            raise VkdiffValueError('BitpackedFields: place its members first (bitpack.place(x))')
        self.word._place(shape)
        for f in self.fields:
            f._shape = self.word._shape
            f._member_of = self.word  # its cells are the word's (sparse guards: lang/sparse.py)


@hooks.provides('make_quant_field')  # (lang/field.py's ti.field: the data floor below)
def make_quant_field(qtype, shape, needs_grad, needs_dual, name):
    """`ti.field(dtype=ti.types.quant.int(...))`: an unplaced member for a BitpackedFields."""
    if needs_grad or needs_dual:
        raise UnsupportedError('quantized fields have no gradients (Taichi does not differentiate '
                               'quantized types): needs_grad/needs_dual must be False')
    if shape is not None:
        raise UnsupportedError('a quantized field is stored in a BitpackedFields: declare it '
                               'without shape and place it with bitpack.place(x); '
                               'ti.root.dense(...).place(bitpack)')
    return QuantField(qtype, name)


class QuantField(Field):
    """A member of a BitpackedFields: its values live in the bitpack's word field (its own
    buffer is never bound: frontend/quant_access.py reads and writes the word)."""

    _qarray = None  # (axis, n) of a quant_array's member (QuantArray)
    _qarray_keeps_axis = True  # whether the word field is indexed along that axis too

    def __init__(self, qtype, name=None):
        super().__init__(qtype.compute, None, (), name)
        self.qtype = qtype
        self._bitpack = None
        self._shift = 0

    def _place(self, shape):
        raise UnsupportedError(f'field {self.name} has a quantized type: place it in a '
                               'ti.BitpackedFields (bitpack.place(x); node.place(bitpack)); '
                               'vkdiff has no quant_array')

    def _add_grad(self, kind='grad'):
        raise UnsupportedError('quantized fields have no gradients (Taichi does not '
                               'differentiate quantized types)')

    def _unplaced(self, kind):
        return None

    def _word(self):
        if self._bitpack is None or self._bitpack._word is None or self._shape is None:
            raise UnsupportedError(f'field {self.name} is not placed: bitpack.place(x), then '
                                   'node.place(bitpack)')
        return self._bitpack.word

    def _extract(self, words, shift=None):
        shift = self._shift if shift is None else shift
        raw = np.asarray(words).astype(np.int64).astype(np.uint64)
        return self.qtype.decode(raw >> np.uint64(shift))

    def _merge(self, words, values, shift=None):
        """The words with this member's bits replaced by the encoded values (as int32)."""
        shift = self._shift if shift is None else shift
        w = np.asarray(words).astype(np.int64).astype(np.uint64) & np.uint64(0xFFFFFFFF)
        mask = np.uint64(((1 << self.qtype.bits) - 1) << shift)
        bits = (self.qtype.encode(values) << np.uint64(shift)) & mask
        out = (w & (~mask & np.uint64(0xFFFFFFFF))) | bits
        return np.asarray(out).astype(np.uint32).view(np.int32)

    def _locate(self, key):
        """(the word's key, this element's lowest bit) of element `key`."""
        if self._qarray is None:
            return key, self._shift
        key = tuple(key) if isinstance(key, (tuple, list)) else (key,)
        if len(key) != len(self.shape):
            raise VkdiffValueError(f'{self.name}[...] takes {len(self.shape)} indices')
        k, n = self._qarray
        for i, s in zip(key, self.shape):
            if not 0 <= i < s:
                raise IndexError(f'{self.name}[{key}] is outside its shape {self.shape}')
        idx = list(key)
        bit = (idx[k] % n) * self.qtype.bits
        if self._qarray_keeps_axis:
            idx[k] //= n
        else:
            del idx[k]
        return tuple(idx) if idx else None, bit

    def __getitem__(self, key):
        wkey, bit = self._locate(key)
        return self._extract(self._word()[wkey], bit).item()

    def __setitem__(self, key, value):
        word = self._word()
        wkey, bit = self._locate(key)
        word[wkey] = self._merge(word[wkey], value, bit).item()

    def to_numpy(self, dtype=None, keep_dims=False):
        words = self._word().to_numpy()
        if self._qarray is None:
            a = self._extract(words)
        else:
            k, n = self._qarray
            parts = [self._extract(words, j * self.qtype.bits) for j in range(n)]
            if self._qarray_keeps_axis:  # element i*n + j of axis k is bit group j of word i
                a = np.stack(parts, axis=k + 1).reshape(self.shape)
            else:
                a = np.stack(parts, axis=k)
        return a.astype(dtype) if dtype is not None else a

    def from_numpy(self, arr):
        word = self._word()
        a = as_numpy(arr, f'from_numpy into {self.name}')
        if tuple(np.shape(a)) != self.shape:
            raise VkdiffValueError(f'from_numpy: field {self.name} has shape {self.shape}, '
                                   f'got {tuple(np.shape(a))}')
        words = word.to_numpy()
        if self._qarray is None:
            word.from_numpy(self._merge(words, a))
            return
        k, n = self._qarray
        a = np.asarray(a)
        if self._qarray_keeps_axis:
            a = a.reshape(self.shape[:k] + (self.shape[k] // n, n) + self.shape[k + 1:])
            take = lambda j: np.take(a, j, axis=k + 1)  # noqa: E731
        else:
            take = lambda j: np.take(a, j, axis=k)  # noqa: E731
        for j in range(n):
            words = self._merge(words, take(j), j * self.qtype.bits)
        word.from_numpy(words)

    def fill(self, value):
        if current() is not None:  # in a kernel: stores through frontend/quant_access.py
            return super().fill(value)
        self.from_numpy(np.full(self.shape, value))

    def __repr__(self):
        return f'<quantized field {self.name}: {self.qtype}>'


class QuantArray:
    """Taichi's `node.quant_array(axis, n, max_num_bits=32)` (also the older
    `bit_array(axis, n, num_bits=32)`): `.place(x)` stores n consecutive elements of x along
    `axis` in one word of the parent's cells (32 quant.int(1) flags in 4 bytes)."""

    def __init__(self, parent, axis, n, max_num_bits):
        if not isinstance(n, _int) or n < 1:
            raise VkdiffValueError(f'quant_array: dimensions must be a positive int, got {n!r}')
        if max_num_bits not in (8, 16, 32):
            raise UnsupportedError(f'quant_array(max_num_bits={max_num_bits}) is not supported: '
                                   'vkdiff stores quant arrays in 32-bit words (8, 16 or 32)')
        if any(node._kind in ('pointer', 'bitmasked', 'dynamic') for node in _path(parent)):
            raise UnsupportedError('quant_array under a sparse SNode is not supported: vkdiff '
                                   'places quant arrays under dense nodes only')
        self.parent, self.k, self.n, self.max_num_bits = parent, axis.k, n, max_num_bits
        self.fields, self._word = [], None

    @property
    def word(self):
        return self._word

    def place(self, *fields):
        if len(fields) != 1 or not isinstance(fields[0], QuantField):
            raise VkdiffTypeError('quant_array(...).place takes one field of a quantized type')
        f = fields[0]
        if isinstance(f.qtype, QuantFloatType) or f._bitpack is not None:
            raise UnsupportedError(f'quant_array: field {f.name} must be a quant.int or '
                                   'quant.fixed field not placed elsewhere')
        if f.qtype.bits * self.n > self.max_num_bits:
            raise VkdiffValueError(f'quant_array: {self.n} x {f.qtype.bits} bits is more than '
                                   f'max_num_bits={self.max_num_bits}')
        self._word = Field(T.i32, None, (), name=f'quant_array_{f.name}')
        self.parent.place(self._word)
        axes = sorted({ax for ax, _ in self.parent.levels})
        sizes = dict.fromkeys(axes, 1)
        for ax, m in self.parent.levels:
            sizes[ax] *= m
        keeps = self.k in sizes
        sizes[self.k] = sizes.get(self.k, 1) * self.n
        f._bitpack, f._shift, f._qarray = self, 0, (sorted(sizes).index(self.k), self.n)
        f._qarray_keeps_axis = keeps
        f._shape = tuple(sizes[ax] for ax in sorted(sizes))
        f._member_of = self._word
        self.fields.append(f)
        return self


def _path(node):
    out = []
    while node is not None:
        out.append(node)
        node = getattr(node, '_parent', None)
    return out


@hooks.provides('quant_array')  # (lang/snode.py's SNode.quant_array: this floor, no import)
def quant_array(parent, axis, dimensions=None, max_num_bits=32, num_bits=None):
    return QuantArray(parent, axis, dimensions, num_bits or max_num_bits)
