"""Codegen: atomic read-modify-write on field elements. Integer atomics are native; float add and
min/max use the device's float atomics when enabled (VK_EXT_shader_atomic_float/_float2) and a
compare-exchange loop on the integer view of the buffer otherwise."""
from .. import types as T
from ..errors import CompileError, located

SCOPE_DEVICE = 1
SEM_RELAXED = 0


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
        if s.op == 'atomic' and s.field.dtype.is_float and not s.field.dtype.is_narrow and \
                not native_float_atomic(
                features, s.field.dtype, s.attrs['fn']):
            if s.field.dtype.bits == 64 and not features.get('int64_atomics'):
                raise located(CompileError, 'atomic on an f64 field needs 64-bit float or integer '
                              'atomics, which this device lacks', s.loc)
            out.add(s.field)
    return out


def gen_atomic(cg, s):
    f, fn, dt = s.field, s.attrs['fn'], s.field.dtype
    if dt.is_narrow:
        from .narrow import atomic
        return atomic(cg, s)
    m = cg.m
    ptr = cg.element_ptr(s)
    val = cg.values[s.value_arg]
    scope, sem = m.u32(SCOPE_DEVICE), m.u32(SEM_RELAXED)
    t = cg.t(dt)
    if not dt.is_float:
        if fn == 'mul':  # no native integer multiply atomic
            return _cas_loop(cg, ptr, fn, dt, val)
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
    if not dt.is_float:
        return _int_cas_loop(cg, ptr, fn, dt, val)
    it = T.u64 if dt.bits == 64 else T.u32
    if dt.bits == 64:
        m.capability('Int64Atomics')
    ti, tf = cg.t(it), cg.t(dt)
    oldv = cg.local_var(it, 'cas')
    cg.emit(f'OpStore {oldv} {cg.op("OpLoad", ti, ptr)}')
    header, cont, merge = cg.open_loop('cas')
    old = cg.op('OpLoad', ti, oldv)
    oldf = cg.op('OpBitcast', tf, old)
    if fn == 'add':
        newf = cg.op('OpFAdd', tf, oldf, val)
    elif fn == 'sub':
        newf = cg.op('OpFSub', tf, oldf, val)
    elif fn == 'mul':
        newf = cg.op('OpFMul', tf, oldf, val)
    elif fn in ('min', 'max'):
        newf = cg.glsl('FMin' if fn == 'min' else 'FMax', dt, oldf, val)
    else:
        raise CompileError(f'atomic {fn} on a float field')
    new = cg.op('OpBitcast', ti, newf)
    scope, sem = m.u32(SCOPE_DEVICE), m.u32(SEM_RELAXED)
    seen = cg.op('OpAtomicCompareExchange', ti, ptr, scope, sem, sem, new, old)
    cg.emit(f'OpStore {oldv} {seen}')
    done = cg.op('OpIEqual', m.bool(), seen, old)
    cg.emit(f'OpBranchConditional {done} {merge} {cont}')
    cg.terminated = True
    cg.label(cont)
    cg.emit(f'OpBranch {header}')
    cg.terminated = True
    cg.label(merge)
    return cg.op('OpBitcast', tf, cg.op('OpLoad', ti, oldv))


def _int_cas_loop(cg, ptr, fn, dt, val):
    """`ti.atomic_mul` on an integer element: a compare-exchange loop on the element itself."""
    m = cg.m
    if fn != 'mul':
        raise CompileError(f'atomic {fn} needs no compare-exchange loop on integers')
    if dt.bits == 64:
        m.capability('Int64Atomics')
    t = cg.t(dt)
    oldv = cg.local_var(dt, 'cas')
    cg.emit(f'OpStore {oldv} {cg.op("OpLoad", t, ptr)}')
    header, cont, merge = cg.open_loop('cas')
    old = cg.op('OpLoad', t, oldv)
    new = cg.op('OpIMul', t, old, val)
    scope, sem = m.u32(SCOPE_DEVICE), m.u32(SEM_RELAXED)
    seen = cg.op('OpAtomicCompareExchange', t, ptr, scope, sem, sem, new, old)
    cg.emit(f'OpStore {oldv} {seen}')
    done = cg.op('OpIEqual', m.bool(), seen, old)
    cg.emit(f'OpBranchConditional {done} {merge} {cont}')
    cg.terminated = True
    cg.label(cont)
    cg.emit(f'OpBranch {header}')
    cg.terminated = True
    cg.label(merge)
    return cg.op('OpLoad', t, oldv)
