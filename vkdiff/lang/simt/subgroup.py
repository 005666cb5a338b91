"""Face floor: `ti.simt.subgroup`, Taichi 1.7.4's Vulkan subgroup operations in kernels
(`reduce_add(v)`, `inclusive_add(v)`, `elect()`, `shuffle(v, i)`, ...), compiled to SPIR-V group
non-uniform instructions (codegen/subgroup.py). They act on the active invocations of the
current subgroup, as GLSL's subgroup*() functions do; the device must offer the feature bit each
needs (basic, vote, arithmetic, ballot, shuffle), else a clear UnsupportedError."""
from ... import types as T
from ...frontend import ops as _ops
from ...frontend.context import Value, emit, error
from ._common import in_kernel, pred, require

_FNS = ('add', 'mul', 'min', 'max', 'and', 'or', 'xor')
_SCANS = {'reduce': 'Reduce', 'inclusive': 'InclusiveScan', 'exclusive': 'ExclusiveScan'}


def _arith(kind, fn):
    def f(value):
        in_kernel(f'ti.simt.subgroup.{kind}_{fn}')
        require(f'ti.simt.subgroup.{kind}_{fn}', 'subgroup_arithmetic')
        v = _ops.as_value(value)
        if v.dtype.is_float and fn in ('and', 'or', 'xor'):
            raise error(f'subgroup {kind}_{fn} takes integers', TypeError)
        if v.dtype is T.u1:
            v = _ops.cast(v, T.i32)
        return Value(emit('sg_reduce', v.dtype, [v.stmt], attrs={'fn': fn, 'scan': _SCANS[kind]}))
    f.__name__ = f'{kind}_{fn}'
    return f


def _scalar(what, value):
    v = _ops.as_value(value)
    if v.dtype.is_narrow:
        raise error(f'{what} takes a 32- or 64-bit scalar, got {v.dtype}', TypeError)
    return v


def elect():
    """True in exactly one active invocation of the subgroup."""
    in_kernel('ti.simt.subgroup.elect')
    require('ti.simt.subgroup.elect')
    return Value(emit('sg_elect', T.u1))


def invocation_id():
    """The invocation's index within its subgroup."""
    in_kernel('ti.simt.subgroup.invocation_id')
    require('ti.simt.subgroup.invocation_id')
    return Value(emit('sg_invocation_id', T.i32))


def group_size():
    """The number of invocations in a subgroup."""
    in_kernel('ti.simt.subgroup.group_size')
    require('ti.simt.subgroup.group_size')
    return Value(emit('sg_size', T.i32))


def barrier():
    """A subgroup control barrier (GLSL subgroupBarrier())."""
    in_kernel('ti.simt.subgroup.barrier')
    require('ti.simt.subgroup.barrier')
    emit('sg_barrier')


memory_barrier = barrier  # a control barrier orders memory too (subgroupMemoryBarrier())


def all_true(cond):
    """True when `cond` is nonzero in every active invocation of the subgroup (as an i32)."""
    in_kernel('ti.simt.subgroup.all_true')
    require('ti.simt.subgroup.all_true', 'subgroup_vote')
    return _ops.cast(Value(emit('sg_vote', T.u1, [pred(cond).stmt], {'fn': 'all'})), T.i32)


def any_true(cond):
    """True when `cond` is nonzero in some active invocation of the subgroup (as an i32)."""
    in_kernel('ti.simt.subgroup.any_true')
    require('ti.simt.subgroup.any_true', 'subgroup_vote')
    return _ops.cast(Value(emit('sg_vote', T.u1, [pred(cond).stmt], {'fn': 'any'})), T.i32)


def all_equal(value):
    """True when `value` is the same in every active invocation of the subgroup (as an i32)."""
    in_kernel('ti.simt.subgroup.all_equal')
    require('ti.simt.subgroup.all_equal', 'subgroup_vote')
    v = _scalar('ti.simt.subgroup.all_equal', value)
    return _ops.cast(Value(emit('sg_all_equal', T.u1, [v.stmt])), T.i32)


def broadcast_first(value):
    """`value` of the lowest-numbered active invocation of the subgroup."""
    in_kernel('ti.simt.subgroup.broadcast_first')
    require('ti.simt.subgroup.broadcast_first', 'subgroup_ballot')
    v = _scalar('ti.simt.subgroup.broadcast_first', value)
    return Value(emit('sg_broadcast_first', v.dtype, [v.stmt]))


def shuffle(value, index):
    """`value` of the invocation `index` of the subgroup (undefined when that one is inactive or
    index >= group_size(), as in GLSL's subgroupShuffle)."""
    in_kernel('ti.simt.subgroup.shuffle')
    require('ti.simt.subgroup.shuffle', 'subgroup_shuffle')
    return raw_shuffle(_scalar('ti.simt.subgroup.shuffle', value), _ops.as_value(index, T.i32))


def raw_shuffle(v, lane):
    """The sg_shuffle statement: `v` of the subgroup's invocation `lane` (an i32/u32 Value)."""
    lane = lane if lane.dtype in (T.i32, T.u32) else _ops.cast(lane, T.i32)
    return Value(emit('sg_shuffle', v.dtype, [v.stmt, lane.stmt]))


broadcast = shuffle  # subgroupBroadcast with a run-time index: the same instruction family


def shuffle_xor(value, mask):
    """`value` of the invocation invocation_id() ^ mask."""
    return shuffle(value, _ops.binary('bxor', invocation_id(), _ops.as_value(mask, T.i32)))


def shuffle_up(value, offset):
    """`value` of the invocation invocation_id() - offset (undefined below 0)."""
    return shuffle(value, _ops.binary('sub', invocation_id(), _ops.as_value(offset, T.i32)))


def shuffle_down(value, offset):
    """`value` of the invocation invocation_id() + offset (undefined past the subgroup)."""
    return shuffle(value, _ops.binary('add', invocation_id(), _ops.as_value(offset, T.i32)))


_g = globals()
for _kind in _SCANS:
    for _fn in _FNS:
        _g[f'{_kind}_{_fn}'] = _arith(_kind, _fn)
del _g, _kind, _fn

__all__ = ['barrier', 'memory_barrier', 'elect', 'all_true', 'any_true', 'all_equal',
           'broadcast_first', 'broadcast', 'group_size', 'invocation_id', 'shuffle',
           'shuffle_xor', 'shuffle_up', 'shuffle_down'] + [f'{k}_{f}' for k in _SCANS for f in _FNS]
