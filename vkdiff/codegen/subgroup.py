"""Codegen: `ti.simt.subgroup` / `ti.simt.warp` operations as SPIR-V group non-uniform
instructions, acting on the active invocations of the subgroup:
  sg_reduce [v] | fn, scan ('Reduce', 'InclusiveScan', 'ExclusiveScan'): arithmetic over the lanes
  sg_elect, sg_invocation_id, sg_size: elect one lane, the lane's index, the subgroup size
  sg_shuffle [v, lane]: the value `v` of lane `lane` (OpGroupNonUniformShuffle)
  sg_broadcast_first [v]: `v` of the lowest active lane
  sg_ballot [pred] -> u32: the 32-bit word of the subgroup ballot that holds this lane's bit
      (lanes 0-31 of a subgroup read word 0, lanes 32-63 word 1, ...)
  sg_vote [pred] | fn ('all', 'any') -> u1;  sg_all_equal [v] -> u1
  sg_barrier: a subgroup control barrier, acquire-release on workgroup and storage memory
  device_fence: a device-scope memory barrier (ti.simt.grid.memfence())
  global_index -> i32: the invocation's global index (ti.simt.block.global_thread_idx())
The features each needs are checked where the ops are emitted (lang/simt/_common.py)."""
from .. import types as T
from .workgroup import builtin_scalar

SUBGROUP = 3
DEVICE = 1
_REDUCE = {'add': ('FAdd', 'IAdd', 'IAdd'), 'mul': ('FMul', 'IMul', 'IMul'),
           'min': ('FMin', 'SMin', 'UMin'), 'max': ('FMax', 'SMax', 'UMax'),
           'and': (None, 'BitwiseAnd', 'BitwiseAnd'), 'or': (None, 'BitwiseOr', 'BitwiseOr'),
           'xor': (None, 'BitwiseXor', 'BitwiseXor')}
OPS = ('sg_reduce', 'sg_elect', 'sg_invocation_id', 'sg_size', 'sg_shuffle',
       'sg_broadcast_first', 'sg_ballot', 'sg_vote', 'sg_all_equal', 'sg_barrier',
       'device_fence', 'global_index')
# AcquireRelease | UniformMemory (storage buffers) | WorkgroupMemory
_SEMANTICS = 0x8 | 0x40 | 0x100


def gen(cg, s):
    m = cg.m
    if s.op == 'device_fence':
        cg.emit(f'OpMemoryBarrier {m.u32(DEVICE)} {m.u32(0x8 | 0x40)}')
        return None
    if s.op == 'global_index':
        return cg.op('OpBitcast', cg.t(T.i32), cg.gid)
    m.capability('GroupNonUniform')
    scope = m.u32(SUBGROUP)
    if s.op == 'sg_barrier':
        cg.emit(f'OpControlBarrier {scope} {scope} {m.u32(_SEMANTICS)}')
        return None
    if s.op == 'sg_reduce':
        m.capability('GroupNonUniformArithmetic')
        dt = s.dtype
        name = _REDUCE[s.attrs['fn']][0 if dt.is_float else 1 if dt.is_signed else 2]
        return cg.op(f'OpGroupNonUniform{name}', cg.t(dt), scope, s.attrs.get('scan', 'Reduce'),
                     cg.values[s.args[0]])
    if s.op == 'sg_elect':
        return cg.op('OpGroupNonUniformElect', m.bool(), scope)
    if s.op == 'sg_shuffle':
        m.capability('GroupNonUniformShuffle')
        lane = cg.values[s.args[1]]
        if s.args[1].dtype is not T.u32:
            lane = cg.op('OpBitcast', cg.t(T.u32), lane)
        return cg.op('OpGroupNonUniformShuffle', cg.t(s.dtype), scope, cg.values[s.args[0]], lane)
    if s.op == 'sg_broadcast_first':
        m.capability('GroupNonUniformBallot')
        return cg.op('OpGroupNonUniformBroadcastFirst', cg.t(s.dtype), scope, cg.values[s.args[0]])
    if s.op == 'sg_ballot':
        m.capability('GroupNonUniformBallot')
        u32 = cg.t(T.u32)
        words = cg.op('OpGroupNonUniformBallot', m.vector(u32, 4), scope, cg.values[s.args[0]])
        lane = builtin_scalar(cg, 'SubgroupLocalInvocationId')
        word = cg.op('OpShiftRightLogical', u32, lane, m.u32(5))
        return cg.op('OpVectorExtractDynamic', u32, words, word)
    if s.op == 'sg_vote':
        m.capability('GroupNonUniformVote')
        name = {'all': 'OpGroupNonUniformAll', 'any': 'OpGroupNonUniformAny'}[s.attrs['fn']]
        return cg.op(name, m.bool(), scope, cg.values[s.args[0]])
    if s.op == 'sg_all_equal':
        m.capability('GroupNonUniformVote')
        return cg.op('OpGroupNonUniformAllEqual', m.bool(), scope, cg.values[s.args[0]])
    name = {'sg_invocation_id': 'SubgroupLocalInvocationId', 'sg_size': 'SubgroupSize'}[s.op]
    return cg.op('OpBitcast', cg.t(T.i32), builtin_scalar(cg, name))
