"""Edges of Taichi's memory layout (issue 24, lang/layout.py) found by review: gradients of
re-laid-out fields in Python scope, and out-of-range kernel indices that Taichi's address puts
on another field. Expected values: Taichi 1.7.4 (arch=ti.cpu), printed by the same programs."""
import warnings

import numpy as np
import pytest

import vkdiff as ti


def test_gradient_aliases_in_python_scope_as_its_primal():
    """`ti.root.dense(ti.l, 4).dense(ti.i, 1).place(x, y, z)` then `ti.root.lazy_grad()`: Taichi
    places each gradient beside its primal, so `x.grad[2, 0]` is `x.grad[0, 2]` as `x[2, 0]` is
    `x[0, 2]`. Taichi 1.7.4 prints x.grad [0, 0, 5, 0] and z.grad [0, 0, 0, 0, 5, 6, 0, 0] after
    the writes below; vkdiff raised FieldIndexError for the gradients only."""
    x = ti.field(ti.f32)
    y = ti.field(ti.f32, needs_grad=True)
    z = ti.Vector.field(2, ti.f32, needs_grad=True)
    ti.root.dense(ti.l, 4).dense(ti.i, 1).place(x, y, z)
    ti.root.lazy_grad()
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter('always')
        x.grad[2, 0] = 5.0
        y.grad[2, 0] = 5.0
        z.grad[2, 0] = [5.0, 6.0]
        assert x.grad[3, 0] == 0.0 and y.grad[2, 0] == 5.0
    assert sum(issubclass(w.category, ti.FieldAliasWarning) for w in rec) == 3  # once per field
    np.testing.assert_array_equal(x.grad.to_numpy().ravel(), [0, 0, 5, 0])
    np.testing.assert_array_equal(y.grad.to_numpy().ravel(), [0, 0, 5, 0])
    np.testing.assert_array_equal(z.grad.to_numpy().ravel(), [0, 0, 0, 0, 5, 6, 0, 0])
    with pytest.raises(ti.FieldIndexError):
        x.grad[4, 0]  # address 4: past the field


@pytest.mark.xfail(strict=True, reason='each field keeps its own buffer: a run-time index that '
                   "Taichi's address puts on another field's slot (a child node of the same "
                   'cell) lands in the next row of the same field instead (README "Field '
                   'layout" says it is dropped)')
def test_kernel_index_past_a_child_node_lands_on_the_sibling_field():
    """`blk = ti.root.dense(ti.i, 4); blk.place(a); blk.dense(ti.j, 3).place(b)`: Taichi's cell i
    holds a[i] then b[i, 0:3], so b[1, 3] is a[2]. Taichi 1.7.4 prints a [0, 0, 9, 0] and b all
    zero; vkdiff wrote b[2, 0] = 9 (the row-major address 1 * 3 + 3) and left a alone."""
    a = ti.field(ti.f32)
    b = ti.field(ti.f32)
    blk = ti.root.dense(ti.i, 4)
    blk.place(a)
    blk.dense(ti.j, 3).place(b)

    @ti.kernel
    def w(j: ti.i32):
        b[1, j] = 9.0

    w(3)
    np.testing.assert_array_equal(b.to_numpy().ravel(), np.zeros(12))
    np.testing.assert_array_equal(a.to_numpy(), [0, 0, 9, 0])


def test_constant_index_out_of_range_beside_a_run_time_one():
    """`x[1, t + 3]` on an `offset=(-1, 3)` time-major field: the constant 1 is out of range on
    axis i, but the address depends on t, so Taichi compiles it and the write lands where its
    address puts it (stored (2, t): x[-1, t + 4]). Taichi 1.7.4 prints row -1 as [100, 100,
    101, ..., 106] and row 0 as zeros; vkdiff refused the kernel with a CompileError."""
    x = ti.field(ti.f32)
    ti.root.dense(ti.l, 8).dense(ti.i, 2).place(x, offset=(-1, 3))

    @ti.kernel
    def w():
        for t in range(8):
            x[1, t + 3] = t
            x[-1, t + 3] += 100

    w()
    np.testing.assert_array_equal(x.to_numpy(), [[100, 100, 101, 102, 103, 104, 105, 106],
                                                 [0] * 8])

    @ti.kernel
    def past():
        x[1, 10] = 1.0  # every index constant: still judged at compile time

    with pytest.raises(ti.CompileError):
        past()


def test_field_order_sets_the_layout():
    """`ti.field(shape=(3, 4), order='ji')` is Taichi's ti.root.dense(ti.j, 4).dense(ti.i, 3):
    x[i, j] at i + 3 * j. Taichi 1.7.4 reads x[3, 0] as x[0, 1] (1.0) and x[4, 1] as x[1, 2]
    (6.0), and x[0, 4] past the field (0.0); vkdiff ignored order= (row-major: 0.0, 0.0, 4.0,
    and FieldIndexError in Python scope). Vector fields, gradients and offsets follow it."""
    x = ti.field(ti.f32, shape=(3, 4), order='ji')
    x.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))

    @ti.kernel
    def r(i: ti.i32, j: ti.i32) -> ti.f32:
        return x[i, j]

    assert [r(3, 0), r(4, 1), r(0, 4), r(1, 2)] == [1.0, 6.0, 0.0, 6.0]
    with pytest.warns(ti.FieldAliasWarning):
        assert x[3, 0] == 1.0
    v = ti.Vector.field(3, ti.f32, shape=(2, 3), order='ji')
    v.from_numpy(np.arange(18, dtype=np.float32).reshape(2, 3, 3))

    @ti.kernel
    def rv(i: ti.i32, j: ti.i32) -> ti.f32:
        return v[i, j][2]

    assert [rv(2, 0), rv(0, 3), rv(1, 1)] == [5.0, 0.0, 14.0]  # Taichi 1.7.4's

    g = ti.field(ti.f32, shape=(3, 4), order='ji', needs_grad=True, offset=(1, -2))
    loss = ti.field(ti.f32, shape=(), needs_grad=True)
    g.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 4))

    @ti.kernel
    def f():
        for i, j in g:
            loss[None] += g[i, j] ** 2 * (i + 2 * j)

    with ti.ad.Tape(loss):
        f()
    assert loss[None] == 1188.0  # Taichi 1.7.4's
    np.testing.assert_array_equal(g.grad.to_numpy().ravel(),
                                  [0, -2, 4, 18, -16, 0, 24, 56, -16, 18, 60, 110])
    with pytest.warns(ti.FieldAliasWarning):
        assert g.grad[4, -2] == -2.0  # g.grad[1, -1], as Taichi
    for bad in ['ii', 'jik', 'ab', 3]:
        with pytest.raises(ti.TaichiCompilationError, match='order='):
            ti.field(ti.f32, shape=(2, 2), order=bad)
    with pytest.raises(ti.TaichiCompilationError, match='shape cannot be None when order is set'):
        ti.field(ti.f32, order='ij')
