"""ti.log2 and ti.expm1 (also ti.math.expm1): ops of vkdiff's own namespace, numpy's names (Taichi
1.7.4 has neither as an op; its ti.math.log2 is the formula log(x) / log(2), kept bit for bit).
Values against numpy in f32 and f64, derivatives against the analytic ones in both AD modes."""
import math

import numpy as np
import pytest

import vkdiff as ti
import vkdiff.math as tm

LOG2_X = np.array([1e-30, 1e-6, 0.01, 0.3, 0.999, 1.0, 1.001, 1.5, 2.0, 8.0, 1000.0, 3e7])
EXPM1_X = np.array([-20.0, -3.0, -0.5, -0.26, -0.2, -1e-3, -1e-7, 0.0, 1e-7, 1e-4, 0.1, 0.24,
                    0.26, 1.0, 5.0, 20.0])
# f32: a few ulp; near x = 1 log2 (GLSL Log2, like log) is good to ~1e-8 absolute, not relative;
# expm1 is exp(x) - 1 above |x| = 0.25 (a few bits lost), a polynomial below
TOL = {'f32': dict(rtol=2e-6, atol=2e-7), 'f64': dict(rtol=4e-16, atol=0.0)}


def _run(fn, xs, dtype):
    n = len(xs)
    x = ti.field(dtype, shape=n)
    y = ti.field(dtype, shape=n)

    @ti.kernel
    def k():
        for i in x:
            y[i] = fn(x[i])
    x.from_numpy(xs.astype(dtype.np))
    k()
    return x.to_numpy(), y.to_numpy()


@pytest.mark.parametrize('dtype', ['f32', 'f64'])
@pytest.mark.parametrize('name,xs', [('log2', LOG2_X), ('expm1', EXPM1_X)])
def test_values_match_numpy(name, xs, dtype):
    if dtype == 'f32':
        xs = xs[np.abs(xs) < 3e38]
    x, y = _run(getattr(ti, name), xs, getattr(ti, dtype))
    want = getattr(np, name)(x.astype(np.float64))
    np.testing.assert_allclose(y.astype(np.float64), want, **TOL[dtype], err_msg=f'{name} {dtype}')


def test_f64_log2_is_exact_at_powers_of_two_and_special_values():
    xs = np.array([2.0 ** k for k in range(-1074, 1024, 97)] + [0.0, -0.0, -1.0, np.inf, np.nan])
    _, y = _run(ti.log2, xs, ti.f64)
    with np.errstate(divide='ignore', invalid='ignore'):
        want = np.log2(xs)
    np.testing.assert_array_equal(y, want)


def test_f64_expm1_special_values_and_tiny_arguments():
    xs = np.array([0.0, -0.0, 5e-324, -1e-300, 1e-17, -60.5, -800.0, -np.inf, 60.5, 709.0, 710.0,
                   np.inf, np.nan])
    _, y = _run(ti.expm1, xs, ti.f64)
    with np.errstate(over='ignore'):
        want = np.expm1(xs)
    np.testing.assert_allclose(y, want, rtol=4e-16, atol=0)
    assert np.signbit(y[1]) and not np.signbit(y[0])      # expm1(-0) = -0


@pytest.mark.parametrize('dtype', ['f32', 'f64'])
def test_reverse_and_forward_derivatives(dtype):
    dt = getattr(ti, dtype)
    xs = np.array([0.05, 0.3, 0.9, 1.7, 4.0])
    n = len(xs)
    x = ti.field(dt, shape=n, needs_grad=True, needs_dual=True)
    loss = ti.field(dt, shape=(), needs_grad=True, needs_dual=True)

    @ti.kernel
    def k():
        for i in x:
            loss[None] += 2.0 * ti.log2(x[i]) + ti.expm1(-x[i] * x[i])

    x.from_numpy(xs)
    with ti.ad.Tape(loss):
        k()
    xv = x.to_numpy().astype(np.float64)
    want = 2.0 / (xv * math.log(2.0)) - 2.0 * xv * np.exp(-xv * xv)
    rtol = 1e-5 if dtype == 'f32' else 1e-13
    np.testing.assert_allclose(x.grad.to_numpy(), want, rtol=rtol)
    seed = [0.5, -1.0, 2.0, 0.25, 1.0]
    with ti.ad.FwdMode(loss=loss, param=x, seed=seed):
        k()
    np.testing.assert_allclose(loss.dual[None], np.dot(seed, want), rtol=rtol)


def test_python_scope_and_integer_arguments():
    assert ti.log2(8.0) == 3.0 and ti.log2(8) == 3.0
    assert ti.expm1(1e-10) == np.expm1(1e-10) and tm.expm1(1e-10) == np.expm1(1e-10)
    v = tm.expm1(ti.Vector([0.0, 1.0]))
    assert v.to_list() == [0.0, float(np.expm1(1.0))]
    # Taichi's ti.math.log2 stays its formula, operation for operation
    assert tm.log2(10.0) == math.log(10.0) / math.log(2.0)
    y = ti.field(ti.f32, shape=2)

    @ti.kernel
    def k(n: ti.i32):
        y[0] = ti.log2(n)
        y[1] = ti.expm1(n - n)
    k(1024)
    assert y.to_numpy().tolist() == [10.0, 0.0]
