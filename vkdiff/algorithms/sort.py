"""API layer (face floor): `ti.algorithms.parallel_sort(keys, values=None)`, an in-place ascending
sort of a 1-D scalar field, carrying `values` along, as in Taichi 1.7.4.

Batcher's odd-even merge sort (as Taichi's), for any length: for p = 1, 2, 4, ... < n and
k = p, p/2, ..., 1, one pass compare-exchanges the pairs (a, a + k) with a = j + i,
j = k % p + 2 k r, 0 <= i < k, when a and a + k lie in the same run of 2 p. Each pass is one
kernel launch with one invocation per pair (Taichi's runs a whole block of k pairs in one
invocation, which leaves one invocation doing n/2 pairs in the last passes); no invocation
waits on another. O(n log^2 n) compare-exchanges, log2(n) (log2(n) + 1) / 2 launches. Not
stable (values of equal keys may swap), as in Taichi. Keys: any scalar type (ints, floats: a
NaN compares false, so it stays where it is; on a device that flushes subnormals, as SwiftShader,
a subnormal key compares equal to 0); values: a 1-D scalar field at least as long.
"""
from .. import types as T
from ..errors import TaichiRuntimeError, VkdiffTypeError
from ..lang.field import Field
from ..lang import api
from ..launch.kernel import kernel, template


@kernel
def _merge_pass(keys: template(), values: template(), use_values: template(), ko: T.i32,
                vo: T.i32, n: T.i32, p: T.i32, k: T.i32, pairs: T.i32):
    for t in range(pairs):
        a = k % p + (t // k) * 2 * k + t % k
        b = a + k
        if b < n and a // (2 * p) == b // (2 * p):
            key_a = keys[a + ko]
            key_b = keys[b + ko]
            if key_a > key_b:
                keys[a + ko] = key_b
                keys[b + ko] = key_a
                if api.static(use_values):
                    tmp = values[a + vo]
                    values[a + vo] = values[b + vo]
                    values[b + vo] = tmp


def _check_1d(name, f):
    if not isinstance(f, Field) or len(f.shape) != 1 or tuple(f.elem_shape):
        raise VkdiffTypeError(f'parallel_sort: {name} must be a 1-D field of scalars, got '
                              f'{type(f).__name__}')
    return f.offset[0] if f.offset else 0


def merge_passes(n):
    """The (p, k) of each pass, in order."""
    out, p = [], 1
    while p < n:
        k = p
        while k >= 1:
            out.append((p, k))
            k //= 2
        p *= 2
    return out


def parallel_sort(keys, values=None):
    """Sort keys ascending in place; values (if given) get the same permutation."""
    ko = _check_1d('keys', keys)
    n = keys.shape[0]
    vo = ko
    if values is not None:
        vo = _check_1d('values', values)
        if values.shape[0] < n:
            raise TaichiRuntimeError(f'parallel_sort: values has {values.shape[0]} elements, '
                                     f'keys {n}')
    for p, k in merge_passes(n):
        j0 = k % p
        runs = (n - j0 - k + 2 * k - 1) // (2 * k)  # j = j0 + 2 k r with j + k < n
        if runs > 0:
            _merge_pass(keys, keys if values is None else values, values is not None,
                        ko, vo, n, p, k, runs * k)
