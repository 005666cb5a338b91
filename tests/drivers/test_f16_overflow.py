"""f16 values (computed in f32 registers, rounded through GLSL.std.450 PackHalf2x16) round as
numpy's astype(float16) on every driver, overflow included: |x| >= 65520 is +-inf. SwiftShader's
PackHalf2x16 packs those (and f32 infinities) as NaN; lavapipe packs them as inf."""
import numpy as np

import vkdiff as ti


def _values():
    rng = np.random.default_rng(0)
    edges = np.array([0.0, -0.0, 1.0, 1 / 3, 2049, 2051, 65504, 65519, 65519.996, 65520, 65536,
                      1e5, 1e30, np.inf, -np.inf, -65504, -65520, -7e4, 6e-8, 2.98e-8, 1e-10,
                      6.1e-5, 3e-5], np.float32)
    return np.concatenate([edges, rng.uniform(-7e4, 7e4, 500).astype(np.float32),
                           (rng.standard_normal(500) * 1e-5).astype(np.float32)])


def _same(got, want):
    got, want = got.astype(np.float16), want.astype(np.float16)
    same = (got.view(np.uint16) == want.view(np.uint16)) | (np.isnan(got) & np.isnan(want))
    return np.flatnonzero(~same)


def test_f16_conversions_round_like_numpy_overflow_included():
    vals = _values()
    n = len(vals)
    src, dst = ti.field(ti.f32, shape=n), ti.field(ti.f16, shape=n)
    back = ti.field(ti.f32, shape=n)
    src.from_numpy(vals)

    @ti.kernel
    def k():
        for i in src:
            dst[i] = ti.cast(src[i], ti.f16)  # packed into the field's words
        for i in src:
            back[i] = ti.cast(ti.cast(src[i], ti.f16), ti.f32)  # rounded in a register

    k()
    with np.errstate(over='ignore'):
        want = vals.astype(np.float16)
    bad = _same(dst.to_numpy(), want)
    assert not len(bad), list(zip(vals[bad][:5], dst.to_numpy()[bad][:5]))
    bad = _same(back.to_numpy(), want)
    assert not len(bad), list(zip(vals[bad][:5], back.to_numpy()[bad][:5]))


def test_f16_arithmetic_overflows_to_signed_infinity():
    x, y = ti.field(ti.f16, shape=4), ti.field(ti.f16, shape=4)
    x.from_numpy(np.array([300, -300, 60000, np.inf], np.float16))

    @ti.kernel
    def k():
        for i in x:
            y[i] = x[i] * x[i] * ti.select(i == 1, -1.0, 1.0)

    k()
    with np.errstate(over='ignore'):
        want = np.array([300 * 300, -300 * 300, 60000 * 60000.0, np.inf], np.float32).astype(np.float16)
    np.testing.assert_array_equal(y.to_numpy(), want)
    np.testing.assert_array_equal(want, [np.inf, -np.inf, np.inf, np.inf])


def test_f16_nan_store_leaves_the_neighbour_in_its_word_intact():
    """SwiftShader's PackHalf2x16 of a NaN sets bits above the low 16 (0x0002_7FFF): stored into
    the low half of a packed word, a NaN changed the element beside it (1.0 became 1.002), and
    parallel_sort of f16 keys with a NaN corrupted other keys."""
    x = ti.field(ti.f16, shape=8)
    x.from_numpy(np.array([0, 1, 0, -2, 0, 3, 0, 4], np.float16))

    @ti.kernel
    def k(v: ti.f32):
        for i in range(4):
            x[2 * i] = v * ti.select(i % 2 == 0, 1.0, -1.0)

    k(float('nan'))
    got = x.to_numpy()
    assert np.isnan(got[0::2]).all(), got
    np.testing.assert_array_equal(got[1::2].view(np.uint16),
                                  np.array([1, -2, 3, 4], np.float16).view(np.uint16))
    k(float('inf'))
    np.testing.assert_array_equal(x.to_numpy(), np.array([np.inf, 1, -np.inf, -2, np.inf, 3,
                                                          -np.inf, 4], np.float16))


def test_f16_sort_with_nan_keys_keeps_the_other_keys():
    a = np.array([-5, 3, np.nan, -0.0, 2, 1, -4, 0] * 5, np.float16)
    k = ti.field(ti.f16, shape=len(a))
    k.from_numpy(a)
    ti.algorithms.parallel_sort(k)
    want = np.sort(a, kind='stable')
    got = k.to_numpy()
    assert np.array_equal(got, want, equal_nan=True), (got, want)
