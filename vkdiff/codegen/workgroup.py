"""Codegen: workgroup-level pieces — built-in invocation ids and the workgroup sum used by
reductions (subgroup arithmetic where enabled, a shared-memory tree otherwise)."""
from .. import types as T
from .module import LOCAL_SIZE


def builtin_x(cg, name):
    m = cg.m
    u32 = m.scalar(T.u32)
    v3 = m.vector(u32, 3)
    var = m._cached(('builtin', name), lambda: _builtin_var(cg, name, v3))
    return cg.op('OpCompositeExtract', u32, cg.op('OpLoad', v3, var), '0')


def _builtin_var(cg, name, v3):
    var = cg.m._global('bi', f'OpVariable {cg.m.pointer("Input", v3)} Input')
    cg.m.decorations.append(f'OpDecorate {var} BuiltIn {name}')
    cg.interface.append(var)
    return var


def builtin_scalar(cg, name):
    m = cg.m
    u32 = m.scalar(T.u32)

    def make():
        var = m._global('bi', f'OpVariable {m.pointer("Input", u32)} Input')
        m.decorations.append(f'OpDecorate {var} BuiltIn {name}')
        cg.interface.append(var)
        return var
    return cg.op('OpLoad', u32, m._cached(('builtin', name), make))


def gen_wg_sum(cg, s):
    """Sum of a value over the workgroup, valid in invocation 0 (in uniform control flow).
    With subgroup arithmetic: a subgroup reduce, one shared slot per subgroup, one barrier,
    and invocation 0 adds the slots; otherwise a shared-memory tree."""
    if cg.features.get('subgroup_arithmetic') and cg.features.get('subgroup_basic'):
        return gen_wg_sum_subgroups(cg, s)
    m, dt = cg.m, s.dtype
    t = cg.t(dt)
    sh = _shared_array(m, t)
    pw = m.pointer('Workgroup', t)
    lid = cg.op('OpBitcast', cg.t(T.i32), builtin_x(cg, 'LocalInvocationId'))
    add = 'OpFAdd' if dt.is_float else 'OpIAdd'

    def barrier():
        cg.emit(f'OpControlBarrier {m.u32(2)} {m.u32(2)} {m.u32(0x108)}')
    cg.emit(f'OpStore {cg.op("OpAccessChain", pw, sh, lid)} {cg.values[s.args[0]]}')
    barrier()
    half = LOCAL_SIZE // 2
    while half >= 1:
        cond = cg.op('OpSLessThan', m.bool(), lid, m.i32(half))
        then, end = m.new('red'), m.new('redm')
        cg.emit(f'OpSelectionMerge {end} None')
        cg.emit(f'OpBranchConditional {cond} {then} {end}')
        cg.terminated = True
        cg.label(then)
        pa = cg.op('OpAccessChain', pw, sh, lid)
        pb = cg.op('OpAccessChain', pw, sh, cg.op('OpIAdd', cg.t(T.i32), lid, m.i32(half)))
        cg.emit(f'OpStore {pa} {cg.op(add, t, cg.op("OpLoad", t, pa), cg.op("OpLoad", t, pb))}')
        cg.branch(end)
        cg.label(end)
        barrier()
        half //= 2
    total = cg.op('OpLoad', t, cg.op('OpAccessChain', pw, sh, m.i32(0)))
    barrier()  # the next workgroup sum of this type reuses the array
    return total


def gen_wg_sum_subgroups(cg, s):
    m, dt = cg.m, s.dtype
    t, i32 = cg.t(dt), cg.t(T.i32)
    m.capability('GroupNonUniform')
    m.capability('GroupNonUniformArithmetic')
    scope = m.u32(3)  # Subgroup
    part = cg.op('OpGroupNonUniformFAdd' if dt.is_float else 'OpGroupNonUniformIAdd', t,
                   scope, 'Reduce', cg.values[s.args[0]])
    sh = _shared_array(m, t)
    pw = m.pointer('Workgroup', t)
    sgid = builtin_scalar(cg, 'SubgroupId')
    nsg = cg.op('OpBitcast', i32, builtin_scalar(cg, 'NumSubgroups'))
    elect = cg.op('OpGroupNonUniformElect', m.bool(), scope)
    then, end = m.new('sgw'), m.new('sgwm')
    cg.emit(f'OpSelectionMerge {end} None')
    cg.emit(f'OpBranchConditional {elect} {then} {end}')
    cg.terminated = True
    cg.label(then)
    cg.emit(f'OpStore {cg.op("OpAccessChain", pw, sh, sgid)} {part}')
    cg.branch(end)
    cg.label(end)
    cg.emit(f'OpControlBarrier {m.u32(2)} {m.u32(2)} {m.u32(0x108)}')
    # invocation 0 adds the per-subgroup sums in order
    acc, k = cg.local_var(dt, 'wgacc'), cg.local_var(T.i32, 'wgk')
    cg.emit(f'OpStore {acc} {m.const(dt, 0)}')
    cg.emit(f'OpStore {k} {m.i32(0)}')
    lid = cg.op('OpBitcast', i32, builtin_x(cg, 'LocalInvocationId'))
    is0 = cg.op('OpIEqual', m.bool(), lid, m.i32(0))
    first, done = m.new('wg0'), m.new('wg0m')
    cg.emit(f'OpSelectionMerge {done} None')
    cg.emit(f'OpBranchConditional {is0} {first} {done}')
    cg.terminated = True
    cg.label(first)
    body = m.new('wgb')
    header, cont, merge = cg.open_loop('wg')
    kv = cg.op('OpLoad', i32, k)
    cg.emit(f'OpBranchConditional {cg.op("OpSLessThan", m.bool(), kv, nsg)} {body} {merge}')
    cg.terminated = True
    cg.label(body)
    v = cg.op('OpLoad', t, cg.op('OpAccessChain', pw, sh, kv))
    add = 'OpFAdd' if dt.is_float else 'OpIAdd'
    cg.emit(f'OpStore {acc} {cg.op(add, t, cg.op("OpLoad", t, acc), v)}')
    cg.branch(cont)
    cg.label(cont)
    cg.emit(f'OpStore {k} {cg.op("OpIAdd", i32, cg.op("OpLoad", i32, k), m.i32(1))}')
    cg.emit(f'OpBranch {header}')
    cg.terminated = True
    cg.label(merge)
    cg.branch(done)
    cg.label(done)
    # the next workgroup sum of this type reuses the array: no subgroup may write its slot
    # before invocation 0 has read them all
    cg.emit(f'OpControlBarrier {m.u32(2)} {m.u32(2)} {m.u32(0x108)}')
    return cg.op('OpLoad', t, acc)


def _shared_array(m, t):
    """One shared array per element type for all the workgroup sums of a shader (each sum ends
    with a barrier): a task with many contended accumulators (the tangent of an adjoint has
    dozens) would otherwise exceed maxComputeSharedMemorySize (32 KiB on lavapipe) and crash."""
    arr = m.array(t, LOCAL_SIZE)
    return m._cached(('wg_sum_shared', t), lambda: m._global(
        'shared', f'OpVariable {m.pointer("Workgroup", arr)} Workgroup'))
