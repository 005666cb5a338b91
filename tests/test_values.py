"""Values computed inside kernels match numpy / Taichi's documented semantics (issue 9, items 5-11):
ti.func return casts, 64-bit random integers, loops longer than a driver's loop limiter, division
by a zero the compiler can see, full-range f64 trigonometry, driver-inaccurate f32 ops, integer
division by zero."""
import numpy as np
import pytest

import vkdiff as ti


def test_func_return_casts_to_declared_type():
    @ti.func
    def bar(a: ti.f32) -> ti.i32:
        return a

    @ti.func
    def branchy(a: ti.f32) -> ti.i32:
        if a > 0:
            return a * 2.0
        return a

    @ti.kernel
    def foo(a: ti.f32) -> ti.f32:
        return bar(a) + branchy(a)

    assert foo(1.5) == 1.0 + 3.0
    assert foo(-2.7) == -2.0 + -2.0


def test_random_i64_uses_all_64_bits():
    n = 1 << 14
    hi = ti.field(ti.i64, shape=n)

    @ti.kernel
    def fill():
        for i in range(n):
            hi[i] = ti.random(ti.i64)

    fill()
    v = hi.to_numpy()
    top = (v.view(np.uint64) >> np.uint64(32)).astype(np.float64)
    # the upper halves are uniform over [0, 2^32): mean 2^31, and both signs occur
    assert abs(top.mean() / 2.0 ** 32 - 0.5) < 0.02
    assert (v < 0).mean() == pytest.approx(0.5, abs=0.02)
    assert len(np.unique(v)) == n
