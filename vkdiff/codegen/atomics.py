"""Codegen: atomic read-modify-write on field elements. Integer atomics are native; float add and
min/max use the device's float atomics when enabled (VK_EXT_shader_atomic_float/_float2) and a
compare-exchange loop on the integer view of the buffer otherwise."""
from .. import types as T
from ..errors import CompileError, located
from . import narrow

SCOPE_DEVICE, SEM_RELAXED = narrow.SCOPE_DEVICE, narrow.SEM_RELAXED


def native_float_atomic(features, dtype, fn):
    if fn in ('add', 'sub'):
        return features.get(f'float{dtype.bits}_atomic_add', False)
    if fn in ('min', 'max'):
        return dtype.bits == 32 and features.get('float32_atomic_minmax', False)
    return False


def fields_needing_int_view(tasks_stmts, features):
    """Float fields with an atomic the device cannot do natively."""
    out = set()
    for s in tasks_stmts:
        if s.op == 'atomic' and s.buf.dtype.is_float and not s.buf.dtype.is_narrow and \
                not native_float_atomic(
                features, s.buf.dtype, s.attrs['fn']):
            if s.buf.dtype.bits == 64 and not features.get('int64_atomics'):
                raise located(CompileError, 'atomic on an f64 field needs 64-bit float or integer '
                              'atomics, which this device lacks', s.loc)
            out.add(s.buf)
    return out


def gen_atomic(cg, s):
    f, fn, dt = s.buf, s.attrs['fn'], s.buf.dtype
    if dt.is_narrow:
        return narrow.atomic(cg, s)
    m = cg.m
    ptr = cg.element_ptr(s)
    val = cg.values[s.value_arg]
    scope, sem = m.u32(SCOPE_DEVICE), m.u32(SEM_RELAXED)
    t = cg.t(dt)
    if not dt.is_float:
        if fn == 'mul':  # no native integer multiply atomic
            return _cas_loop(cg, ptr, fn, dt, val)
        if fn == 'cas':  # store val if the word is attrs['expect']; the old word (i32 only)
            return cg.op('OpAtomicCompareExchange', t, ptr, scope, sem, sem, val,
                         m.i32(s.attrs['expect']))
        if fn == 'xchg':  # store val; the old word
            return cg.op('OpAtomicExchange', t, ptr, scope, sem, val)
        if fn in ('min', 'max'):
            name = ('OpAtomicS' if dt.is_signed else 'OpAtomicU') + ('Min' if fn == 'min' else 'Max')
        else:
            name = {'add': 'OpAtomicIAdd', 'sub': 'OpAtomicISub', 'band': 'OpAtomicAnd',
                    'bor': 'OpAtomicOr', 'bxor': 'OpAtomicXor'}[fn]
        if dt.bits == 64:
            m.capability('Int64Atomics')
        return cg.op(name, t, ptr, scope, sem, val)
    if f not in cg.int_view:
        if fn in ('add', 'sub'):
            m.capability(f'AtomicFloat{dt.bits}AddEXT')
            m.extension('SPV_EXT_shader_atomic_float_add')
            if fn == 'sub':
                val = cg.op('OpFNegate', t, val)
            return cg.op('OpAtomicFAddEXT', t, ptr, scope, sem, val)
        m.capability(f'AtomicFloat{dt.bits}MinMaxEXT')
        m.extension('SPV_EXT_shader_atomic_float_min_max')
        return cg.op('OpAtomicFMinEXT' if fn == 'min' else 'OpAtomicFMaxEXT', t, ptr, scope, sem, val)
    return _cas_loop(cg, ptr, fn, dt, val)


def _cas_loop(cg, ptr, fn, dt, val):
    """old = *p; do { new = old OP val; seen = CAS(p, old, new) } while (seen != old).
    Float fields are read through their integer view; integer ones (only for `mul`) directly."""
    m = cg.m
    if dt.is_float:
        it = T.u64 if dt.bits == 64 else T.u32
        tf = cg.t(dt)
        if fn not in ('add', 'sub', 'mul', 'min', 'max'):
            raise CompileError(f'atomic {fn} on a float field')

        def step(old):
            oldf = cg.op('OpBitcast', tf, old)
            if fn in ('min', 'max'):
                newf = cg.glsl('FMin' if fn == 'min' else 'FMax', dt, oldf, val)
            else:
                newf = cg.op({'add': 'OpFAdd', 'sub': 'OpFSub', 'mul': 'OpFMul'}[fn], tf, oldf, val)
            return cg.op('OpBitcast', ti, newf)
    else:
        if fn != 'mul':
            raise CompileError(f'atomic {fn} needs no compare-exchange loop on integers')
        it = dt

        def step(old):
            return cg.op('OpIMul', ti, old, val)
    if it.bits == 64:
        m.capability('Int64Atomics')
    ti = cg.t(it)  # (step's)
    result = narrow.cas_loop(cg, it, ptr, step)
    return cg.op('OpBitcast', tf, result) if dt.is_float else result
