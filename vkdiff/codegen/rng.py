"""Codegen: `ti.random()` — a per-invocation PCG hash state seeded from (seed, launch id,
invocation id), advanced on every draw."""
from .. import types as T


def init_rng(cg):
    u32 = cg.t(T.u32)
    launch = cg.push_value(0)
    seed = cg.push_value(1)
    h = pcg(cg, cg.op('OpBitwiseXor', u32, seed, cg.m.u32(0x9E3779B9)))
    h = pcg(cg, cg.op('OpBitwiseXor', u32, launch, h))
    h = pcg(cg, cg.op('OpBitwiseXor', u32, cg.gid, h))
    cg.rng = cg.local_var(T.u32, 'rng')
    cg.emit(f'OpStore {cg.rng} {h}')


def pcg(cg, x):
    u32, m = cg.t(T.u32), cg.m
    state = cg.op('OpIAdd', u32, cg.op('OpIMul', u32, x, m.u32(747796405)), m.u32(2891336453))
    shift = cg.op('OpIAdd', u32, cg.op('OpShiftRightLogical', u32, state, m.u32(28)), m.u32(4))
    word = cg.op('OpIMul', u32, cg.op('OpBitwiseXor', u32,
                                          cg.op('OpShiftRightLogical', u32, state, shift), state),
                   m.u32(277803737))
    return cg.op('OpBitwiseXor', u32, cg.op('OpShiftRightLogical', u32, word, m.u32(22)), word)


def next_random_u32(cg):
    u32 = cg.t(T.u32)
    x = pcg(cg, cg.op('OpLoad', u32, cg.rng))
    cg.emit(f'OpStore {cg.rng} {x}')
    return x


def gen_random(cg, dt):
    m = cg.m
    if dt.is_float:
        if dt.bits == 32:
            bits = cg.op('OpShiftRightLogical', cg.t(T.u32), next_random_u32(cg), m.u32(8))
            f = cg.op('OpConvertUToF', cg.t(dt), bits)
            return cg.op('OpFMul', cg.t(dt), f, m.const(dt, 2.0 ** -24))
        hi = cg.op('OpShiftRightLogical', cg.t(T.u32), next_random_u32(cg), m.u32(11))
        lo = next_random_u32(cg)
        fhi = cg.op('OpConvertUToF', cg.t(dt), hi)
        flo = cg.op('OpConvertUToF', cg.t(dt), lo)
        f = cg.op('OpFAdd', cg.t(dt), cg.op('OpFMul', cg.t(dt), fhi, m.const(dt, 2.0 ** 32)), flo)
        return cg.op('OpFMul', cg.t(dt), f, m.const(dt, 2.0 ** -53))
    x = next_random_u32(cg)
    if dt.bits == 64:  # two draws: all 64 bits random
        u64 = cg.t(T.u64)
        hi = cg.op('OpShiftLeftLogical', u64, cg.op('OpUConvert', u64, next_random_u32(cg)),
                   m.u32(32))
        x = cg.op('OpBitwiseOr', u64, hi, cg.op('OpUConvert', u64, x))
        return x if dt.kind == 'u' else cg.op('OpBitcast', cg.t(dt), x)
    return x if dt.kind == 'u' else cg.op('OpBitcast', cg.t(dt), x)
