"""Arithmetic with a zero the compiler can see (issue 9 item 6): IEEE results as numpy gives them.

Lavapipe (Mesa 22.3) folds `x / 0.0` to 0 and `x * 0.0` to +0 when the zero is a constant in the
SPIR-V, even with the SignedZeroInfNanPreserve execution mode declared (a run-time zero from a
field gives inf / NaN); vkdiff's f64 atan2 relied on |y|/0 = inf. vkdiff now computes those
results itself (passes/float_zero.py) and f64 atan2 no longer divides by zero."""
import numpy as np
import pytest

import vkdiff as ti

Y = np.array([1.0, -2.0, 0.0, -0.0, np.inf, -np.inf, np.nan, 3.5])


@pytest.mark.parametrize('dt', [ti.f32, ti.f64])
def test_division_and_product_by_a_literal_zero(dt):
    n = len(Y)
    y = ti.field(dt, shape=n)
    o = ti.field(dt, shape=(n, 6))
    y.from_numpy(Y.astype(dt.np))

    @ti.kernel
    def k():
        for i in y:
            o[i, 0] = y[i] / 0.0
            o[i, 1] = y[i] / -0.0
            o[i, 2] = y[i] * 0.0
            o[i, 3] = -0.0 * y[i]
            t = 0.0
            o[i, 4] = y[i] / (t * t)
            o[i, 5] = y[i] * (t - t)
    k()
    got = o.to_numpy()
    yy = Y.astype(dt.np)
    with np.errstate(all='ignore'):
        want = np.stack([yy / dt.np.type(0.0), yy / dt.np.type(-0.0), yy * dt.np.type(0.0), dt.np.type(-0.0) * yy,
                         yy / dt.np.type(0.0), yy * dt.np.type(0.0)], axis=1)
    np.testing.assert_array_equal(got, want)                     # NaN == NaN here
    assert np.array_equal(np.signbit(got), np.signbit(want) & ~np.isnan(want) | np.signbit(got) & np.isnan(want))


@pytest.mark.parametrize('dt', [ti.f32, ti.f64])
def test_atan2_with_a_literal_zero_x(dt):
    ys = np.array([1.0, -2.0, 0.0, -0.0, np.inf, -np.inf, 1e-300 if dt is ti.f64 else 1e-30])
    y = ti.field(dt, shape=len(ys))
    o = ti.field(dt, shape=(len(ys), 2))
    y.from_numpy(ys.astype(dt.np))

    @ti.kernel
    def k():
        for i in y:
            o[i, 0] = ti.atan2(y[i], 0.0)
            o[i, 1] = ti.atan2(y[i], -0.0)
    k()
    got = o.to_numpy()
    yy = ys.astype(dt.np)
    want = np.stack([np.arctan2(yy, dt.np.type(0.0)), np.arctan2(yy, dt.np.type(-0.0))], axis=1)
    np.testing.assert_allclose(got, want, rtol=1e-6 if dt is ti.f32 else 1e-15, atol=0)
    assert np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize('dt', [ti.f32, ti.f64])
def test_infinity_minus_itself_is_nan(dt):
    """x - x, x * (x - x) for x = inf: NaN, not the fast-math 0. Needs the driver to keep inf
    and NaN: the SignedZeroInfNanPreserve execution mode, declared where the device offers it
    (lavapipe does; a native module built before it reports no such feature)."""
    from vkdiff.lang import state
    key = f'float_controls_preserve{dt.bits}'
    if not state.runtime().features.get(key):
        pytest.skip(f'the device (or this build of vkdiff.runtime._vkrt) reports no {key}')
    y = ti.field(dt, shape=3)
    o = ti.field(dt, shape=(3, 2))
    y.from_numpy(np.array([np.inf, -np.inf, 2.0]).astype(dt.np))

    @ti.kernel
    def k():
        for i in y:
            o[i, 0] = y[i] - y[i]
            o[i, 1] = ti.atan2(y[i], y[i] - y[i])
    k()
    got = o.to_numpy()
    assert np.isnan(got[:2, 0]).all() and got[2, 0] == 0.0
    assert np.isnan(got[:2, 1]).all() and got[2, 1] == pytest.approx(np.pi / 2)
    assert 'SignedZeroInfNanPreserve' in k.spirv()
