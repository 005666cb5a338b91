"""Reverse mode when a field element is overwritten: the adjoint of a plain store takes the
element's gradient and clears it (the earlier value is dead), as Taichi's does; accumulations
(`+=`) after a store keep adding (issue 9, item 2)."""
import numpy as np
import pytest

import vkdiff as ti


def test_loss_overwritten_by_three_kernels():
    # Taichi's test_ad_basics.py::test_ad_set_loss_grad
    x = ti.field(ti.f32, shape=(), needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def set_to(c: ti.f32):
        loss[None] = c * x[None]

    x[None] = 1.0
    with ti.Tape(loss):
        set_to(1.0)
        set_to(2.0)
        set_to(4.0)
    assert loss[None] == 4
    assert x.grad[None] == 4


@pytest.mark.requires('float64')
def test_store_chain_leaves_intermediate_gradients_zero():
    # Taichi's test_ad_basics.py::test_ad_global_store_forwarding
    x, a, b, e = (ti.field(ti.f64, shape=(), needs_grad=True) for _ in range(4))

    @ti.kernel
    def f():
        a[None] = x[None]
        b[None] = a[None] * 2
        e[None] = b[None] * 5

    x[None] = 1.0
    with ti.Tape(e):
        f()
    assert x.grad[None] == 10.0
    assert a.grad[None] == 0.0 and b.grad[None] == 0.0


@pytest.mark.requires('float64')
def test_reset_kernel_kills_the_earlier_values_gradient():
    n = 4
    x = ti.field(ti.f64, shape=n, needs_grad=True)
    y = ti.field(ti.f64, shape=n, needs_grad=True)
    L = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def copy():
        for i in x:
            y[i] = x[i] * x[i]

    @ti.kernel
    def reset_odd():
        for i in y:
            if i % 2 == 1:
                y[i] = 0.5

    @ti.kernel
    def total():
        for i in y:
            L[None] += y[i] * (i + 1)

    xs = np.array([0.5, -1.0, 2.0, 3.0])
    x.from_numpy(xs)
    with ti.Tape(L):
        copy()
        reset_odd()
        total()
    expect = 2 * xs * np.arange(1, n + 1) * (np.arange(n) % 2 == 0)
    np.testing.assert_allclose(x.grad.to_numpy(), expect, rtol=1e-14)
    # every element of y was stored inside the Tape: its gradient went on to x (as in Taichi)
    np.testing.assert_array_equal(y.grad.to_numpy(), 0)


@pytest.mark.requires('float64')
def test_store_then_accumulate_in_one_kernel_and_across_kernels():
    x = ti.field(ti.f64, shape=3, needs_grad=True)
    y = ti.field(ti.f64, shape=3, needs_grad=True)
    L = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def first():
        for i in x:
            y[i] = x[i] * 3
            y[i] += x[i] * x[i]

    @ti.kernel
    def more():
        for i in x:
            y[i] += ti.sin(x[i])

    @ti.kernel
    def total():
        L[None] = y[0] + 2 * y[1] + 3 * y[2]

    xs = np.array([0.3, -0.4, 1.2])
    x.from_numpy(xs)
    with ti.Tape(L):
        first()
        more()
        total()
    np.testing.assert_allclose(x.grad.to_numpy(), (3 + 2 * xs + np.cos(xs)) * [1, 2, 3],
                               rtol=1e-14)


@pytest.mark.requires('float64')
def test_vector_component_overwrite():
    x = ti.Vector.field(2, ti.f64, shape=(), needs_grad=True)
    v = ti.Vector.field(2, ti.f64, shape=(), needs_grad=True)
    L = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def f():
        v[None] = x[None] * 2

    @ti.kernel
    def g():
        v[None][1] = 7.0

    @ti.kernel
    def h():
        L[None] = v[None][0] * 3 + v[None][1] * 5

    x[None] = [1.0, 2.0]
    with ti.Tape(L):
        f()
        g()
        h()
    np.testing.assert_allclose(x.grad.to_numpy(), [6.0, 0.0])


@pytest.mark.requires('float64')
def test_overwrite_inside_loops_with_break_and_while():
    n = 6
    x = ti.field(ti.f64, shape=n, needs_grad=True)
    y = ti.field(ti.f64, shape=n, needs_grad=True)
    L = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def copy():
        for i in x:
            y[i] = x[i] * 2

    @ti.kernel
    def reset(m: ti.i32):
        for _ in range(1):
            k = 0
            for j in range(n):   # overwrites y[0], y[2], y[4] and stops at m
                if j >= m:
                    break
                y[k] = 1.0
                k += 2
            w = n - 1
            while w > 4:         # overwrites y[5]
                y[w] = 3.0
                w -= 1

    @ti.kernel
    def total():
        for i in y:
            L[None] += y[i] * y[i]

    xs = np.arange(1.0, n + 1)
    x.from_numpy(xs)
    with ti.Tape(L):
        copy()
        reset(3)
        total()
    np.testing.assert_allclose(x.grad.to_numpy(), [0, 8 * xs[1], 0, 8 * xs[3], 0, 0])
