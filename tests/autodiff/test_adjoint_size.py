"""Adjoint size (issue 13, the robot's first iteration): adjoints kept as SSA values where the
control flow allows (autodiff/reverse.py), variables only where a contribution comes from a
nested block. The gradients are checked against f64 central differences, and against the same
kernels with every adjoint a variable (VKDIFF_AD_SSA=0's path): equal to the last bit."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.autodiff import reverse
from vulkan_precision import SIN_COS_ABS


def _allocas(text):
    return sum(' = alloca(' in line for line in text.splitlines())


def _fd(run, field, h=1e-6):
    base = field.to_numpy().copy()
    out = np.zeros_like(base)
    for i in np.ndindex(base.shape):
        d = np.zeros_like(base)
        d[i] = h
        field.from_numpy(base + d)
        up = run()
        field.from_numpy(base - d)
        out[i] = (up - run()) / (2 * h)
    field.from_numpy(base)
    return out


def _program(dtype):
    """A small network layer (straight-line unrolled sums into a local), a value used inside a
    branch and inside a serial loop (those adjoints need variables), a prologue value."""
    n, m = 4, 5
    w = ti.field(dtype, shape=(n, m), needs_grad=True)
    x = ti.field(dtype, shape=m, needs_grad=True)
    h = ti.field(dtype, shape=n, needs_grad=True)
    L = ti.field(dtype, shape=(), needs_grad=True)

    @ti.kernel
    def layer():
        s0 = ti.sin(x[0])  # prologue: read by every iteration
        for i in range(n):
            a = 0.0
            for j in ti.static(range(m)):
                a += w[i, j] * x[j] * 0.5
            a += s0
            b = ti.tanh(a)
            if x[1] > 0:
                b = b * a + x[2]
            c = 0.0
            for k in range(3):
                c += b * x[k] + a
            h[i] = c

    @ti.kernel
    def loss():
        for i in range(n):
            L[None] += h[i] * h[i]

    def run():
        L.fill(0)
        layer()
        loss()
        return L[None]

    rng = np.random.default_rng(1)
    w.from_numpy(rng.standard_normal((n, m)).astype(w.to_numpy().dtype) * 0.5)
    x.from_numpy(np.array([0.3, 0.4, -0.2, 0.7, 0.1]).astype(x.to_numpy().dtype))
    return layer, run, (w, x), L


def _grads(dtype):
    layer, run, params, L = _program(dtype)
    with ti.Tape(L):
        run()
    return layer, run, params, [p.grad.to_numpy().copy() for p in params]


def test_ssa_adjoint_gradients_match_finite_differences():
    ti.init(default_fp=ti.f64)
    layer, run, params, grads = _grads(ti.f64)
    for p, g in zip(params, grads):
        np.testing.assert_allclose(g, _fd(run, p), rtol=1e-7, atol=1e-9, err_msg=p.name)
    # primal locals a, b, c plus the adjoints of the values read inside the branch and the
    # serial loop; none for the ~40 straight-line values
    text = layer.grad.ir(after='adjoint')
    assert _allocas(text) <= 10, text


@pytest.mark.parametrize('dtype', ['f32', 'f64'])
def test_ssa_adjoint_equals_variable_adjoint(monkeypatch, dtype):
    dt = getattr(ti, dtype)
    ti.init(default_fp=dt)
    _, _, _, ssa = _grads(dt)
    ti.init(default_fp=dt)
    monkeypatch.setattr(reverse, 'SSA', False)
    layer, _, _, var = _grads(dt)
    assert _allocas(layer.grad.ir(after='adjoint')) > 40
    for a, b in zip(ssa, var):
        np.testing.assert_array_equal(a, b)


def test_straight_line_adjoint_has_no_variables():
    ti.init(default_fp=ti.f32)
    x = ti.field(ti.f32, shape=8, needs_grad=True)
    y = ti.field(ti.f32, shape=8, needs_grad=True)

    @ti.kernel
    def k():
        for i in range(8):
            a = x[i] * x[i]
            a += ti.sin(x[i]) * 2.0
            y[i] = a * ti.exp(-a)

    x.from_numpy(np.linspace(-1, 1, 8).astype(np.float32))
    k()
    y.grad.fill(1.0)
    k.grad()
    assert _allocas(k.grad.ir(after='adjoint')) == 1  # the primal local `a` only
    xs = x.to_numpy().astype(np.float64)
    a = xs * xs + 2 * np.sin(xs)
    da = 2 * xs + 2 * np.cos(xs)
    g = np.exp(-a) * (1 - a) * da
    # Vulkan's f32 sin/cos may be 2**-11 off (x in [-1, 1]): a and da carry 2 * 2**-11, which
    # moves g by |dg/da| and |dg/d(da)| times that; exp's 3 + 2|a| ulp and f32 round-off: 2e-5
    e = 2 * SIN_COS_ABS
    tol = (np.abs(np.exp(-a) * (a - 2) * da) + np.abs(np.exp(-a) * (1 - a))) * e + 2e-5 * np.abs(g)
    assert np.all(np.abs(x.grad.to_numpy() - g) <= tol), (x.grad.to_numpy(), g)


def _gravity(n):
    x = ti.Vector.field(2, dtype=ti.f64, shape=n, needs_grad=True)
    U = ti.field(dtype=ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def compute_U():
        for i, j in ti.ndrange(n, n):
            r = x[i] - x[j]
            U[None] += -1 / r.norm(1e-3)

    x.from_numpy(np.random.default_rng(1).random((n, 2)))
    with ti.Tape(U):
        compute_U()
    xs = x.to_numpy()
    r = xs[:, None, :] - xs[None, :, :]
    d = np.sqrt((r * r).sum(-1) + 1e-3)
    # dU/dx_i: the pair (i, j) contributes r/d^3 to x_i and -r/d^3 to x_j
    f = r / d[..., None] ** 3
    np.testing.assert_allclose(x.grad.to_numpy(), f.sum(1) - f.sum(0), rtol=1e-10, atol=1e-12)
    return compute_U.grad.ir(after='reductions').count('\ntask ') + 1


def test_small_loop_adjoint_is_not_transposed_into_a_second_task():
    """x.grad[j] in an (i, j) loop: the transposed copy of the reduction pass pays on long
    loops (no contended atomics) but doubles the code and the launches of a short one, which
    runs as one workgroup anyway (gravity at N=8: 64 iterations)."""
    ti.init(default_fp=ti.f64)
    assert _gravity(8) == 1
    ti.init(default_fp=ti.f64)
    assert _gravity(64) >= 2  # 4096 iterations: split, x.grad[j] walked j-major
