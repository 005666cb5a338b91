"""Every snippet of ../shared/reference/taichi-differentiable-programming.md, with `import vkdiff
as ti`. Where Taichi documents a silently wrong gradient (the rule-breaking snippets), vkdiff
raises AutodiffError."""
import numpy as np
import pytest

import vkdiff as ti
from vulkan_precision import SIN_COS_ABS  # Vulkan's rule for kernel sin/cos: 2**-11 absolute


def test_tape_sin():
    x = ti.field(dtype=ti.f32, shape=(), needs_grad=True)
    y = ti.field(dtype=ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def compute_y():
        y[None] = ti.sin(x[None])

    x[None] = 0.7
    with ti.Tape(y):
        compute_y()
    assert x.grad[None] == pytest.approx(np.cos(0.7), rel=0, abs=SIN_COS_ABS)
    assert y[None] == pytest.approx(np.sin(0.7), rel=0, abs=SIN_COS_ABS)


def test_manual_gradient_kernel():
    x = ti.field(dtype=ti.f32, shape=())
    dy_dx = ti.field(dtype=ti.f32, shape=())

    @ti.kernel
    def compute_dy_dx():
        dy_dx[None] = ti.cos(x[None])

    x[None] = 0.3
    compute_dy_dx()
    assert dy_dx[None] == pytest.approx(np.cos(0.3), rel=0, abs=SIN_COS_ABS)


def test_gravity_gradient_matches_analytic():
    N = 8
    x = ti.Vector.field(2, dtype=ti.f32, shape=N, needs_grad=True)
    U = ti.field(dtype=ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def compute_U():
        for i, j in ti.ndrange(N, N):
            r = x[i] - x[j]
            U[None] += -1 / r.norm(1e-3)

    @ti.kernel
    def init():
        for i in x:
            x[i] = [ti.random(), ti.random()]

    init()
    with ti.Tape(loss=U):
        compute_U()
    xs = x.to_numpy().astype(np.float64)
    d = xs[:, None, :] - xs[None, :, :]
    r2 = (d ** 2).sum(-1) + 1e-3
    assert U[None] == pytest.approx(-(r2 ** -0.5).sum(), rel=1e-5)
    g = 2 * (d * r2[..., None] ** -1.5).sum(1)  # dU/dx_k = 2 sum_j (x_k - x_j)(|x_k-x_j|^2+eps)^-3/2
    np.testing.assert_allclose(x.grad.to_numpy(), g, rtol=1e-4, atol=1e-4 * np.abs(g).max())


def test_gravity_substep_runs_and_moves():
    N, dt = 8, 1e-5
    x = ti.Vector.field(2, dtype=ti.f32, shape=N, needs_grad=True)
    v = ti.Vector.field(2, dtype=ti.f32, shape=N)
    U = ti.field(dtype=ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def compute_U():
        for i, j in ti.ndrange(N, N):
            r = x[i] - x[j]
            U[None] += -1 / r.norm(1e-3)

    @ti.kernel
    def advance():
        for i in x:
            v[i] += dt * -x.grad[i]
        for i in x:
            x[i] += dt * v[i]

    @ti.kernel
    def init():
        for i in x:
            x[i] = [ti.random(), ti.random()]

    init()
    x0 = x.to_numpy().astype(np.float64)
    for _ in range(3):
        with ti.Tape(loss=U):
            compute_U()
        advance()
    # reference: the same three steps in numpy (f64)
    xr, vr = x0.copy(), np.zeros_like(x0)
    for _ in range(3):
        d = xr[:, None, :] - xr[None, :, :]
        r2 = (d ** 2).sum(-1) + 1e-3
        g = 2 * (d * r2[..., None] ** -1.5).sum(1)
        vr += dt * -g
        xr += dt * vr
    np.testing.assert_allclose(v.to_numpy(), vr, rtol=1e-3, atol=1e-6)
    np.testing.assert_allclose(x.to_numpy(), xr, rtol=0, atol=1e-6)


def test_kernel_grad_multiple_outputs():
    N = 16
    x = ti.field(dtype=ti.f32, shape=N, needs_grad=True)
    loss = ti.field(dtype=ti.f32, shape=(), needs_grad=True)
    loss2 = ti.field(dtype=ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def func():
        for i in x:
            loss[None] += x[i] ** 2
            loss2[None] += x[i]

    for i in range(N):
        x[i] = i
    loss.grad[None] = 1
    loss2.grad[None] = 1
    func()
    func.grad()
    for i in range(N):
        assert x.grad[i] == i * 2 + 1


def test_rule_1_is_an_error():
    N = 16
    x = ti.field(dtype=ti.f32, shape=N, needs_grad=True)
    loss = ti.field(dtype=ti.f32, shape=(), needs_grad=True)
    b = ti.field(dtype=ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def func_broke_rule_1():
        loss[None] = x[1] * b[None]
        b[None] += 100

    @ti.kernel
    def func_equivalent():
        loss[None] = x[1] * 10

    for i in range(N):
        x[i] = i
    b[None] = 10
    loss.grad[None] = 1
    with pytest.raises(ti.AutodiffError) as e:
        with ti.Tape(loss):
            func_broke_rule_1()
    assert 'rule 1' in str(e.value) and 'b[None] += 100' in str(e.value)
    with ti.Tape(loss):
        func_equivalent()
    assert x.grad[1] == 10.0


def test_rule_2_is_an_error():
    N = 16
    x = ti.field(dtype=ti.f32, shape=N, needs_grad=True)
    loss = ti.field(dtype=ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def func_break_rule_2():
        loss[None] += x[1] ** 2
        loss[None] *= x[2]

    @ti.kernel
    def func_equivalent():
        loss[None] = (2 + x[1] ** 2) * x[2]

    for i in range(N):
        x[i] = i
    loss.grad[None] = 1
    loss[None] = 2
    func_break_rule_2()  # forward alone is never rejected
    with pytest.raises(ti.AutodiffError) as e:
        func_break_rule_2.grad()
    assert 'rule' in str(e.value) and 'loss[None] *= x[2]' in str(e.value)
    func_equivalent()
    func_equivalent.grad()
    assert x.grad[1] == 4.0
    assert x.grad[2] == 3.0


def test_mixed_loops_and_statements_differentiate():
    """Taichi's Kernel Simplicity Rule is not a restriction in vkdiff."""
    x = ti.field(dtype=float, shape=10, needs_grad=True)
    loss = ti.field(dtype=float, shape=(), needs_grad=True)

    @ti.kernel
    def differentiable_task():
        loss[None] += x[0] * 3
        for i in range(10):
            loss[None] += x[i] ** 2

    x.from_numpy(np.arange(10, dtype=np.float32))
    with ti.Tape(loss):
        differentiable_task()
    expect = 2 * np.arange(10.0)
    expect[0] += 3
    np.testing.assert_allclose(x.grad.to_numpy(), expect)
    assert loss[None] == pytest.approx((np.arange(10.0) ** 2).sum())


def test_python_scope_code_is_not_differentiated():
    x = ti.field(dtype=float, shape=(), needs_grad=True)
    loss = ti.field(dtype=float, shape=(), needs_grad=True)

    @ti.kernel
    def differentiable_task():
        for l in range(3):
            loss[None] += ti.sin(x[None]) + 1.0

    @ti.kernel
    def manipulation_in_kernel():
        loss[None] += ti.sin(x[None]) + 1.0

    x[None] = 0.0
    with ti.Tape(loss=loss):
        loss[None] += ti.sin(x[None]) + 1.0
        manipulation_in_kernel()
        differentiable_task()
    assert loss[None] == 5.0
    assert x.grad[None] == 4.0
    x.grad[None] = 0.0
    assert x.grad[None] == 0.0


def test_grad_replaced_and_grad_for():
    x = ti.field(ti.f32)
    total = ti.field(ti.f32)
    n = 128
    ti.root.dense(ti.i, n).place(x)
    ti.root.place(total)
    ti.root.lazy_grad()

    @ti.kernel
    def func(mul: ti.f32):
        for i in range(n):
            ti.atomic_add(total[None], x[i] * mul)

    @ti.ad.grad_replaced
    def forward(mul):
        func(mul)
        func(mul)

    @ti.ad.grad_for(forward)
    def backward(mul):
        func.grad(mul)

    with ti.Tape(loss=total):
        forward(4)
    assert x.grad[0] == 4
    # and manual use, without a Tape
    x.grad.fill(0)
    total.grad[None] = 1
    forward.grad(3)
    assert x.grad[5] == 3


def test_tape_rejects_non_scalar_loss():
    x = ti.field(ti.f32, shape=4, needs_grad=True)
    with pytest.raises(ti.AutodiffError):
        ti.Tape(loss=x)


def test_tape_clears_gradients_between_tapes():
    x = ti.field(ti.f32, shape=4, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def f():
        for i in x:
            loss[None] += 3 * x[i]

    for _ in range(3):
        with ti.Tape(loss):
            f()
        np.testing.assert_array_equal(x.grad.to_numpy(), [3, 3, 3, 3])
