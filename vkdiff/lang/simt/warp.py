"""Face floor: `ti.simt.warp`, Taichi 1.7.4's CUDA warp intrinsics (`shfl_sync_i32`,
`shfl_down_f32`, `ballot`, `match_any`, `active_mask`, `sync`, ...), on the device's subgroups
through SPIR-V group non-uniform shuffles and ballots (codegen/subgroup.py).

A warp is a subgroup of W = min(S, 32) lanes, S the device's subgroup size: a subgroup of
S <= 32 lanes behaves as a CUDA warp called with `width=S` (lanes 0..S-1, masks in bits
0..S-1); a subgroup of 64 (or 128) lanes is 2 (or 4) warps of 32, as lanes 0-31, 32-63, ...
The rules follow CUDA's for a width below 32: `shfl_sync` reads lane `offset mod W`;
`shfl_up`/`shfl_down`/`shfl_xor` give the caller its own value where the source lane is
outside the warp. Masks are 32-bit lane sets of the warp: a vote (`all_nonzero`,
`any_nonzero`, `unique`) and `match_*` look at the active lanes in the mask; shuffles read the
named lane whatever the mask says (a lane that is not active gives an undefined value, as an
exited thread does in CUDA). `active_mask()` is the warp's active lanes: iterations past the end
of the loop are not active. A loop that uses these is launched one iteration per invocation in
workgroups of `ti.loop_config(block_dim=B)` (default 128), so lane k of a subgroup runs the
iteration k places after its first one on the drivers tested (Vulkan does not promise this
order; lavapipe, SwiftShader and the GPUs do it).

Each op needs the device's subgroup feature bits (shuffle and ballot) in compute shaders; a
device without them gets an UnsupportedError naming the missing VK_SUBGROUP_FEATURE_*_BIT."""
import warnings

from ... import types as T
from ...errors import WarpWidthWarning
from ...frontend import ops as _ops
from ...frontend.context import Value, emit, error
from ._common import device, in_kernel, max_subgroup_size, pred, require
from .subgroup import raw_shuffle


def _i32(x):
    return _ops.as_value(x, T.i32) if not isinstance(x, Value) else _ops.cast(x, T.i32)


def _u32(x):
    if isinstance(x, Value):
        return x if x.dtype is T.u32 else _ops.cast(x, T.u32)
    return _ops.as_value(int(x) & 0xFFFFFFFF, T.u32)


def _bin(op, a, b):
    return _ops.binary(op, a, b)


class _Lane:
    """The lane's place in its warp: lane (index in the subgroup), W (warp width), base (the
    warp's first lane in the subgroup), k (index in the warp), all i32 Values."""

    def __init__(self):
        self.lane = Value(emit('sg_invocation_id', T.i32))
        size = Value(emit('sg_size', T.i32))
        self.width = _ops.select(_bin('lt', size, 32), size, _ops.as_value(32, T.i32))
        self.base = _bin('band', self.lane, -32)
        self.k = _bin('band', self.lane, 31)

    def source(self, k, valid):
        """The subgroup lane of warp lane `k` where `valid`, else the caller's own lane."""
        return _ops.select(valid, _bin('add', self.base, k), self.lane)


_warned = set()


def _start(what, *features):
    in_kernel(f'ti.simt.warp.{what}')
    require(f'ti.simt.warp.{what}', *features)
    size = device()[2]
    if size and size < 32 and size not in _warned:
        _warned.add(size)
        warnings.warn(f"ti.simt.warp: this device's subgroups have {size} lanes, so a warp is "
                      f"{size} lanes here, not CUDA's 32: code that assumes 32 (lane = i % 32, "
                      f"shuffle offsets >= {size}, full 32-bit masks) gets the results of CUDA "
                      f"warps called with width={size}", WarpWidthWarning, stacklevel=3)


def _value(what, val, dtype):
    if isinstance(val, Value) and val.dtype is not dtype and not (val.dtype.is_int and dtype.is_int
                                                                  and val.dtype.bits == 32):
        return _ops.cast(val, dtype)
    return val if isinstance(val, Value) else _ops.as_value(val, dtype)


def _shuffle(what, dtype, val, src_of):
    _start(what, 'subgroup_shuffle')
    v = _ops.cast(_value(what, val, dtype), dtype)
    ln = _Lane()
    return raw_shuffle(v, src_of(ln))


def _shfl(dtype):
    def shfl_sync(mask, val, offset):
        """`val` of warp lane `offset mod W` (CUDA's __shfl_sync)."""
        return _shuffle(f'shfl_sync_{dtype.name}', dtype, val, lambda ln: _bin(
            'add', ln.base, _bin('band', _i32(offset), _bin('sub', ln.width, 1))))
    return shfl_sync


def _up(dtype):
    def shfl_up(mask, val, offset):
        """`val` of warp lane k - offset; the caller's own `val` where that is below 0."""
        def src(ln):
            k = _bin('sub', ln.k, _i32(offset))
            return ln.source(k, _bin('ge', k, 0))
        return _shuffle(f'shfl_up_{dtype.name}', dtype, val, src)
    return shfl_up


def _down(dtype):
    def shfl_down(mask, val, offset):
        """`val` of warp lane k + offset; the caller's own `val` where that is past the warp."""
        def src(ln):
            k = _bin('add', ln.k, _i32(offset))
            return ln.source(k, _bin('lt', k, ln.width))
        return _shuffle(f'shfl_down_{dtype.name}', dtype, val, src)
    return shfl_down


def _xor(dtype):
    def shfl_xor(mask, val, offset):
        """`val` of warp lane k ^ offset; the caller's own `val` where that is outside the warp."""
        def src(ln):
            k = _bin('bxor', ln.k, _i32(offset))
            return ln.source(k, _bin('land', _bin('ge', k, 0), _bin('lt', k, ln.width)))
        return _shuffle(f'shfl_xor_{dtype.name}', dtype, val, src)
    return shfl_xor


shfl_sync_i32, shfl_sync_f32 = _shfl(T.i32), _shfl(T.f32)
shfl_up_i32, shfl_up_f32 = _up(T.i32), _up(T.f32)
shfl_down_i32, shfl_down_f32 = _down(T.i32), _down(T.f32)
shfl_xor_i32 = _xor(T.i32)
shfl_xor_f32 = _xor(T.f32)  # not in Taichi 1.7.4's list; the f32 twin of shfl_xor_i32


def _ballot_word(p):
    """The u32 ballot word of the caller's warp: bit k = warp lane k is active and `p` (u1)."""
    return Value(emit('sg_ballot', T.u32, [p.stmt]))


def _active():
    return _ballot_word(_ops.as_value(True, T.u1))


def ballot(predicate):
    """The lanes of the warp whose predicate is nonzero, as an i32 bit set (CUDA's __ballot)."""
    _start('ballot', 'subgroup_ballot')
    return Value(emit('bitcast', T.i32, [_ballot_word(pred(predicate)).stmt]))


def active_mask():
    """The active lanes of the warp (u32; CUDA's __activemask())."""
    _start('active_mask', 'subgroup_ballot')
    return _active()


def _vote(what, mask, predicate, decide):
    _start(what, 'subgroup_ballot')
    m = _bin('band', _u32(mask), _active())
    b = _bin('band', _ballot_word(pred(predicate)), m)
    return _ops.cast(decide(b, m), T.i32)


def all_nonzero(mask, predicate):
    """1 when the predicate is nonzero in every active lane of `mask` (CUDA's __all_sync)."""
    return _vote('all_nonzero', mask, predicate, lambda b, m: _bin('eq', b, m))


def any_nonzero(mask, predicate):
    """1 when the predicate is nonzero in some active lane of `mask` (CUDA's __any_sync)."""
    return _vote('any_nonzero', mask, predicate, lambda b, m: _bin('ne', b, 0))


def unique(mask, predicate):
    """1 when the predicate is the same (all zero or all nonzero) in the active lanes of `mask`
    (CUDA's __uni_sync)."""
    return _vote('unique', mask, predicate,
                 lambda b, m: _bin('lor', _bin('eq', b, 0), _bin('eq', b, m)))


def _match(what, mask, value):
    """(lanes of `mask` that are active and hold the caller's `value`, those active lanes): one
    shuffle per possible warp lane (min(32, maxSubgroupSize) of them)."""
    _start(what, 'subgroup_shuffle', 'subgroup_ballot')
    v = _value(what, value, T.i32)
    if not v.dtype.is_int or v.dtype.bits != 32:
        raise error(f'ti.simt.warp.{what} takes a 32-bit integer value, got {v.dtype}', TypeError)
    ln = _Lane()
    m = _bin('band', _u32(mask), _active())
    same = _ops.as_value(0, T.u32)
    for k in range(min(32, max_subgroup_size())):
        kv = _ops.as_value(k, T.i32)
        other = raw_shuffle(v, ln.source(kv, _bin('lt', kv, ln.width)))
        bit = _ops.select(_bin('eq', other, v), _ops.as_value(1 << k, T.u32),
                          _ops.as_value(0, T.u32))
        same = _bin('bor', same, bit)
    return _bin('band', same, m), m


def match_any(mask, value):
    """The active lanes of `mask` whose value equals the caller's (u32; CUDA's
    __match_any_sync)."""
    return _match('match_any', mask, value)[0]


def match_all(mask, value):
    """The active lanes of `mask` when all of them hold the same value, else 0 (u32; CUDA's
    __match_all_sync without its predicate output)."""
    same, m = _match('match_all', mask, value)
    return _ops.select(_bin('eq', same, m), m, _ops.as_value(0, T.u32))


def sync(mask):
    """A subgroup barrier, acquire-release on workgroup and storage memory (CUDA's __syncwarp)."""
    _start('sync')
    emit('sg_barrier')


__all__ = ['all_nonzero', 'any_nonzero', 'unique', 'ballot', 'shfl_sync_i32', 'shfl_sync_f32',
           'shfl_up_i32', 'shfl_up_f32', 'shfl_down_i32', 'shfl_down_f32', 'shfl_xor_i32',
           'match_any', 'match_all', 'active_mask', 'sync']
