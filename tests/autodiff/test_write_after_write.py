"""A plain store after earlier writes of the same element (Taichi's test_ib_global_load): the
adjoint of the last store takes the element's gradient and clears it, so the earlier, dead
writes (accumulations or stores, in the same thread or in earlier loops) get none, and the
gradient is right. vkdiff rejected these as "rule 2" before; an in-place `*=` (a read and a
store) or an atomic that is not an add after a write is still rejected."""
import numpy as np
import pytest

import vkdiff as ti


def test_store_after_accumulations_in_an_inner_loop_ndarray():
    # Taichi's test_ad_ndarray.py::test_ib_global_load
    N = 10
    a = ti.ndarray(ti.f32, shape=N, needs_grad=True)
    b = ti.ndarray(ti.i32, shape=N)
    p = ti.ndarray(ti.f32, shape=N, needs_grad=True)

    @ti.kernel
    def compute(a: ti.types.ndarray(), b: ti.types.ndarray(), p: ti.types.ndarray()):
        for i in range(N):
            val = a[i]
            for j in range(b[i]):
                p[i] += i
            p[i] = val * i

    a.from_numpy(np.arange(N, dtype=np.float32))
    b.fill(2)
    compute(a, b, p)
    np.testing.assert_array_equal(p.to_numpy(), np.arange(N) ** 2)
    p.grad.fill(1)
    compute.grad(a, b, p)
    np.testing.assert_array_equal(a.grad.to_numpy(), np.arange(N))


@pytest.mark.requires('float64')
def test_dead_active_writes_get_no_gradient_field():
    """The overwritten writes depend on x: their contributions must not reach x.grad."""
    N = 6
    x = ti.field(ti.f64, shape=N, needs_grad=True)
    k = ti.field(ti.i32, shape=N)
    p = ti.field(ti.f64, shape=N, needs_grad=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def compute():
        for i in range(N):
            p[i] = x[i] * 5.0
            for j in range(k[i]):
                p[i] += x[i] * x[i]
            p[i] = ti.sin(x[i])

    @ti.kernel
    def total():
        for i in range(N):
            loss[None] += p[i] * p[i]

    x0 = np.linspace(0.1, 1.1, N)
    x.from_numpy(x0)
    k.from_numpy(np.arange(N, dtype=np.int32) % 3)
    with ti.Tape(loss):
        compute()
        total()
    np.testing.assert_allclose(p.to_numpy(), np.sin(x0), rtol=1e-15)
    np.testing.assert_allclose(x.grad.to_numpy(), 2 * np.sin(x0) * np.cos(x0), rtol=1e-13)


@pytest.mark.requires('float64')
def test_store_in_a_later_loop_overwrites_an_earlier_loops_store():
    N = 5
    x = ti.field(ti.f64, shape=N, needs_grad=True)
    p = ti.field(ti.f64, shape=N, needs_grad=True)

    @ti.kernel
    def two_loops():
        for i in x:
            p[i] = x[i] * 3.0
        for i in x:
            p[i] = x[i] * x[i]

    x0 = np.arange(1.0, N + 1)
    x.from_numpy(x0)
    two_loops()
    p.grad.fill(1.0)
    two_loops.grad()
    np.testing.assert_array_equal(x.grad.to_numpy(), 2 * x0)
    assert (p.grad.to_numpy() == 0).all()   # the stores took it


def test_in_place_multiply_after_a_write_is_still_rejected():
    x = ti.field(ti.f32, shape=2, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def f():
        loss[None] += x[0]
        loss[None] *= x[1]

    @ti.kernel
    def g():
        loss[None] += x[0]
        ti.atomic_max(loss[None], x[1])

    f()
    with pytest.raises(ti.AutodiffError, match='rule 1.*read'):   # (*= reads, then stores)
        f.grad()
    g()
    with pytest.raises(ti.AutodiffError, match='rule 2'):
        g.grad()
