"""Face floor: `ti.simt.block`: `SharedArray(shape, dtype)` is an array in workgroup memory (an
ir.Buffer with role 'shared', accessed like a field: `a[i] = x`, `a[i, j] += 1` is atomic) shared
by the iterations of one block -- `ti.loop_config(block_dim=B)` makes B consecutive iterations of
the parallel loop one workgroup --, and `sync()` is a workgroup barrier (control and workgroup
memory). As in Taichi, every iteration of a block must reach the same sync() calls: a trip count
that is a multiple of block_dim. `sync_all_nonzero` / `sync_any_nonzero` / `sync_count_nonzero`
(CUDA's __syncthreads_and/or/count, CUDA-only in Taichi) are a barrier that also counts the
block's nonzero predicates, in a workgroup-memory counter (three barriers). `mem_sync()` is a
workgroup memory barrier, `thread_idx()` the invocation's index in its block,
`global_thread_idx()` its global index."""
from ... import types as T
from ...frontend import ops as _ops
from ...frontend.argarray import SharedBuffer
from ...frontend.context import Value, current, emit, error
from ...frontend.dynpool import _if
from ._common import in_kernel, pred


class SharedArray:
    """`ti.simt.block.SharedArray((n, ...), dtype)` in a kernel: the workgroup's array."""

    def __new__(cls, shape, dtype):
        if current() is None:
            raise error('ti.simt.block.SharedArray() is called inside a kernel', TypeError)
        return SharedBuffer(shape, dtype)


def sync():
    """A workgroup barrier: every invocation of the block waits, and sees the others' writes to
    shared arrays (ti.simt.block.sync())."""
    in_kernel('ti.simt.block.sync')
    emit('barrier')


mem_sync = sync  # a control barrier is also the workgroup memory barrier Taichi's mem_sync is


def thread_idx():
    """The invocation's index in its block (workgroup)."""
    in_kernel('ti.simt.block.thread_idx')
    return Value(emit('local_index', T.i32))


def global_thread_idx():
    """The invocation's global index (block index * block_dim + thread_idx())."""
    in_kernel('ti.simt.block.global_thread_idx')
    return Value(emit('global_index', T.i32))


def _count(what, predicate):
    """The number of invocations of the block whose predicate is nonzero, in every invocation:
    a workgroup counter cleared by invocation 0, a barrier, an atomic add of each predicate, a
    barrier, the read, and a barrier before the counter may be cleared again."""
    in_kernel(f'ti.simt.block.{what}')
    p = _ops.cast(pred(predicate), T.i32)
    counter = SharedBuffer((1,), T.i32).buffer
    zero = _ops.as_value(0, T.i32)
    with _if(_ops.binary('eq', Value(emit('local_index', T.i32)), 0)):
        emit('gstore', None, [zero.stmt, zero.stmt], attrs={'buf': counter, 'comp': 0})
    emit('barrier')
    emit('atomic', T.i32, [zero.stmt, p.stmt], attrs={'buf': counter, 'comp': 0, 'fn': 'add'})
    emit('barrier')
    n = Value(emit('gload', T.i32, [zero.stmt], attrs={'buf': counter, 'comp': 0}))
    emit('barrier')
    return n


def sync_count_nonzero(predicate):
    """A block barrier returning how many of the block's invocations have a nonzero predicate."""
    return _count('sync_count_nonzero', predicate)


def sync_all_nonzero(predicate):
    """A block barrier returning 1 when every invocation of the block has a nonzero predicate."""
    in_kernel('ti.simt.block.sync_all_nonzero')
    # counts the zero predicates: all are nonzero when none is zero
    zeros = _count('sync_all_nonzero', _ops.binary('eq', _ops.cast(pred(predicate), T.i32), 0))
    return _ops.cast(_ops.binary('eq', zeros, 0), T.i32)


def sync_any_nonzero(predicate):
    """A block barrier returning 1 when some invocation of the block has a nonzero predicate."""
    return _ops.cast(_ops.binary('gt', _count('sync_any_nonzero', predicate), 0), T.i32)


__all__ = ['SharedArray', 'sync', 'mem_sync', 'thread_idx', 'global_thread_idx',
           'sync_all_nonzero', 'sync_any_nonzero', 'sync_count_nonzero']
