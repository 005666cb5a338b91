"""A Tape inside a FwdMode block and a FwdMode block inside a Tape: both give the gradient (Tape)
and the directional derivative (FwdMode) of the same launches (issue 9, item 4)."""
import numpy as np
import pytest

import vkdiff as ti

pytestmark = pytest.mark.requires('float64')  # every test here computes in f64


def _setup():
    ti.init(default_fp=ti.f64)
    x = ti.field(ti.f64, shape=3, needs_grad=True, needs_dual=True)
    y = ti.field(ti.f64, shape=3, needs_grad=True, needs_dual=True)
    L = ti.field(ti.f64, shape=(), needs_grad=True, needs_dual=True)

    @ti.kernel
    def square():
        for i in x:
            y[i] = x[i] * x[i]

    @ti.kernel
    def total(c: ti.f64):
        t = ti.sin(x[0])
        for i in y:
            L[None] += c * y[i] * t

    xs = np.array([0.3, -0.5, 0.7])
    x.from_numpy(xs)
    return x, L, square, total, xs


def _expected(xs, c=2.0):
    s, q = np.sin(xs[0]), np.sum(xs * xs)
    g = c * 2 * xs * s
    g[0] += c * q * np.cos(xs[0])
    return g


@pytest.mark.parametrize('tape_inside', [True, False])
def test_nested_tape_and_fwdmode(tape_inside):
    x, L, square, total, xs = _setup()
    seed = [0.2, 1.0, -0.4]
    if tape_inside:
        with ti.ad.FwdMode(loss=L, param=x, seed=seed):
            with ti.Tape(L):
                square()
                total(2.0)
    else:
        with ti.Tape(L):
            with ti.ad.FwdMode(loss=L, param=x, seed=seed):
                square()
                total(2.0)
    g = _expected(xs)
    np.testing.assert_allclose(x.grad.to_numpy(), g, rtol=1e-13)
    assert L.dual[None] == pytest.approx(g @ np.array(seed), rel=1e-13)
    assert L[None] == pytest.approx(2.0 * np.sin(xs[0]) * np.sum(xs * xs), rel=1e-14)


def test_fwdmode_inside_fwdmode_is_an_error():
    x, L, square, total, xs = _setup()
    with ti.ad.FwdMode(loss=L, param=x, seed=[1.0, 0, 0]):
        with pytest.raises(ti.VkdiffError, match='nested'):
            with ti.ad.FwdMode(loss=L, param=x, seed=[1.0, 0, 0]):
                pass


def test_fwdmode_exit_clears_the_seed_keeps_the_tangents():
    # Taichi's test_ad_for_fwd.py::test_ad_sum_fwd: the seed in param.dual is cleared on exit
    x, L, square, total, xs = _setup()
    with ti.ad.FwdMode(loss=L, param=x, seed=[1.0, 2.0, 3.0]):
        square()
        total(2.0)
    np.testing.assert_array_equal(x.dual.to_numpy(), 0)
    assert L.dual[None] == pytest.approx(_expected(xs) @ [1.0, 2.0, 3.0], rel=1e-13)


def test_hvp_still_uses_the_seed_after_fwdmode():
    x, L, square, total, xs = _setup()

    def run():
        square()
        total(2.0)

    v = np.array([0.5, -1.0, 2.0])
    hv = ti.ad.hvp(L, x, v, run)
    h = 1e-5
    def grad_at(p):
        x.from_numpy(p)
        with ti.Tape(L):
            run()
        return x.grad.to_numpy()
    fd = (grad_at(xs + h * v) - grad_at(xs - h * v)) / (2 * h)
    np.testing.assert_allclose(hv, fd, rtol=1e-7)
