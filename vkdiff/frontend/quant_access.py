"""Frontend floor: kernel reads and writes of a BitpackedFields member (lang/quant.py). A read
loads the member's 32-bit word and extracts its bits (shift, sign-extend, scale); a write encodes
the value (truncate, or round half away from zero for quant.fixed, then wrap to the bits, as Taichi
1.7.4) and updates only its bits with an atomic `and` (clear) then an atomic `or` (set): no loop,
no spinning, and concurrent writes to sibling members of one word never lose each other."""
from .. import types as T
from . import ops
from .context import Value, current, emit


class _OwnCode:
    """The bit twiddling is the compiler's own code, not the user's: emitted without a source
    location, so ti.init(debug=True)'s overflow checks (passes/debug_checks.py) skip its shifts."""

    def __enter__(self):
        self.em = current()
        self.saved, self.em.loc = self.em.loc, None

    def __exit__(self, *exc):
        self.em.loc = self.saved


def packed(field):
    """Whether `field` is a member of a BitpackedFields."""
    return getattr(field, '_bitpack', None) is not None


def _signed32(x):
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >= 1 << 31 else x


def load(field, indices, elem):
    """field[I] of a member; `elem(field, indices)`: a field element lvalue (lvalues.FieldElem)."""
    with _OwnCode():
        word, shift = _word_at(field, indices, elem)
        return _load(field, word, shift)


def _word_at(field, indices, elem):
    """The lvalue of the word holding field[I], and the member's lowest bit in it."""
    qa = field._qarray
    if qa is None:
        return elem(field._bitpack.word, indices), field._shift
    k, n = qa  # a quant_array: n members along index k per word (lang/quant.QuantArray)
    idx = list(indices)
    ik = idx[k] if isinstance(idx[k], (Value, int)) else Value(idx[k])  # (an index stmt)
    shift = ops.binary('mul', ops.binary('mod', ik, n), field.qtype.bits)
    if field._qarray_keeps_axis:
        word_index = ops.binary('floordiv', ik, n)
        idx[k] = word_index.stmt if isinstance(word_index, Value) else \
            ops.as_value(word_index, T.i32).stmt
    else:
        del idx[k]
    return elem(field._bitpack.word, idx), shift


def _load(field, word, shift):
    q = field.qtype
    b = ops.binary
    w = word.load()
    is_float = hasattr(q, 'exp')
    if q.bits == 32:
        v = w
    elif q.signed and not is_float:
        v = b('shr', b('shl', w, b('sub', 32 - q.bits, shift)), 32 - q.bits)
    else:
        v = b('band', b('shr', w, shift), (1 << q.bits) - 1)
    if is_float:
        return _decode_float(q, v)
    if hasattr(q, 'scale'):  # quant.fixed: the integer times its scale
        return b('mul', ops.cast(v, q.compute), ops.as_value(q.scale, q.compute))
    return v if q.compute is T.i32 else ops.cast(v, q.compute)


def _bitcast(v, dtype):
    return Value(emit('bitcast', dtype, [v.stmt]))


def _decode_float(q, v):
    """quant.float's bits (lang/quant.QuantFloatType's layout) as an f32."""
    b = ops.binary
    m = q.mant_bits
    mant = b('band', v, (1 << m) - 1)
    e = b('band', b('shr', v, q.frac), (1 << q.exp) - 1)
    bits = b('bor', b('shl', b('add', e, 127 - q.bias), 23), b('shl', mant, 23 - m))
    if q.signed:
        bits = b('bor', bits, b('shl', b('band', b('shr', v, m), 1), 31))
    f = ops.select(b('eq', e, 0), ops.as_value(0.0, T.f32), _bitcast(bits, T.f32))
    return f if q.compute is T.f32 else ops.cast(f, q.compute)


def _encode_float(q, value):
    b = ops.binary
    m = q.mant_bits
    bits = _bitcast(ops.cast(value, T.f32), T.i32)
    mag = b('band', bits, 0x7FFFFFFF)
    if m < 23:  # (23 mantissa bits: the f32's own, nothing to round)
        mag = b('add', mag, 1 << (22 - m))
    e = b('sub', b('shr', mag, 23), 127 - q.bias)
    mant = b('band', b('shr', mag, 23 - m), (1 << m) - 1)
    zero = b('le', e, 0)
    code = b('bor', mant, b('shl', b('band', e, (1 << q.exp) - 1), q.frac))
    if q.signed:
        code = b('bor', code, b('shl', b('band', b('shr', bits, 31), 1), m))
    return ops.select(zero, ops.as_value(0, T.i32), code)


def _encode(q, value):
    """The value as the i32 integer whose low bits are stored."""
    if not isinstance(value, Value):
        value = ops.as_value(value)
    if hasattr(q, 'exp'):
        return _encode_float(q, value)
    if hasattr(q, 'scale'):
        s = ops.binary('mul', ops.cast(value, q.compute), ops.as_value(1.0 / q.scale, q.compute))
        half = ops.select(ops.binary('ge', s, ops.as_value(0.0, q.compute)),
                          ops.as_value(0.5, q.compute), ops.as_value(-0.5, q.compute))
        value = ops.binary('add', s, half)
    return ops.cast(value, T.i32)


def store(field, indices, elem, value):
    """field[I] = value; `elem` as in load."""
    if not isinstance(value, Value):
        value = ops.as_value(value)
    with _OwnCode():
        word, shift = _word_at(field, indices, elem)
        return _store(field, word, shift, value)


def _store(field, word, shift, value):
    q = field.qtype
    b = ops.binary
    e = _encode(q, value)
    if q.bits == 32 and len(field._bitpack.fields) == 1 and field._qarray is None:
        return word.store(e)  # the whole word: a plain store
    if isinstance(shift, Value):  # (a quant_array's member: its bit depends on the index)
        mask = b('shl', (1 << q.bits) - 1 if q.bits < 32 else -1, shift)
        clear = b('bxor', mask, -1)
    else:
        mask = _signed32(((1 << q.bits) - 1) << shift)
        clear = _signed32(~mask)
    bits = b('band', b('shl', e, shift), mask)
    word.atomic('band', clear)
    word.atomic('bor', bits)
