"""f32 atan2, asin, acos and tanh give numpy's values at signed zeros, infinities and NaN on every
driver (codegen/f32fix.py). SwiftShader's GLSL.std.450 Atan2 gives atan2(-0, 1) = pi (so asin(-0)
was pi) and atan2(inf, NaN) = pi/4, and its Tanh is NaN for |x| > 44 (inf / inf); lavapipe's are
right there."""
import warnings

import numpy as np

import vkdiff as ti

SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, 30.0, 1e30, -1e30],
                   np.float32)


def _same(got, want):
    """NaN where NaN, zeros with their sign, the rest within Vulkan's 4096 ulp for atan
    (GLSL.std.450 Atan2; asin and acos are computed from it)."""
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), (got, want)
    g, w = got[~nan], want[~nan]
    np.testing.assert_allclose(g, w, rtol=4096 * 2.0 ** -23, atol=0)
    assert np.array_equal(np.signbit(g[w == 0]), np.signbit(w[w == 0])), (got, want)


def test_atan2_at_signed_zeros_infinities_and_nan():
    y, x = (a.ravel() for a in np.meshgrid(SPECIAL, SPECIAL))
    a, b, r = (ti.field(ti.f32, shape=len(x)) for _ in range(3))
    a.from_numpy(y)
    b.from_numpy(x)

    @ti.kernel
    def k():
        for i in a:
            r[i] = ti.atan2(a[i], b[i])

    k()
    _same(r.to_numpy(), np.arctan2(y, x))


def test_asin_acos_tanh_at_special_values():
    x, s, c, t = (ti.field(ti.f32, shape=len(SPECIAL)) for _ in range(4))
    x.from_numpy(SPECIAL)

    @ti.kernel
    def k():
        for i in x:
            s[i] = ti.asin(x[i])
            c[i] = ti.acos(x[i])
            t[i] = ti.tanh(x[i])

    k()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        _same(s.to_numpy(), np.arcsin(SPECIAL))
        _same(c.to_numpy(), np.arccos(SPECIAL))
    _same(t.to_numpy(), np.tanh(SPECIAL))
