"""API layer (face floor): `ti.algorithms.parallel_sort(keys, values=None)`, an in-place ascending
sort of a 1-D scalar field, carrying `values` along, as in Taichi 1.7.4.

A stable merge sort by ranks, log2(n) passes: pass w merges each pair of sorted runs of w
elements into a run of 2 w. One invocation per element computes where its element lands: its
place in its own run plus its rank in the other run, found by binary search (a left-run element
counts the right run's smaller keys, a right-run element the left run's keys not greater than
it, so equal keys keep their order). Every pass is one kernel launch, reading one buffer and
writing the other (the keys' field and a scratch field, in turn); no invocation waits on
another, so it needs no forward progress between workgroups. O(n log^2 n) comparisons, log2(n)
launches (Taichi's odd-even merge sort needs log2(n) (log2(n) + 1) / 2).

Keys: any scalar type; float keys are ordered with NaN after +inf (a total order, so the ranks
always form a permutation); -0.0 and 0.0 are equal; on a device that flushes subnormals, as
SwiftShader, a subnormal key compares equal to 0. Values: a 1-D scalar field at least as long.
Unlike Taichi's sort, this one is stable.
"""
from .. import types as T
from ..errors import TaichiRuntimeError, VkdiffTypeError
from ..lang import api, state
from ..lang.field import Field, field
from ..lang.field import i as axis_i
from ..lang.fields_builder import FieldsBuilder
from ..launch.kernel import kernel, template


@kernel
def _merge_pass(src_k: template(), src_v: template(), dst_k: template(), dst_v: template(),
                use_values: template(), is_float: template(), so: T.i32, svo: T.i32, do: T.i32,
                dvo: T.i32, n: T.i32, w: T.i32):
    # so, svo / do, dvo: the index offsets of the source / destination keys, values
    for t in range(n):
        r = t // w
        base = (r // 2) * 2 * w
        key = src_k[t + so]
        lo = base + w
        other_end = min(base + 2 * w, n)
        left = r % 2 == 0
        if not left:
            lo = base
            other_end = base + w
        a = min(lo, n)
        b = max(other_end, a)
        while a < b:
            mid = (a + b) // 2
            probe = src_k[mid + so]
            before = False
            if left:  # count the right run's keys < key
                if api.static(is_float):
                    before = (probe < key) | ((probe == probe) & (key != key))
                else:
                    before = probe < key
            else:  # count the left run's keys <= key, i.e. not key < probe
                if api.static(is_float):
                    before = not ((key < probe) | ((key == key) & (probe != probe)))
                else:
                    before = not (key < probe)
            if before:
                a = mid + 1
            else:
                b = mid
        own = t - base
        if not left:
            own = t - base - w
        dest = base + own + (a - min(lo, n))
        dst_k[dest + do] = key
        if api.static(use_values):
            dst_v[dest + dvo] = src_v[t + svo]


@kernel
def _copy_back(src_k: template(), src_v: template(), dst_k: template(), dst_v: template(),
               use_values: template(), ko: T.i32, vo: T.i32, n: T.i32):
    for t in range(n):
        dst_k[t + ko] = src_k[t]
        if api.static(use_values):
            dst_v[t + vo] = src_v[t]


def _check_1d(name, f):
    if not isinstance(f, Field) or len(f.shape) != 1 or tuple(f.elem_shape):
        raise VkdiffTypeError(f'parallel_sort: {name} must be a 1-D field of scalars, got '
                              f'{type(f).__name__}')
    return f.offset[0] if f.offset else 0


def merge_widths(n):
    """The run width w of each pass, in order."""
    out, w = [], 1
    while w < n:
        out.append(w)
        w *= 2
    return out


def parallel_sort(keys, values=None):
    """Sort keys ascending in place (stable); values (if given) get the same permutation."""
    ko = _check_1d('keys', keys)
    n = keys.shape[0]
    use_values = values is not None
    vo = ko
    if use_values:
        vo = _check_1d('values', values)
        if values.shape[0] < n:
            raise TaichiRuntimeError(f'parallel_sort: values has {values.shape[0]} elements, '
                                     f'keys {n}')
    widths = merge_widths(n)
    if not widths:
        return
    is_float = T.resolve(keys.dtype) in (T.f16, T.f32, T.f64)
    tk, tv = _scratch(n, keys.dtype, values.dtype if use_values else None)
    tv = tv if use_values else tk
    vals = values if use_values else keys
    bufs = [(keys, vals, ko, vo), (tk, tv, 0, 0)]
    for step, w in enumerate(widths):
        (sk, sv, so, svo), (dk, dv, do, dvo) = bufs[step % 2], bufs[(step + 1) % 2]
        _merge_pass(sk, sv, dk, dv, use_values, is_float, so, svo, do, dvo, n, w)
    if len(widths) % 2:
        _copy_back(tk, tv, keys, vals, use_values, ko, vo, n)


_SCRATCH = {}  # (n, key dtype, value dtype) -> (keys, values, tree), the last few sorts'
KEEP_SCRATCH = 4
_scratch_generation = [None]  # the program (ti.init) the cached fields belong to


def _scratch(n, kdt, vdt):
    """Scratch fields for one sort shape, kept for the next sorts of that shape: the kernels
    take them as template arguments, so fresh fields would compile the passes again."""
    if _scratch_generation[0] != state.generation:  # ti.init / ti.reset freed them
        _SCRATCH.clear()
        _scratch_generation[0] = state.generation
    key = (n, str(kdt), str(vdt))
    if key not in _SCRATCH:  # (destroying a tree makes every kernel compile again: rarely)
        while len(_SCRATCH) >= KEEP_SCRATCH:
            _SCRATCH.pop(next(iter(_SCRATCH)))[2].destroy()
        fb = FieldsBuilder()
        tk = field(kdt)
        tv = field(vdt) if vdt is not None else None
        fb.dense(axis_i, n).place(*((tk, tv) if tv is not None else (tk,)))
        _SCRATCH[key] = (tk, tv, fb.finalize())
    return _SCRATCH[key][:2]
