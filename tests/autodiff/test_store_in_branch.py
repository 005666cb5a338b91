"""Reverse mode when a differentiable value computed outside a branch is stored or accumulated
inside it: matrix elements at run-time indices (a store becomes one guarded store per component),
`if c: L[None] += v` (issue 9, item 3)."""
import numpy as np
import pytest

import vkdiff as ti


def test_matrix_non_constant_index():
    # Taichi's test_ad_dynamic_index.py::test_matrix_non_constant_index
    m = ti.Matrix.field(2, 2, ti.f32, 5, needs_grad=True)
    n = ti.Matrix.field(2, 2, ti.f32, 5, needs_grad=True)
    loss = ti.field(ti.f32, (), needs_grad=True)
    n.fill(0)

    @ti.kernel
    def func1():
        for i in range(5):
            for j, k in ti.ndrange(2, 2):
                m[i][j, k] = (j + 1) * (k + 1) * n[i][j, k]
                loss[None] += m[i][j, k]

    loss.grad[None] = 1.0
    func1.grad()
    expect = np.array([[1.0, 2.0], [2.0, 4.0]])
    np.testing.assert_array_equal(n.grad.to_numpy(), np.broadcast_to(expect, (5, 2, 2)))


@pytest.mark.requires('float64')
def test_vector_store_at_runtime_index_from_argument():
    ti.init(default_fp=ti.f64)
    x = ti.field(ti.f64, shape=4, needs_grad=True)
    v = ti.Vector.field(3, ti.f64, shape=4, needs_grad=True)
    L = ti.field(ti.f64, (), needs_grad=True)

    @ti.kernel
    def f(c: ti.i32):
        for i in x:
            v[i][(i + c) % 3] = ti.sin(x[i]) * (i + 1)
        for i in x:
            L[None] += v[i].dot(ti.Vector([1.0, 2.0, 3.0]))

    xs = np.array([0.1, 0.7, -0.3, 1.4])
    x.from_numpy(xs)
    v.fill(0)
    with ti.Tape(L):
        f(1)
    weight = np.array([1.0, 2.0, 3.0])[(np.arange(4) + 1) % 3]
    np.testing.assert_allclose(x.grad.to_numpy(), np.cos(xs) * np.arange(1, 5) * weight,
                               rtol=1e-14)


def test_accumulate_in_branch_value_from_outside():
    x = ti.field(ti.f32, 4, needs_grad=True)
    L = ti.field(ti.f32, (), needs_grad=True)

    @ti.kernel
    def f():
        for i in x:
            v = x[i] * x[i]
            if i % 2 == 0:
                L[None] += v
            else:
                L[None] -= v

    x.from_numpy(np.array([1.0, 2.0, 3.0, 4.0], np.float32))
    with ti.Tape(L):
        f()
    np.testing.assert_allclose(x.grad.to_numpy(), [2.0, -4.0, 6.0, -8.0])
