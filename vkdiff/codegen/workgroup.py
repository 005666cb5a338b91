"""Codegen: workgroup-level pieces — built-in invocation ids and the workgroup sum used by
reductions (subgroup arithmetic where enabled, a shared-memory tree otherwise)."""
from .. import types as T


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
    The workgroup sums of one batch (passes.reduction marks them `batch`: consecutive statements
    whose operands are all computed before the first) are made together and share their
    barriers; the first statement of a batch computes the values of all."""
    if s in cg.values:
        return cg.values[s]
    batch = s.attrs.get('batch')
    members = [s] if batch is None else [
        x for x in s.parent.stmts if x.op == 'wg_sum' and x.attrs.get('batch') == batch]
    per = max(1, SHARED_BYTES // (s.dtype.nbytes * cg.local_size))
    size = min(per, len(members)) * cg.local_size  # one array for all chunks of the batch
    for i in range(0, len(members), per):
        chunk = members[i:i + per]
        vals = [cg.values[x.args[0]] for x in chunk]
        if cg.features.get('subgroup_arithmetic') and cg.features.get('subgroup_basic'):
            totals = _sums_subgroups(cg, s.dtype, vals, size)
        else:
            totals = _sums_tree(cg, s.dtype, vals, size)
        for x, t in zip(chunk, totals):
            cg.values[x] = t
    return cg.values[s]


# shared memory of one batch of workgroup sums (entries x cg.local_size): a quarter of lavapipe's
# 32 KiB, half of the 16 KiB every Vulkan device has
SHARED_BYTES = 8192


def _barrier(cg):
    m = cg.m
    cg.emit(f'OpControlBarrier {m.u32(2)} {m.u32(2)} {m.u32(0x108)}')


def _if(cg, cond, hint):
    """Open `if cond` (structured); returns the merge label to close it with cg.branch/label."""
    then, end = cg.m.new(hint), cg.m.new(hint + 'm')
    cg.emit(f'OpSelectionMerge {end} None')
    cg.emit(f'OpBranchConditional {cond} {then} {end}')
    cg.terminated = True
    cg.label(then)
    return end


def _close(cg, end):
    cg.branch(end)
    cg.label(end)


def _sums_tree(cg, dt, vals, size):
    """A shared-memory tree: every invocation stores its values, then halving steps (one
    barrier each) add the upper half into the lower; the same adds in the same order as one sum
    at a time."""
    m = cg.m
    t, i32 = cg.t(dt), cg.t(T.i32)
    sh = _shared_array(m, t, size)
    pw = m.pointer('Workgroup', t)
    lid = cg.op('OpBitcast', i32, builtin_x(cg, 'LocalInvocationId'))
    add = 'OpFAdd' if dt.is_float else 'OpIAdd'

    def slot(k, i):
        return cg.op('OpAccessChain', pw, sh, cg.op('OpIAdd', i32, i, m.i32(k * cg.local_size)))
    for k, v in enumerate(vals):
        cg.emit(f'OpStore {slot(k, lid)} {v}')
    _barrier(cg)
    half = cg.local_size // 2
    while half >= 1:
        end = _if(cg, cg.op('OpSLessThan', m.bool(), lid, m.i32(half)), 'red')
        upper = cg.op('OpIAdd', i32, lid, m.i32(half))
        for k in range(len(vals)):
            pa, pb = slot(k, lid), slot(k, upper)
            cg.emit(f'OpStore {pa} {cg.op(add, t, cg.op("OpLoad", t, pa), cg.op("OpLoad", t, pb))}')
        _close(cg, end)
        _barrier(cg)
        half //= 2
    totals = [cg.op('OpLoad', t, slot(k, m.i32(0))) for k in range(len(vals))]
    _barrier(cg)  # the next batch of this size reuses the array
    return totals


def _sums_subgroups(cg, dt, vals, size):
    """A subgroup reduce of each value, one shared slot per (value, subgroup), one barrier, and
    invocation 0 adds each value's slots in subgroup order."""
    m = cg.m
    t, i32 = cg.t(dt), cg.t(T.i32)
    m.capability('GroupNonUniform')
    m.capability('GroupNonUniformArithmetic')
    scope = m.u32(3)  # Subgroup
    fadd = 'OpGroupNonUniformFAdd' if dt.is_float else 'OpGroupNonUniformIAdd'
    parts = [cg.op(fadd, t, scope, 'Reduce', v) for v in vals]
    sh = _shared_array(m, t, size)
    pw = m.pointer('Workgroup', t)
    sgid = cg.op('OpBitcast', i32, builtin_scalar(cg, 'SubgroupId'))
    nsg = cg.op('OpBitcast', i32, builtin_scalar(cg, 'NumSubgroups'))

    def slot(k, j):
        return cg.op('OpAccessChain', pw, sh, cg.op('OpIAdd', i32, j, m.i32(k * cg.local_size)))
    end = _if(cg, cg.op('OpGroupNonUniformElect', m.bool(), scope), 'sgw')
    for k, p in enumerate(parts):
        cg.emit(f'OpStore {slot(k, sgid)} {p}')
    _close(cg, end)
    _barrier(cg)
    # invocation 0 adds the per-subgroup sums in order
    accs = [cg.local_var(dt, 'wgacc') for _ in vals]
    # f32 (a device without f64: passes/reduction): Neumaier-compensated, as the per-thread sums
    lost = [cg.local_var(dt, 'wglost') for _ in vals] if dt is T.f32 else []
    for acc in accs + lost:
        cg.emit(f'OpStore {acc} {m.const(dt, 0)}')
    kvar = cg.local_var(T.i32, 'wgk')
    cg.emit(f'OpStore {kvar} {m.i32(0)}')
    lid = cg.op('OpBitcast', i32, builtin_x(cg, 'LocalInvocationId'))
    done = _if(cg, cg.op('OpIEqual', m.bool(), lid, m.i32(0)), 'wg0')
    body = m.new('wgb')
    header, cont, merge = cg.open_loop('wg')
    j = cg.op('OpLoad', i32, kvar)
    cg.emit(f'OpBranchConditional {cg.op("OpSLessThan", m.bool(), j, nsg)} {body} {merge}')
    cg.terminated = True
    cg.label(body)
    add = 'OpFAdd' if dt.is_float else 'OpIAdd'
    for k, acc in enumerate(accs):
        v = cg.op('OpLoad', t, slot(k, j))
        a = cg.op('OpLoad', t, acc)
        total = cg.op(add, t, a, v)
        if lost:  # lost += the rounding error of a + v: (a - total) + v if |a| >= |v|, else
            # (v - total) + a (both exact)
            big = cg.op('OpFOrdGreaterThanEqual', m.bool(), cg.glsl('FAbs', dt, a),
                        cg.glsl('FAbs', dt, v))
            err = cg.op('OpSelect', t, big,
                        cg.op('OpFAdd', t, cg.op('OpFSub', t, a, total), v),
                        cg.op('OpFAdd', t, cg.op('OpFSub', t, v, total), a))
            cg.emit(f'OpStore {lost[k]} {cg.op("OpFAdd", t, cg.op("OpLoad", t, lost[k]), err)}')
        cg.emit(f'OpStore {acc} {total}')
    cg.branch(cont)
    cg.label(cont)
    cg.emit(f'OpStore {kvar} {cg.op("OpIAdd", i32, cg.op("OpLoad", i32, kvar), m.i32(1))}')
    cg.emit(f'OpBranch {header}')
    cg.terminated = True
    cg.label(merge)
    _close(cg, done)
    # the next batch of this size reuses the array: no subgroup may write its slots before
    # invocation 0 has read them all
    _barrier(cg)
    if lost:
        return [cg.op('OpFAdd', t, cg.op('OpLoad', t, acc), cg.op('OpLoad', t, e))
                for acc, e in zip(accs, lost)]
    return [cg.op('OpLoad', t, acc) for acc in accs]


def _shared_array(m, t, n):
    """One shared array per element type and size for all the workgroup sums of a shader (each
    batch ends with a barrier): a task with many contended accumulators (the tangent of an
    adjoint has dozens) would otherwise exceed maxComputeSharedMemorySize and crash."""
    arr = m.array(t, n)
    return m._cached(('wg_sum_shared', t, n), lambda: m._global(
        'shared', f'OpVariable {m.pointer("Workgroup", arr)} Workgroup'))
