"""Reverse mode when a value flows from one task of a kernel to a later one: a top-level value
recomputed in a parallel loop's prologue, a local promoted to a 0-D temporary, vectors and
matrices, several of them, chains of them. Every gradient is checked against f64 central
differences of the same kernel (issue 9, item 1)."""
import numpy as np
import pytest

import vkdiff as ti

pytestmark = pytest.mark.requires('float64')  # every test here computes in f64


def _check(kernel, loss, params, outputs=(), h=1e-6, rtol=1e-7):
    """Tape gradients of `loss` w.r.t. every field in `params` vs central differences."""
    def run():
        for f in (loss, *outputs):
            f.fill(0)
        kernel()
        return loss[None]

    with ti.Tape(loss):
        for f in outputs:
            f.fill(0)
        kernel()
    grads = [p.grad.to_numpy().copy() for p in params]
    for p, g in zip(params, grads):
        base = p.to_numpy().copy()
        fd = np.zeros_like(base)
        for i in np.ndindex(base.shape):
            d = np.zeros_like(base)
            d[i] = h
            p.from_numpy(base + d)
            up = run()
            p.from_numpy(base - d)
            fd[i] = (up - run()) / (2 * h)
        p.from_numpy(base)
        np.testing.assert_allclose(g, fd, rtol=rtol, atol=1e-8, err_msg=p.name)
    return grads


@pytest.fixture
def f64():
    ti.init(default_fp=ti.f64)


def test_top_level_value_read_by_loop(f64):
    x = ti.field(ti.f64, shape=3, needs_grad=True)
    L = ti.field(ti.f64, (), needs_grad=True)

    @ti.kernel
    def k():
        t = ti.sin(x[0])
        for i in x:
            L[None] += x[i] * t

    x.from_numpy(np.array([0.3, 0.5, 0.7]))
    g, = _check(k, L, [x])
    xs = x.to_numpy()
    np.testing.assert_allclose(g, [np.sin(.3) + np.cos(.3) * xs.sum(), np.sin(.3), np.sin(.3)])


def test_top_level_field_read_by_loop(f64):
    x = ti.field(ti.f64, shape=3, needs_grad=True)
    s = ti.field(ti.f64, (), needs_grad=True)
    L = ti.field(ti.f64, (), needs_grad=True)

    @ti.kernel
    def k():
        t = s[None]
        for i in x:
            L[None] += x[i] * t

    x.from_numpy(np.array([0.3, 0.5, 0.7]))
    s[None] = 1.25
    _check(k, L, [x, s])
    assert s.grad[None] == pytest.approx(1.5, rel=1e-14)


def test_vector_and_matrix_values_shared_with_two_loops(f64):
    x = ti.Vector.field(2, ti.f64, shape=4, needs_grad=True)
    a = ti.Matrix.field(2, 2, ti.f64, shape=(), needs_grad=True)
    y = ti.field(ti.f64, shape=4, needs_grad=True)
    L = ti.field(ti.f64, (), needs_grad=True)

    @ti.kernel
    def k():
        m = a[None] @ a[None].transpose()
        v = ti.Vector([ti.sin(a[None][0, 1]), ti.exp(a[None][1, 0] * 0.5)])
        for i in x:
            y[i] = (m @ x[i]).dot(v)
        w = v * y[1]          # a serial task between the loops
        for i in x:
            L[None] += y[i] * w.dot(x[i]) + ti.cos(m[1, 1] * x[i][0])

    rng = np.random.default_rng(1)
    x.from_numpy(rng.uniform(-1, 1, (4, 2)))
    a.from_numpy(rng.uniform(-1, 1, (2, 2)))
    _check(k, L, [x, a], outputs=[y])


def test_chain_of_temporaries(f64):
    x = ti.field(ti.f64, shape=5, needs_grad=True)
    y = ti.field(ti.f64, shape=5, needs_grad=True)
    L = ti.field(ti.f64, (), needs_grad=True)

    @ti.kernel
    def k():
        t1 = ti.sin(x[0]) * x[1]
        t2 = 0.0
        for i in x:
            y[i] = x[i] * t1
        for j in range(2):        # serial top-level work between the loops
            t2 += y[j] * y[j + 1]
        t3 = t2 * t1
        for i in x:
            L[None] += y[i] * t3 + t2 * x[i]

    x.from_numpy(np.array([0.3, -0.5, 0.7, 1.1, 0.2]))
    _check(k, L, [x], outputs=[y])


def test_accumulated_local_read_by_later_loop(f64):
    x = ti.field(ti.f64, shape=4, needs_grad=True)
    L = ti.field(ti.f64, (), needs_grad=True)

    @ti.kernel
    def k():
        t = 0.0
        for j in x:
            t += x[j] * x[j]
        u = ti.sqrt(t)
        for i in x:
            L[None] += x[i] / u

    x.from_numpy(np.array([0.3, -0.5, 0.7, 1.1]))
    g, = _check(k, L, [x])
    xs = x.to_numpy()
    n = np.linalg.norm(xs)
    np.testing.assert_allclose(g, 1 / n - xs.sum() * xs / n ** 3, rtol=1e-12)


def test_shared_value_used_in_inner_loop(f64):
    x = ti.field(ti.f64, shape=3, needs_grad=True)
    s = ti.field(ti.f64, (), needs_grad=True)
    L = ti.field(ti.f64, (), needs_grad=True)

    @ti.kernel
    def k():
        t = s[None] * s[None]
        for i in x:
            acc = 0.0
            for j in range(3):
                acc += ti.sin(t * x[i] + j)
            L[None] += acc

    x.from_numpy(np.array([0.3, -0.5, 0.7]))
    s[None] = 0.8
    _check(k, L, [x, s])
