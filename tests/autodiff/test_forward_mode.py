"""Forward mode (FwdMode, JVPs), custom derivative operations in both modes, Hessian-vector
products (forward-over-reverse), gradient checking and the tape's introspection."""
import numpy as np
import pytest

import vkdiff as ti

from shared_programs import GRAVITY_EPS, gravity, gravity_expected
from vulkan_precision import SIN_COS_ABS


def test_fwdmode_several_outputs_and_vector_fields():
    n = 6
    x = ti.Vector.field(2, ti.f64, shape=n, needs_dual=True)
    y = ti.Vector.field(2, ti.f64, shape=n, needs_dual=True)
    e = ti.field(ti.f64, shape=(), needs_dual=True)

    @ti.kernel
    def f():
        for i in x:
            r = x[i]
            y[i] = ti.Vector([ti.sin(r[0]) * r[1], r.norm()])
            e[None] += r.dot(r) * 0.5

    X = np.random.default_rng(0).uniform(0.2, 1.0, (n, 2))
    x.from_numpy(X)
    seed = np.random.default_rng(1).standard_normal((n, 2))
    with ti.ad.FwdMode(loss=[y, e], param=x, seed=list(seed.ravel())):
        f()
    dy0 = np.cos(X[:, 0]) * X[:, 1] * seed[:, 0] + np.sin(X[:, 0]) * seed[:, 1]
    dy1 = (X * seed).sum(1) / np.linalg.norm(X, axis=1)
    np.testing.assert_allclose(y.dual.to_numpy(), np.stack([dy0, dy1], 1), rtol=1e-12)
    assert e.dual[None] == pytest.approx((X * seed).sum(), rel=1e-12)
    np.testing.assert_allclose(y.to_numpy()[:, 1], np.linalg.norm(X, axis=1), rtol=1e-12)


def test_fwdmode_scalar_param_needs_no_seed():
    x = ti.field(ti.f32, shape=(), needs_dual=True)
    y = ti.field(ti.f32, shape=(), needs_dual=True)

    @ti.kernel
    def f():
        y[None] = ti.exp(x[None]) * 3

    x[None] = 0.5
    with ti.ad.FwdMode(loss=y, param=x):
        f()
    assert y.dual[None] == pytest.approx(3 * np.exp(0.5), rel=1e-6)


def test_fwdmode_seed_size_checked():
    x = ti.field(ti.f32, shape=3, needs_dual=True)
    y = ti.field(ti.f32, shape=(), needs_dual=True)
    with pytest.raises(ti.AutodiffError):
        ti.ad.FwdMode(loss=y, param=x)
    with pytest.raises(ti.AutodiffError):
        ti.ad.FwdMode(loss=y, param=x, seed=[1, 2])


def test_custom_op_in_both_modes():
    """A normalisation written as two kernels, with hand-written VJP and JVP."""
    n = 5
    x = ti.field(ti.f64, shape=n, needs_grad=True, needs_dual=True)
    y = ti.field(ti.f64, shape=n, needs_grad=True, needs_dual=True)
    s = ti.field(ti.f64, shape=(), needs_grad=True, needs_dual=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True, needs_dual=True)
    w = np.arange(1.0, n + 1)

    @ti.kernel
    def sumsq():
        for i in x:
            s[None] += x[i] ** 2

    @ti.kernel
    def scale():
        for i in x:
            y[i] = x[i] / ti.sqrt(s[None])

    @ti.ad.grad_replaced
    def normalize():
        s[None] = 0
        sumsq()
        scale()

    @ti.ad.grad_for(normalize)
    def normalize_vjp():
        # dL/dx = (g - y (y.g)) / |x|
        ys, g, nrm = y.to_numpy(), y.grad.to_numpy(), np.sqrt(s[None])
        x.grad.from_numpy(x.grad.to_numpy() + (g - ys * (ys @ g)) / nrm)

    @ti.ad.jvp_for(normalize)
    def normalize_jvp():
        ys, dx, nrm = y.to_numpy(), x.dual.to_numpy(), np.sqrt(s[None])
        y.dual.from_numpy((dx - ys * (ys @ dx)) / nrm)

    @ti.kernel
    def weigh():
        for i in y:
            loss[None] += y[i] * (i + 1)

    X = np.array([0.3, -1.2, 0.8, 2.0, -0.4])
    x.from_numpy(X)
    with ti.Tape(loss):
        normalize()
        weigh()
    g = x.grad.to_numpy()
    nx = np.linalg.norm(X)
    expect = (w - X / nx * (X / nx @ w)) / nx
    np.testing.assert_allclose(g, expect, rtol=1e-10)
    seed = np.random.default_rng(0).standard_normal(n)
    loss[None] = 0
    with ti.ad.FwdMode(loss=loss, param=x, seed=list(seed)):
        normalize()
        weigh()
    assert loss.dual[None] == pytest.approx(g @ seed, rel=1e-10)


def _hessian_ref(xs, eps=GRAVITY_EPS):
    """Analytic Hessian of U = -sum_{i,j} (|x_i-x_j|^2+eps)^-1/2 (both orders of each pair)."""
    n = len(xs)
    H = np.zeros((n, 2, n, 2))
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            d = xs[i] - xs[j]
            r2 = d @ d + eps
            # block of d/dx_i d/dx_i of 2*(-(r2)^-1/2) (pair counted twice)
            blk = 2 * (np.eye(2) * r2 ** -1.5 - 3 * np.outer(d, d) * r2 ** -2.5)
            H[i, :, i, :] += blk
            H[i, :, j, :] -= blk
    return H.reshape(2 * n, 2 * n)


def test_hvp_gravity_against_analytic_hessian_and_fd():
    N = 7
    x, U, compute_U = gravity(N, ti.f64)
    rng = np.random.default_rng(5)
    X = rng.random((N, 2))
    x.from_numpy(X)
    v = rng.standard_normal((N, 2))
    hv = ti.ad.hvp(U, x, v, compute_U)
    H = _hessian_ref(X)
    np.testing.assert_allclose(hv.ravel(), H @ v.ravel(), rtol=1e-9, atol=1e-9 * np.abs(H).max())
    h = 1e-6
    fd = (gravity_expected(X + h * v)[1] - gravity_expected(X - h * v)[1]) / (2 * h)
    np.testing.assert_allclose(hv, fd, rtol=1e-5, atol=1e-6 * np.abs(fd).max())
    # the gradient comes as a by-product
    np.testing.assert_allclose(x.grad.to_numpy(), gravity_expected(X)[1], rtol=1e-12)


def test_gradcheck_in_f32_and_f64():
    for dt in (ti.f32, ti.f64):
        x = ti.field(dt, shape=8, needs_grad=True)
        y = ti.field(dt, shape=8, needs_grad=True)
        loss = ti.field(dt, shape=(), needs_grad=True)

        @ti.kernel
        def f1():
            for i in x:
                y[i] = ti.sin(x[i]) * ti.exp(x[i] * 0.3)

        @ti.kernel
        def f2():
            for i in y:
                loss[None] += y[i] ** 2

        x.from_numpy(np.linspace(0, 1, 8).astype(dt.np))

        def fn():
            f1()
            f2()
        err = ti.ad.gradcheck(loss, [x], fn)
        assert err < (1e-5 if dt is ti.f32 else 1e-12)
        if dt is ti.f64:
            assert ti.ad.gradcheck(loss, [x], fn, mode='fd', eps=1e-6) < 1e-7


def test_gradcheck_catches_a_wrong_custom_gradient():
    x = ti.field(ti.f64, shape=4, needs_grad=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def f():
        for i in x:
            loss[None] += x[i] ** 3

    @ti.ad.grad_replaced
    def op():
        f()

    @ti.ad.grad_for(op)
    def op_grad():  # wrong on purpose: 2x^2 instead of 3x^2
        x.grad.from_numpy(2 * x.to_numpy() ** 2)

    x.from_numpy(np.array([0.5, 1.0, 1.5, 2.0]))
    assert ti.ad.gradcheck(loss, [x], op, mode='fd', eps=1e-6) > 0.1


def test_tape_text_and_dot():
    x = ti.field(ti.f32, shape=4, needs_grad=True)
    y = ti.field(ti.f32, shape=4, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def k1():
        for i in x:
            y[i] = x[i] * 2

    @ti.kernel
    def k2():
        for i in y:
            loss[None] += y[i]

    with ti.Tape(loss) as tape:
        k1()
        k2()
    text = str(tape)
    assert '#0 k1(): reads {x}; writes {y}' in text
    assert 'adjoint order: k2.grad -> k1.grad' in text
    dot = tape.to_dot()
    assert dot.startswith('digraph tape {') and 'k1 -> k0' in dot and '"x"' in dot
    np.testing.assert_array_equal(x.grad.to_numpy(), [2, 2, 2, 2])


def test_tape_grad_check_option():
    x = ti.field(ti.f32, shape=4, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def k():
        for i in x:
            loss[None] += ti.sin(x[i])

    x.from_numpy(np.array([0.1, 0.2, 0.3, 0.4], np.float32))
    with ti.Tape(loss, grad_check=[x]) as tape:
        k()
    assert tape.grad_check_error < 1e-5
    # the kernel's cos: Vulkan's 2**-11 absolute (SwiftShader 1.9e-4 off, lavapipe ~1e-7)
    np.testing.assert_allclose(x.grad.to_numpy(), np.cos([0.1, 0.2, 0.3, 0.4]), rtol=0,
                               atol=SIN_COS_ABS)


def test_adjoint_ir_and_spirv_are_printable():
    x = ti.field(ti.f32, shape=4, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def k():
        for i in x:
            loss[None] += ti.sin(x[i])

    assert 'sin' in k.ir() and 'parfor' in k.ir()
    assert 'cos' in k.grad.ir() and 'x.grad' in k.grad.ir()
    assert 'OpEntryPoint GLCompute' in k.grad.spirv()
