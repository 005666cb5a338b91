"""ti.algorithms.parallel_sort: the merge sort by ranks against numpy's stable argsort on sizes
around powers of two, signed/unsigned/float keys (NaN, inf, -0.0), stability with many equal
keys, values carried along, offsets, errors."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.algorithms.sort import CHUNK, merge_widths


@pytest.mark.parametrize('n', [1, 2, 3, 15, 16, 17, 33, 255, 256, 257, 1000, 65537])
def test_sort_i32_keys_with_values(n):
    rng = np.random.default_rng(n)
    k = rng.integers(-2 ** 31, 2 ** 31 - 1, n).astype(np.int32)
    keys, values = ti.field(ti.i32, n), ti.field(ti.i32, n)
    keys.from_numpy(k)
    values.from_numpy(np.arange(n, dtype=np.int32))
    ti.algorithms.parallel_sort(keys, values)
    gk, gv = keys.to_numpy(), values.to_numpy()
    np.testing.assert_array_equal(gk, np.sort(k))
    np.testing.assert_array_equal(gv, np.argsort(k, kind='stable'))


@pytest.mark.parametrize('dtype,npdt', [(ti.f32, np.float32), (ti.u32, np.uint32)])
def test_sort_keys_only(dtype, npdt):
    n = 3001
    rng = np.random.default_rng(5)
    if npdt is np.float32:
        k = (rng.standard_normal(n) * 1e3).astype(npdt)
        # (normal numbers: a device that flushes subnormals, as SwiftShader, compares them as 0)
        k[:10] = [0.0, -0.0, np.inf, -np.inf, 1e-30, -1e-30, 3.0, 3.0, 3.0, -2.5]
    else:
        k = rng.integers(0, 2 ** 32, n, dtype=np.uint64).astype(npdt)
    keys = ti.field(dtype, n)
    keys.from_numpy(k)
    ti.algorithms.parallel_sort(keys)
    np.testing.assert_array_equal(keys.to_numpy(), np.sort(k))


@pytest.mark.parametrize('offset', [-23333, 1, 128])
def test_sort_offset_fields(offset):
    n = 777
    k = np.random.default_rng(2).random(n).astype(np.float32)
    keys = ti.field(ti.f32, n, offset=offset)
    values = ti.field(ti.f32, n, offset=-offset)
    keys.from_numpy(k)
    values.from_numpy(k * 2)
    ti.algorithms.parallel_sort(keys, values)
    np.testing.assert_array_equal(keys.to_numpy(), np.sort(k))
    np.testing.assert_array_equal(values.to_numpy(), np.sort(k) * 2)


def test_merge_widths():
    assert merge_widths(1) == [] and merge_widths(CHUNK) == []
    assert merge_widths(CHUNK + 1) == [CHUNK] and merge_widths(4 * CHUNK) == [CHUNK, 2 * CHUNK]
    assert len(merge_widths(100001)) == 17 - CHUNK.bit_length() + 1


@pytest.mark.parametrize('n', [7, 1000, 4097])
def test_sort_is_stable_and_orders_nan_last(n):
    rng = np.random.default_rng(n)
    k = rng.integers(0, 5, n).astype(np.float32)  # many equal keys
    k[rng.random(n) < 0.1] = np.nan
    k[0] = -np.inf
    keys, values = ti.field(ti.f32, n), ti.field(ti.i32, n)
    keys.from_numpy(k)
    values.from_numpy(np.arange(n, dtype=np.int32))
    ti.algorithms.parallel_sort(keys, values)
    order = np.argsort(k, kind='stable')  # numpy: NaN last, equal keys in input order
    np.testing.assert_array_equal(values.to_numpy(), order)
    np.testing.assert_array_equal(keys.to_numpy(), k[order])


def test_sort_errors_leave_data_intact():
    keys = ti.field(ti.i32, 8)
    keys.from_numpy(np.arange(8, 0, -1, dtype=np.int32))
    with pytest.raises(RuntimeError, match='values has 4'):
        ti.algorithms.parallel_sort(keys, ti.field(ti.i32, 4))
    with pytest.raises(TypeError, match='1-D field'):
        ti.algorithms.parallel_sort(ti.field(ti.i32, (2, 4)))
    with pytest.raises(TypeError, match='1-D field'):
        ti.algorithms.parallel_sort(keys, ti.Vector.field(2, ti.i32, 8))
    with pytest.raises(TypeError, match='sorts fields.*ndarray'):
        ti.algorithms.parallel_sort(ti.ndarray(ti.i32, 8))
    np.testing.assert_array_equal(keys.to_numpy(), np.arange(8, 0, -1))
