"""`ti.ad.clear_all_gradients()`: every gradient (or dual) is zeroed, with one kernel per SNode
that holds gradients, as Taichi compiles (Taichi's test_clear_all_gradients.py counts them)."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.lang import impl


def test_one_kernel_per_snode_holding_gradients():
    x, y, z, w = (ti.field(ti.f32) for _ in range(4))
    n = 16
    ti.root.place(x)
    ti.root.dense(ti.i, n).place(y)
    ti.root.dense(ti.i, n).dense(ti.j, n).place(z, w)
    ti.root.lazy_grad()
    x.grad[None] = 3
    y.grad.from_numpy(np.full(n, 3, np.float32))
    z.grad.from_numpy(np.full((n, n), 5, np.float32))
    w.grad.from_numpy(np.full((n, n), 6, np.float32))
    y.from_numpy(np.arange(n, dtype=np.float32))
    before = impl.get_runtime().get_num_compiled_functions()

    ti.ad.clear_all_gradients()
    assert impl.get_runtime().get_num_compiled_functions() - before == 3
    assert x.grad[None] == 0
    for g in (y.grad, z.grad, w.grad):
        assert not g.to_numpy().any()
    np.testing.assert_array_equal(y.to_numpy(), np.arange(n))  # primals untouched

    z.grad[1, 2] = 7
    ti.ad.clear_all_gradients()  # no more compilation
    assert impl.get_runtime().get_num_compiled_functions() - before == 3
    assert z.grad[1, 2] == 0


@pytest.mark.requires('float64')
def test_fields_of_mixed_kinds_and_duals():
    a = ti.field(ti.f64, shape=(3, 2), needs_grad=True, needs_dual=True)
    v = ti.Vector.field(3, ti.f32, shape=4, needs_grad=True)
    s = ti.field(ti.f32, shape=(), needs_grad=True)
    m, k = ti.Matrix.field(2, 2, ti.f32), ti.field(ti.i32)
    ti.root.dense(ti.i, 5).place(m, m.grad, k)
    a.grad.fill(1.5)
    a.dual.fill(2.5)
    v.grad.fill(2)
    s.grad[None] = 4
    m.grad.fill(3)
    k.fill(9)
    ti.ad.clear_all_gradients()
    for g in (a.grad, v.grad, s.grad, m.grad):
        assert not g.to_numpy().any()
    np.testing.assert_array_equal(a.dual.to_numpy(), np.full((3, 2), 2.5))
    np.testing.assert_array_equal(k.to_numpy(), np.full(5, 9))
    ti.ad.clear_all_gradients('dual')
    assert not a.dual.to_numpy().any()
