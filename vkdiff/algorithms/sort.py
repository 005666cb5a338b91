"""API layer (face floor): `ti.algorithms.parallel_sort(keys, values=None)`, an in-place ascending
sort of a 1-D scalar field, carrying `values` along, as in Taichi 1.7.4.

A stable merge sort: the keys (and values) are copied into a scratch field; one invocation
per chunk of CHUNK elements insertion-sorts it; then pass w (w = CHUNK, 2 CHUNK, ... < n) merges
each pair of sorted runs of w into a run of 2 w, each invocation writing CHUNK consecutive
outputs: a binary search along its diagonal of the two runs (merge path) finds where they
start, then it merges serially (a left-run element goes first among equal keys, so the sort
is stable); the result is copied back. Every pass is one kernel launch, reading one scratch
copy and writing the other (the two halves of one scratch field); no invocation waits on another, so it needs no forward progress
between workgroups. log2(n / CHUNK) + 3 launches (Taichi's odd-even merge sort needs
log2(n) (log2(n) + 1) / 2). The scratch copies are cached for the last KEEP_SCRATCH shapes, so
the sorting kernels compile once per shape and dtype; only the copies in and out compile for
each caller's fields.

Keys: any scalar type; float keys are ordered with NaN after +inf (a total order, so the merge
is well defined); -0.0 and 0.0 are equal; on a device that flushes subnormals, as
SwiftShader, a subnormal key compares equal to 0. Values: a 1-D scalar field at least as long.
Unlike Taichi's sort, this one is stable.
"""
from .. import types as T
from ..errors import AutodiffError, TaichiRuntimeError, VkdiffTypeError
from ..lang import api, state
from ..lang.field import Field, field
from ..lang.field import i as axis_i
from ..lang.fields_builder import FieldsBuilder
from ..lang.ndarray import Ndarray
from ..launch.kernel import kernel, template


CHUNK = 16  # elements one invocation sorts (first pass) or merges (later passes) serially


@kernel
def _sort_chunks(k: template(), v: template(), use_values: template(), is_float: template(),
                 ko: T.i32, vo: T.i32, n: T.i32):
    """Stable insertion sort of each chunk of CHUNK elements, in place."""
    for c in range((n + CHUNK - 1) // CHUNK):
        lo = c * CHUNK
        hi = min(lo + CHUNK, n)
        for q in range(lo + 1, hi):
            key = k[q + ko]
            val = v[q + vo]
            p = q
            moving = True
            while moving and p > lo:
                prev = k[p - 1 + ko]
                gt = prev > key
                if api.static(is_float):
                    gt = (key < prev) | ((key == key) & (prev != prev))
                if gt:
                    k[p + ko] = prev
                    if api.static(use_values):
                        v[p + vo] = v[p - 1 + vo]
                    p -= 1
                else:
                    moving = False
            k[p + ko] = key
            if api.static(use_values):
                v[p + vo] = val


@kernel
def _merge_pass(src_k: template(), src_v: template(), dst_k: template(), dst_v: template(),
                use_values: template(), is_float: template(), so: T.i32, svo: T.i32, do: T.i32,
                dvo: T.i32, n: T.i32, w: T.i32):
    """Merge each pair of sorted runs of w (a multiple of CHUNK) into one run of 2 w: each
    invocation writes CHUNK consecutive outputs, finding where they start in the two runs by a
    binary search along its diagonal (merge path), then merging serially. A left-run element
    goes first among equals, so the merge is stable."""
    # so, svo / do, dvo: the index offsets of the source / destination keys, values
    for c in range((n + CHUNK - 1) // CHUNK):
        start = c * CHUNK
        base = (start // (2 * w)) * 2 * w
        len_l = min(w, n - base)
        len_r = max(0, min(w, n - base - w))
        d = start - base
        lo = max(0, d - len_r)
        hi = min(d, len_l)
        while lo < hi:  # the first i with R[d - 1 - i] < L[i]
            mid = (lo + hi) // 2
            lk = src_k[base + mid + so]
            rk = src_k[base + w + d - 1 - mid + so]
            r_first = rk < lk
            if api.static(is_float):
                r_first = (rk < lk) | ((rk == rk) & (lk != lk))
            if r_first:
                hi = mid
            else:
                lo = mid + 1
        i = lo
        j = d - lo
        for q in range(start, min(start + CHUNK, n)):
            take_left = i < len_l
            if take_left and j < len_r:
                lk = src_k[base + i + so]
                rk = src_k[base + w + j + so]
                r_first = rk < lk
                if api.static(is_float):
                    r_first = (rk < lk) | ((rk == rk) & (lk != lk))
                take_left = not r_first
            src = base + w + j
            if take_left:
                src = base + i
                i += 1
            else:
                j += 1
            dst_k[q + do] = src_k[src + so]
            if api.static(use_values):
                dst_v[q + dvo] = src_v[src + svo]


@kernel
def _copy(src_k: template(), src_v: template(), dst_k: template(), dst_v: template(),
          use_values: template(), so: T.i32, svo: T.i32, do: T.i32, dvo: T.i32, n: T.i32):
    for t in range(n):
        dst_k[t + do] = src_k[t + so]
        if api.static(use_values):
            dst_v[t + dvo] = src_v[t + svo]


MAX_LENGTH = 1 << 30  # the scratch field holds 2 n, indexed in i32


def _check_1d(name, f):
    if isinstance(f, Ndarray):
        raise VkdiffTypeError(f'parallel_sort sorts fields, as Taichi\'s does; {name} is an '
                              f'ndarray')
    if not isinstance(f, Field) or len(f.shape) != 1 or tuple(f.elem_shape):
        raise VkdiffTypeError(f'parallel_sort: {name} must be a 1-D field of scalars, got '
                              f'{type(f).__name__}')
    return f.offset[0] if f.offset else 0


def refuse_gradients(what, fields):
    """Inside a Tape, a field with a gradient would lose it through the gradient-less scratch
    copies (zero after the Tape, silently): refused."""
    if state.tape is None:
        return
    for f in fields:
        if getattr(f, '_grad', None) is not None:
            raise AutodiffError(f'ti.algorithms.{what} is not differentiable: inside a ti.ad.Tape, '
                                f'{f.name} has a gradient, which the result would not carry '
                                '(it would be 0 after the Tape). Run it outside the Tape, or on '
                                'fields without gradients (integer keys, indices)')


def merge_widths(n):
    """The run width w of each merge pass, in order (runs of CHUNK come sorted)."""
    out, w = [], CHUNK
    while w < n:
        out.append(w)
        w *= 2
    return out


def parallel_sort(keys, values=None):
    """Sort keys ascending in place (stable); values (if given) get the same permutation."""
    ko = _check_1d('keys', keys)
    n = keys.shape[0]
    if n > MAX_LENGTH:
        raise TaichiRuntimeError(f'parallel_sort: {n} keys; at most {MAX_LENGTH}')
    use_values = values is not None
    vo = ko
    if use_values:
        vo = _check_1d('values', values)
        if values.shape[0] < n:
            raise TaichiRuntimeError(f'parallel_sort: values has {values.shape[0]} elements, '
                                     f'keys {n}')
    refuse_gradients('parallel_sort', (keys, values) if use_values else (keys,))
    if n < 2:
        return
    widths = merge_widths(n)
    is_float = T.resolve(keys.dtype) in (T.f16, T.f32, T.f64)
    # the sorting kernels see only the cached scratch fields, so they compile once per shape
    # and dtype; only the two copies are compiled for each caller's fields
    # (one field of 2 n for each: the passes read one half and write the other, so a single
    # compiled merge kernel serves both directions)
    sk, sv = _scratch(n, keys.dtype, values.dtype if use_values else None)
    vals = values if use_values else keys
    _copy(keys, vals, sk, sv, use_values, ko, vo, 0, 0, n)
    _sort_chunks(sk, sv, use_values, is_float, 0, 0, n)
    for step, w in enumerate(widths):
        src, dst = (step % 2) * n, ((step + 1) % 2) * n
        _merge_pass(sk, sv, sk, sv, use_values, is_float, src, src, dst, dst, n, w)
    last = (len(widths) % 2) * n
    _copy(sk, sv, keys, vals, use_values, last, last, ko, vo, n)


_SCRATCH = {}  # (n, key dtype, value dtype) -> (keys, values, tree) of 2 n each, the last few sorts'
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
            _SCRATCH.pop(next(iter(_SCRATCH)))[-1].destroy()
        fb = FieldsBuilder()
        sk = field(kdt)
        sv = field(vdt) if vdt is not None else sk
        fb.dense(axis_i, 2 * n).place(*((sk, sv) if vdt is not None else (sk,)))
        _SCRATCH[key] = (sk, sv, fb.finalize())
    return _SCRATCH[key][:2]
