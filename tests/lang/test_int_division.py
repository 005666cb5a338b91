"""Integer `//` and `%` by zero (issue 9 item 11). Taichi documents Python's floored `//` and `%`
(the remainder takes the divisor's sign) and nothing for a zero divisor; SPIR-V leaves OpSDiv /
OpSRem / OpUDiv by zero (and INT_MIN / -1) undefined, and lavapipe gave -1 for both. vkdiff
gives numpy's results, defined on every driver: x // 0 == 0, x % 0 == 0, INT_MIN // -1 wraps
to INT_MIN with remainder 0 (debug mode reports a zero divisor: tests/launch/test_debug_mode.py)."""
import numpy as np
import pytest

import vkdiff as ti

A = [7, 0, -5, 100, 3, -7, 9, -9]
B = [0, 0, 0, 0, 2, 2, -4, -4]


def _run(dt, a, b, literal_zero=False):
    n = len(a)
    fa, fb = ti.field(dt, shape=n), ti.field(dt, shape=n)
    q, r = ti.field(dt, shape=n), ti.field(dt, shape=n)
    fa.from_numpy(np.array(a).astype(dt.np))
    fb.from_numpy(np.array(b).astype(dt.np))
    if literal_zero:
        @ti.kernel
        def k():
            for i in fa:
                q[i] = fa[i] // 0
                r[i] = fa[i] % 0
    else:
        @ti.kernel
        def k():
            for i in fa:
                q[i] = fa[i] // fb[i]
                r[i] = fa[i] % fb[i]
    k()
    return q.to_numpy(), r.to_numpy()


def _numpy(dt, a, b):
    a, b = np.array(a).astype(dt.np), np.array(b).astype(dt.np)
    with np.errstate(all='ignore'):
        return np.floor_divide(a, b), np.mod(a, b)


@pytest.mark.parametrize('dt', [ti.i32, ti.i64, ti.u32, ti.u64, ti.i8, ti.u8, ti.i16])
def test_zero_divisor_gives_numpys_result(dt):
    a = A if dt.is_signed else [abs(v) for v in A]
    b = B if dt.is_signed else [abs(v) for v in B]
    q, r = _run(dt, a, b)
    wq, wr = _numpy(dt, a, b)
    np.testing.assert_array_equal(q, wq)
    np.testing.assert_array_equal(r, wr)
    assert (q[:4] == 0).all() and (r[:4] == 0).all()


@pytest.mark.parametrize('dt', [ti.i32, ti.i64, ti.u32])
def test_literal_zero_divisor(dt):
    a = [5, 0, 77, 1] if not dt.is_signed else [5, 0, -77, 1]
    q, r = _run(dt, a, None or [0] * 4, literal_zero=True)
    assert (q == 0).all() and (r == 0).all()


@pytest.mark.parametrize('dt', [ti.i32, ti.i64, ti.i8])
def test_int_min_by_minus_one_wraps(dt):
    lo = np.iinfo(dt.np).min
    q, r = _run(dt, [lo, lo, lo + 1], [-1, 1, -1])
    wq, wr = _numpy(dt, [lo, lo, lo + 1], [-1, 1, -1])
    np.testing.assert_array_equal(q, wq)
    np.testing.assert_array_equal(r, wr)
