"""ti.algorithms.PrefixSumExecutor: the in-place inclusive scan against numpy.cumsum on sizes
around the chunk (32) and level boundaries, field offsets, the dtypes it takes, and errors."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.algorithms.scan import CHUNK, scan_levels

SIZES = [1, 2, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 32 * 32 + 1, 65537]


@pytest.mark.parametrize('n', SIZES)
def test_scan_i32_matches_cumsum(n):
    a = np.random.default_rng(n).integers(-1000, 1000, n).astype(np.int32)
    f = ti.field(ti.i32, n)
    f.from_numpy(a)
    ti.algorithms.PrefixSumExecutor(n).run(f)
    np.testing.assert_array_equal(f.to_numpy(), np.cumsum(a, dtype=np.int32))


def test_scan_levels_cover_every_element():
    for n in SIZES:
        levels, total = scan_levels(n)
        assert levels[0] == (0, n) and levels[-1][1] <= CHUNK
        for (_, n0), (_, n1) in zip(levels, levels[1:]):
            assert n1 == -(-n0 // CHUNK)
        starts = [s for s, _ in levels[1:]]  # the scratch levels, one after another
        assert starts == list(np.cumsum([0] + [k for _, k in levels[1:-1]]))[:len(starts)]
        assert total == max(1, sum(k for _, k in levels[1:]))


@pytest.mark.parametrize('offset', [-23333, -1, 5])
def test_scan_with_offset_and_reuse(offset):
    n = 1000
    rng = np.random.default_rng(7)
    f = ti.field(ti.i32, n, offset=offset)
    ex = ti.algorithms.PrefixSumExecutor(n)
    for _ in range(2):  # one executor, several runs
        a = rng.integers(0, 50, n).astype(np.int32)
        f.from_numpy(a)
        ex.run(f)
        np.testing.assert_array_equal(f.to_numpy(), np.cumsum(a))
    assert f[offset] == a[0] and f[offset + n - 1] == a.sum()


def test_scan_wraps_like_i32():
    n = 300
    a = np.full(n, 2 ** 30, np.int32)
    f = ti.field(ti.i32, n)
    f.from_numpy(a)
    ti.algorithms.PrefixSumExecutor(n).run(f)
    np.testing.assert_array_equal(f.to_numpy(), np.cumsum(a, dtype=np.int32))


def test_scan_u32_and_f32():
    n = 4097
    rng = np.random.default_rng(3)
    u = rng.integers(0, 2 ** 20, n).astype(np.uint32)
    fu = ti.field(ti.u32, n)
    fu.from_numpy(u)
    ti.algorithms.PrefixSumExecutor(n).run(fu)
    np.testing.assert_array_equal(fu.to_numpy(), np.cumsum(u, dtype=np.uint32))
    x = rng.random(n).astype(np.float32)
    ff = ti.field(ti.f32, n)
    ff.from_numpy(x)
    ti.algorithms.PrefixSumExecutor(n).run(ff)
    np.testing.assert_allclose(ff.to_numpy(), np.cumsum(x.astype(np.float64)), rtol=1e-5)


def test_scan_only_a_prefix_of_a_longer_field():
    a = np.arange(1, 101, dtype=np.int32)
    f = ti.field(ti.i32, 100)
    f.from_numpy(a)
    ti.algorithms.PrefixSumExecutor(40).run(f)
    got = f.to_numpy()
    np.testing.assert_array_equal(got[:40], np.cumsum(a[:40]))
    np.testing.assert_array_equal(got[40:], a[40:])


def test_scan_errors_leave_data_intact():
    f = ti.field(ti.i32, 10)
    f.from_numpy(np.arange(10, dtype=np.int32))
    with pytest.raises(RuntimeError, match='only 10 elements'):
        ti.algorithms.PrefixSumExecutor(11).run(f)
    v = ti.Vector.field(2, ti.i32, 10)
    with pytest.raises(TypeError, match='scalars'):
        ti.algorithms.PrefixSumExecutor(10).run(v)
    b = ti.field(ti.u8, 10)
    with pytest.raises(TypeError, match='scalars'):
        ti.algorithms.PrefixSumExecutor(10).run(b)
    nd = ti.ndarray(ti.i32, 10)
    with pytest.raises(TypeError, match='scans fields.*ndarray'):
        ti.algorithms.PrefixSumExecutor(10).run(nd)
    with pytest.raises(RuntimeError, match='positive'):
        ti.algorithms.PrefixSumExecutor(0)
    np.testing.assert_array_equal(f.to_numpy(), np.arange(10))
