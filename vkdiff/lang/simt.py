"""Face floor: `ti.simt`: subgroup operations in kernels (`ti.simt.subgroup.reduce_add(v)`, `elect()`, ...),
compiled to SPIR-V group non-uniform instructions (codegen/subgroup.py). They act on the active
invocations of the current subgroup, as Taichi's do on Vulkan.

`ti.simt.block`: `SharedArray(shape, dtype)` is an array in workgroup memory (an ir.Buffer with
role 'shared', accessed like a field: `a[i] = x`, `a[i, j] += 1` is atomic) shared by the
iterations of one block -- `ti.loop_config(block_dim=B)` makes B consecutive iterations of the
parallel loop one workgroup --, and `sync()` is a workgroup barrier (control and workgroup
memory). As in Taichi, every iteration of a block must reach the same sync() calls: a trip count
that is a multiple of block_dim."""
import types as _types

from .. import types as T
from ..frontend import ops as _ops
from ..frontend.context import Value, current, emit, error
from ..frontend.argarray import SharedBuffer


def _in_kernel(what):
    if current() is None:
        raise error(f'ti.simt.subgroup.{what}() is called inside a kernel', TypeError)


def _reduce(fn):
    def f(value):
        _in_kernel(f'reduce_{fn}')
        v = _ops.as_value(value)
        if v.dtype.is_float and fn in ('and', 'or', 'xor'):
            raise error(f'subgroup reduce_{fn} takes integers', TypeError)
        return Value(emit('sg_reduce', v.dtype, [v], attrs={'fn': fn}))
    f.__name__ = f'reduce_{fn}'
    return f


def elect():
    """True in exactly one active invocation of the subgroup."""
    _in_kernel('elect')
    return Value(emit('sg_elect', T.u1))


def invocation_id():
    """The invocation's index within its subgroup."""
    _in_kernel('invocation_id')
    return Value(emit('sg_invocation_id', T.i32))


def group_size():
    """The number of invocations in a subgroup."""
    _in_kernel('group_size')
    return Value(emit('sg_size', T.i32))


class SharedArray:
    """`ti.simt.block.SharedArray((n, ...), dtype)` in a kernel: the workgroup's array."""

    def __new__(cls, shape, dtype):
        if current() is None:
            raise error('ti.simt.block.SharedArray() is called inside a kernel', TypeError)
        return SharedBuffer(shape, dtype)


def sync():
    """A workgroup barrier: every invocation of the block waits, and sees the others' writes to
    shared arrays (ti.simt.block.sync())."""
    _in_kernel_block('sync')
    emit('barrier')


def _in_kernel_block(what):
    if current() is None:
        raise error(f'ti.simt.block.{what}() is called inside a kernel', TypeError)


block = _types.SimpleNamespace(SharedArray=SharedArray, sync=sync)

subgroup = _types.SimpleNamespace(
    elect=elect, invocation_id=invocation_id, group_size=group_size,
    **{f'reduce_{fn}': _reduce(fn) for fn in ('add', 'mul', 'min', 'max', 'and', 'or', 'xor')})
