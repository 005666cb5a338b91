"""Inner loops with run-time bounds that carry values, over ndarray arguments (Taichi's
test_ad_ndarray.py::test_ad_fibonacci and test_integer_stack need this): as on fields, the
adjoint stores the carried values per iteration, sized by ti.init(ad_stack_size=N); more
iterations than N is an AutodiffError after the launch, never a wrong gradient. Without
ad_stack_size, N is Taichi's default_ad_stack_size (32; ti.init(default_ad_stack_size=M) sets it)."""
import numpy as np
import pytest

import vkdiff as ti

pytestmark = pytest.mark.requires('float64')  # every test here computes in f64


@ti.kernel
def _fib(a: ti.types.ndarray(), b: ti.types.ndarray(), c: ti.types.ndarray(),
         f: ti.types.ndarray()):
    for i in a:
        p = a[i]
        q = b[i]
        for j in range(c[i]):
            p, q = q, p + q
        f[i] = q * q


def _arrays(n, steps):
    a, b, f = (ti.ndarray(ti.f64, n, needs_grad=True) for _ in range(3))
    c = ti.ndarray(ti.i32, n)
    a.from_numpy(np.linspace(0.5, 1.0, n))
    b.from_numpy(np.linspace(1.0, 2.0, n))
    c.from_numpy(np.asarray(steps, np.int32))
    return a, b, c, f


def _fib_np(p, q, k):
    for _ in range(k):
        p, q = q, p + q
    return q


def test_run_time_trip_count_with_ad_stack_size_matches_finite_differences():
    ti.init(ad_stack_size=16)
    n = 6
    steps = [0, 1, 2, 5, 9, 16]
    a, b, c, f = _arrays(n, steps)
    _fib(a, b, c, f)
    a0, b0 = a.to_numpy(), b.to_numpy()
    want = np.array([_fib_np(p, q, k) ** 2 for p, q, k in zip(a0, b0, steps)])
    np.testing.assert_allclose(f.to_numpy(), want, rtol=1e-14)
    f.grad.fill(1.0)
    _fib.grad(a, b, c, f)
    e = 1e-6
    da = [(_fib_np(p + e, q, k) ** 2 - _fib_np(p - e, q, k) ** 2) / (2 * e)
          for p, q, k in zip(a0, b0, steps)]
    db = [(_fib_np(p, q + e, k) ** 2 - _fib_np(p, q - e, k) ** 2) / (2 * e)
          for p, q, k in zip(a0, b0, steps)]
    np.testing.assert_allclose(a.grad.to_numpy(), da, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(b.grad.to_numpy(), db, rtol=1e-7)


def test_more_iterations_than_ad_stack_size_is_an_error():
    ti.init(ad_stack_size=4)
    a, b, c, f = _arrays(3, [1, 5, 2])
    _fib(a, b, c, f)
    f.grad.fill(1.0)
    with pytest.raises(ti.AutodiffError, match='ad_stack_size=4'):
        _fib.grad(a, b, c, f)


def test_without_ad_stack_size_the_stack_is_taichis_default_32():
    """As Taichi (ad_stack_size=0 is adaptive, falling back to default_ad_stack_size=32): 32
    iterations differentiate exactly; 33 are an AutodiffError naming the size, not a wrong
    gradient."""
    ti.init(default_fp=ti.f64)
    steps = [3, 32]
    a, b, c, f = _arrays(2, steps)
    _fib(a, b, c, f)
    a0, b0 = a.to_numpy(), b.to_numpy()
    f.grad.fill(1.0)
    _fib.grad(a, b, c, f)
    e = 1e-7
    da = [(_fib_np(p + e, q, k) ** 2 - _fib_np(p - e, q, k) ** 2) / (2 * e)
          for p, q, k in zip(a0, b0, steps)]
    np.testing.assert_allclose(a.grad.to_numpy(), da, rtol=1e-6)
    a, b, c, f = _arrays(2, [3, 33])
    _fib(a, b, c, f)
    f.grad.fill(1.0)
    with pytest.raises(ti.AutodiffError, match='ad_stack_size=32'):
        _fib.grad(a, b, c, f)


def test_default_ad_stack_size_sets_the_fallback():
    ti.init(default_fp=ti.f64, default_ad_stack_size=4)
    a, b, c, f = _arrays(2, [4, 5])
    _fib(a, b, c, f)
    f.grad.fill(1.0)
    with pytest.raises(ti.AutodiffError, match='ad_stack_size=4'):
        _fib.grad(a, b, c, f)
