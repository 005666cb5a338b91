"""`and` / `or` on run-time values whose right operand is an expression reading global memory:
the right operand is evaluated only when needed (Taichi's short-circuit operators on its lazily
built expressions); a function called in it runs either way (Taichi builds the call first);
values as before (`x and y` is y if x else x, `x or y` is x if x else y); gradients through it."""
import numpy as np

import vkdiff as ti


def test_a_function_called_on_the_right_runs_either_way():
    """As in Taichi 1.7.4 (hits 64 there too): the call's atomic counts every iteration."""
    x = ti.field(ti.i32, 64)
    hits_and = ti.field(ti.i32, ())
    hits_or = ti.field(ti.i32, ())
    out = ti.field(ti.i32, (64, 2))

    @ti.func
    def bump(c, v):
        ti.atomic_add(c[None], 1)
        return v

    @ti.kernel
    def k():
        for i in x:
            out[i, 0] = 1 if (i % 4 == 0 and bump(hits_and, x[i]) > 10) else 0
            out[i, 1] = 1 if (i % 4 == 0 or bump(hits_or, x[i]) > 10) else 0

    a = np.arange(64, dtype=np.int32)
    x.from_numpy(a)
    k()
    assert hits_and[None] == 64 and hits_or[None] == 64
    i = np.arange(64)
    np.testing.assert_array_equal(out.to_numpy()[:, 0], (i % 4 == 0) & (a > 10))
    np.testing.assert_array_equal(out.to_numpy()[:, 1], (i % 4 == 0) | (a > 10))


def test_values_of_and_or_with_reads_on_the_right():
    x = ti.field(ti.i32, 16)
    out = ti.field(ti.i32, (16, 4))

    @ti.kernel
    def k():
        for i in x:
            a = i % 3
            out[i, 0] = a and x[i]
            out[i, 1] = a or x[i]
            out[i, 2] = i < 15 and x[i + 1] > x[i] and x[i]
            out[i, 3] = (i > 7 or x[i] == 2) and 5

    a = (np.arange(16) * 7 % 5).astype(np.int32)
    x.from_numpy(a)
    k()
    o = out.to_numpy()
    for i in range(16):
        p = i % 3
        assert o[i, 0] == (p and a[i])
        assert o[i, 1] == (p or a[i])
        assert o[i, 2] == int(bool(i < 15 and a[i + 1] > a[i]) and a[i])
        assert o[i, 3] == int(bool(i > 7 or a[i] == 2) and 5)


def test_out_of_range_reads_guarded_by_the_left_operand_do_not_happen():
    """`i < n and x[i] ...` with i past the data: under ti.init(debug=True) an evaluated
    out-of-range read would be reported; short-circuited, none is."""
    ti.init(arch=ti.vulkan, debug=True)
    x = ti.field(ti.f32, 8)
    out = ti.field(ti.i32, 16)

    @ti.kernel
    def k():
        for i in range(16):
            out[i] = 1 if (i < 8 and x[i] > 0.5) else 0

    a = np.linspace(0, 1, 8).astype(np.float32)
    x.from_numpy(a)
    k()
    np.testing.assert_array_equal(out.to_numpy(), np.r_[(a > 0.5).astype(np.int32), [0] * 8])
    ti.init(arch=ti.vulkan)


def test_gradient_through_a_short_circuited_operand():
    x = ti.field(ti.f32, 16, needs_grad=True)
    loss = ti.field(ti.f32, (), needs_grad=True)

    @ti.kernel
    def f():
        for i in x:
            v = x[i] > 0.5 and x[i] * x[i]
            loss[None] += v

    a = np.linspace(0, 1, 16).astype(np.float32)
    x.from_numpy(a)
    with ti.ad.Tape(loss):
        f()
    np.testing.assert_allclose(loss[None], np.sum(np.where(a > 0.5, a * a, 0)), rtol=1e-5)
    np.testing.assert_allclose(x.grad.to_numpy(), np.where(a > 0.5, 2 * a, 0), rtol=1e-5)
