"""Codegen: `ti.simt.subgroup` operations as SPIR-V group non-uniform instructions (reduce over the
active invocations of the subgroup, elect one, the invocation's index and the subgroup size)."""
from .. import types as T
from .workgroup import builtin_scalar

SUBGROUP = 3
_REDUCE = {'add': ('FAdd', 'IAdd', 'IAdd'), 'mul': ('FMul', 'IMul', 'IMul'),
           'min': ('FMin', 'SMin', 'UMin'), 'max': ('FMax', 'SMax', 'UMax'),
           'and': (None, 'BitwiseAnd', 'BitwiseAnd'), 'or': (None, 'BitwiseOr', 'BitwiseOr'),
           'xor': (None, 'BitwiseXor', 'BitwiseXor')}


def gen(cg, s):
    m = cg.m
    m.capability('GroupNonUniform')
    scope = m.u32(SUBGROUP)
    if s.op == 'sg_reduce':
        m.capability('GroupNonUniformArithmetic')
        dt = s.dtype
        name = _REDUCE[s.attrs['fn']][0 if dt.is_float else 1 if dt.is_signed else 2]
        return cg.op(f'OpGroupNonUniform{name}', cg.t(dt), scope, 'Reduce', cg.values[s.args[0]])
    if s.op == 'sg_elect':
        return cg.op('OpGroupNonUniformElect', m.bool(), scope)
    name = {'sg_invocation_id': 'SubgroupLocalInvocationId', 'sg_size': 'SubgroupSize'}[s.op]
    return cg.op('OpBitcast', cg.t(T.i32), builtin_scalar(cg, name))
