"""Codegen: 8/16-bit types (i8, u8, i16, u16, f16) without 8/16-bit device features. Values live
in 32-bit registers (module.scalar maps them to i32/u32/f32) and are brought back into range after
every operation that yields one (`narrow`: wrap integers, round f16 through PackHalf2x16,
with overflow made +-inf explicitly). Fields pack 4 or 2 elements into each 32-bit word of the
buffer (the host sees the plain numpy layout):
loads shift and extract; stores and read-modify-write atomics run a compare-exchange loop on the
word that replaces only the element's bits in one atomic step (so neighbours in the same word never
race, racing stores to one element leave one of the stored values, never a mix of their bits, and
readers never see a transient value). Without contention the first exchange succeeds."""
from .. import types as T

SCOPE_DEVICE, SEM_RELAXED = 1, 0


# The smallest f32 magnitude that rounds (to nearest even) to f16 infinity: halfway between 65504,
# the largest f16, and 65536.
_F16_OVERFLOW = 65520.0


def _half_bits(cg, v):
    """The f16 bit pattern of the f32 register v (low 16 bits of a u32, the rest zero), as numpy's
    astype(float16) rounds it. PackHalf2x16 gives it, except where the value overflows: SwiftShader
    packs |v| >= 65520 (infinities too) as a NaN, so those are made +-inf (sign | 0x7C00) here;
    and SwiftShader's pack of a NaN sets bits above the low 16 (0x0002_7FFF), which a store would
    OR into the neighbouring element of its word, so the result is masked to 16 bits."""
    m, u32, f32 = cg.m, cg.t(T.u32), cg.t(T.f32)
    packed = cg.op('OpExtInst', u32, m.glsl, 'PackHalf2x16',
                   cg.op('OpCompositeConstruct', m.vector(f32, 2), v, m.const(T.f32, 0.0)))
    packed = cg.op('OpBitwiseAnd', u32, packed, m.const(T.u32, 0xFFFF))
    over = cg.op('OpFOrdGreaterThanEqual', m.bool(), cg.glsl('FAbs', T.f32, v),
                 m.const(T.f32, _F16_OVERFLOW))
    sign = cg.op('OpBitwiseAnd', u32,
                 cg.op('OpShiftRightLogical', u32, cg.op('OpBitcast', u32, v), m.const(T.u32, 16)),
                 m.const(T.u32, 0x8000))
    inf = cg.op('OpBitwiseOr', u32, sign, m.const(T.u32, 0x7C00))
    return cg.op('OpSelect', u32, over, inf, packed)


def narrow(cg, dt, v):
    """A register value brought into the range / precision of the narrow type dt."""
    m = cg.m
    if dt.is_float:
        f32 = cg.t(T.f32)
        v2 = m.vector(f32, 2)
        return cg.op('OpCompositeExtract', f32,
                     cg.op('OpExtInst', v2, m.glsl, 'UnpackHalf2x16', _half_bits(cg, v)), '0')
    if dt.is_signed:
        i32, sh = cg.t(T.i32), m.i32(32 - dt.bits)
        return cg.op('OpShiftRightArithmetic', i32, cg.op('OpShiftLeftLogical', i32, v, sh), sh)
    return cg.op('OpBitwiseAnd', cg.t(T.u32), v, m.const(T.u32, (1 << dt.bits) - 1))


def _word_ptr(cg, s):
    """(pointer to the 32-bit word holding the element, bit offset of the element in it)."""
    f, m = s.buf, cg.m
    i32, u32 = cg.t(T.i32), cg.t(T.u32)
    idx = cg.element_index(s)
    per = 32 // f.dtype.bits
    word = cg.op('OpShiftRightArithmetic', i32, idx, m.i32(per.bit_length() - 1))
    lane = cg.op('OpBitcast', u32, cg.op('OpBitwiseAnd', i32, idx, m.i32(per - 1)))
    shift = cg.op('OpIMul', u32, lane, m.const(T.u32, f.dtype.bits))
    ptr = cg.op('OpAccessChain', m.pointer('StorageBuffer', u32), cg.buffers[f], m.i32(0), word)
    return ptr, shift


def _extract(cg, dt, word, shift):
    """The element at `shift` of a 32-bit word, as a register value."""
    m, u32 = cg.m, cg.t(T.u32)
    x = cg.op('OpShiftRightLogical', u32, word, shift)
    if dt.is_float:
        v2 = m.vector(cg.t(T.f32), 2)
        x = cg.op('OpBitwiseAnd', u32, x, m.const(T.u32, 0xFFFF))
        return cg.op('OpCompositeExtract', cg.t(T.f32),
                     cg.op('OpExtInst', v2, m.glsl, 'UnpackHalf2x16', x), '0')
    if dt.is_signed:
        return narrow(cg, dt, cg.op('OpBitcast', cg.t(T.i32), x))
    return narrow(cg, dt, x)


def _bits(cg, dt, v):
    """The element's bit pattern in the low bits of a u32 (the rest zero)."""
    m, u32 = cg.m, cg.t(T.u32)
    if dt.is_float:
        return _half_bits(cg, v)
    if dt.is_signed:
        v = cg.op('OpBitcast', u32, v)
    return cg.op('OpBitwiseAnd', u32, v, m.const(T.u32, (1 << dt.bits) - 1))


def load(cg, s):
    ptr, shift = _word_ptr(cg, s)
    return _extract(cg, s.buf.dtype, cg.op('OpLoad', cg.t(T.u32), ptr), shift)


def store(cg, s):
    m, u32, dt = cg.m, cg.t(T.u32), s.buf.dtype
    ptr, shift = _word_ptr(cg, s)
    mask = cg.op('OpShiftLeftLogical', u32, m.const(T.u32, (1 << dt.bits) - 1), shift)
    bits = cg.op('OpShiftLeftLogical', u32, _bits(cg, dt, cg.values[s.value_arg]), shift)
    keep = cg.op('OpNot', u32, mask)
    cas_loop(cg, T.u32, ptr,
             lambda old: cg.op('OpBitwiseOr', u32, cg.op('OpBitwiseAnd', u32, old, keep), bits))


def _apply(cg, fn, dt, a, b):
    t = cg.t(dt)
    if dt.is_float:
        if fn in ('min', 'max'):
            return cg.glsl('FMin' if fn == 'min' else 'FMax', T.f32, a, b)
        return cg.op({'add': 'OpFAdd', 'sub': 'OpFSub', 'mul': 'OpFMul'}[fn], t, a, b)
    if fn in ('min', 'max'):
        name = ('S' if dt.is_signed else 'U') + ('Min' if fn == 'min' else 'Max')
        return cg.glsl(name, dt.reg, a, b)
    return cg.op({'add': 'OpIAdd', 'sub': 'OpISub', 'mul': 'OpIMul', 'band': 'OpBitwiseAnd',
                  'bor': 'OpBitwiseOr', 'bxor': 'OpBitwiseXor'}[fn], t, a, b)


def atomic(cg, s):
    """old = element; element = narrow(old OP value), by compare-exchange on the word."""
    m, u32, dt, fn = cg.m, cg.t(T.u32), s.buf.dtype, s.attrs['fn']
    ptr, shift = _word_ptr(cg, s)
    val = cg.values[s.value_arg]
    mask = cg.op('OpShiftLeftLogical', u32, m.const(T.u32, (1 << dt.bits) - 1), shift)
    keep = cg.op('OpNot', u32, mask)

    def step(old):
        new_e = narrow(cg, dt, _apply(cg, fn, dt, _extract(cg, dt, old, shift), val))
        return cg.op('OpBitwiseOr', u32, cg.op('OpBitwiseAnd', u32, old, keep),
                     cg.op('OpShiftLeftLogical', u32, _bits(cg, dt, new_e), shift))
    return _extract(cg, dt, cas_loop(cg, T.u32, ptr, step), shift)


def cas_loop(cg, it, ptr, step):
    """A compare-exchange loop on the integer (type it) at ptr: old = *ptr; done = false;
    while (!done) { seen = CAS(ptr, expected old, new step(old)); done = seen == old;
    old = seen }. Returns the value the exchange replaced (atomics.py runs float atomics through
    it too). Lock-free: a lane retries only because another lane's exchange succeeded, and waits
    for no one.
    The loop leaves at its top, as a `while` does, not by a break after the exchange: SwiftShader
    gives the lanes that left such a loop before the others of their subgroup the wrong value
    (every lane but the last got 0 from a contended ti.atomic_mul; the stores were right)."""
    m, ti, bl = cg.m, cg.t(it), cg.m.bool()
    var, done = cg.local_var(it, 'cas'), cg.local_var(T.u1, 'casdone')
    cg.emit(f'OpStore {var} {cg.op("OpLoad", ti, ptr)}')
    cg.emit(f'OpStore {done} {m.const(T.u1, False)}')
    header, cont, merge = cg.open_loop('cas')
    body = m.new('casb')
    cg.emit(f'OpBranchConditional {cg.op("OpLoad", bl, done)} {merge} {body}')
    cg.terminated = True
    cg.label(body)
    old = cg.op('OpLoad', ti, var)
    new = step(old)
    scope, sem = m.u32(SCOPE_DEVICE), m.u32(SEM_RELAXED)
    seen = cg.op('OpAtomicCompareExchange', ti, ptr, scope, sem, sem, new, old)
    cg.emit(f'OpStore {var} {seen}')
    cg.emit(f'OpStore {done} {cg.op("OpIEqual", bl, seen, old)}')
    cg.branch(cont)
    cg.label(cont)
    cg.emit(f'OpBranch {header}')
    cg.terminated = True
    cg.label(merge)
    return cg.op('OpLoad', ti, var)
