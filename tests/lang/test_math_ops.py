"""Scalar operators and math functions, in kernels (against numpy) and in Python scope."""
import math

import numpy as np
import pytest

import vkdiff as ti

INTS = np.array([-7, -6, -5, -1, 0, 1, 2, 5, 6, 7, 13, -13], np.int32)
DIVS = np.array([2, 3, -2, -3, 5, 1, -1, 4, -4, 7, 3, -5], np.int32)


def _run_binary(dtype, a, b, op):
    n = len(a)
    x = ti.field(dtype, shape=n)
    y = ti.field(dtype, shape=n)
    z = ti.field(dtype, shape=n)
    x.from_numpy(a)
    y.from_numpy(b)

    @ti.kernel
    def k():
        for i in x:
            z[i] = op(x[i], y[i])

    k()
    return z.to_numpy()


@pytest.mark.parametrize('name,op,npop', [
    ('add', lambda a, b: a + b, np.add),
    ('sub', lambda a, b: a - b, np.subtract),
    ('mul', lambda a, b: a * b, np.multiply),
    ('floordiv', lambda a, b: a // b, np.floor_divide),
    ('mod', lambda a, b: a % b, np.mod),
    ('band', lambda a, b: a & b, np.bitwise_and),
    ('bor', lambda a, b: a | b, np.bitwise_or),
    ('bxor', lambda a, b: a ^ b, np.bitwise_xor),
    ('min', lambda a, b: ti.min(a, b), np.minimum),
    ('max', lambda a, b: ti.max(a, b), np.maximum),
])
def test_int_binary_ops(name, op, npop):
    np.testing.assert_array_equal(_run_binary(ti.i32, INTS, DIVS, op), npop(INTS, DIVS))


def test_int_floordiv_mod_python_semantics():
    """// and % on negative ints round toward -inf, as in Python (not C)."""
    got_q = _run_binary(ti.i32, INTS, DIVS, lambda a, b: a // b)
    got_r = _run_binary(ti.i32, INTS, DIVS, lambda a, b: a % b)
    for a, b, q, r in zip(INTS.tolist(), DIVS.tolist(), got_q, got_r):
        assert (q, r) == (a // b, a % b), (a, b)


def test_int_true_div_and_pow():
    a = INTS
    b = np.abs(DIVS)
    got = _run_binary(ti.i32, a, b, lambda p, q: ti.cast(p / q * 1000, ti.i32))
    np.testing.assert_array_equal(got, np.trunc(a.astype(np.float32) / b * 1000).astype(np.int32))
    x = ti.field(ti.i32, shape=len(a))
    x.from_numpy(a)
    out = ti.field(ti.i32, shape=len(a))

    @ti.kernel
    def k():
        for i in x:
            out[i] = x[i] ** 3 + x[i] ** 2

    k()
    np.testing.assert_array_equal(out.to_numpy(), a ** 3 + a ** 2)


def test_shifts_and_invert():
    a = np.array([1, 3, 255, -8, 1000], np.int32)
    got = _run_binary(ti.i32, a, np.array([1, 2, 3, 1, 4], np.int32), lambda p, q: p << q)
    np.testing.assert_array_equal(got, a << np.array([1, 2, 3, 1, 4]))
    got = _run_binary(ti.i32, a, np.array([1, 1, 4, 1, 3], np.int32), lambda p, q: p >> q)
    np.testing.assert_array_equal(got, a >> np.array([1, 1, 4, 1, 3]))  # arithmetic for signed
    got = _run_binary(ti.i32, a, a, lambda p, q: ~p)
    np.testing.assert_array_equal(got, ~a)
    u = np.array([0x80000000, 7, 0xffffffff], np.uint32)
    got = _run_binary(ti.u32, u, np.array([4, 1, 31], np.uint32), lambda p, q: p >> q)
    np.testing.assert_array_equal(got, u >> np.array([4, 1, 31], np.uint32))  # logical for u32


def test_u32_wraps():
    u = np.array([0, 1, 0xffffffff, 123456789], np.uint32)
    v = np.array([1, 2, 1, 1000], np.uint32)
    np.testing.assert_array_equal(_run_binary(ti.u32, u, v, lambda a, b: a + b), u + v)
    np.testing.assert_array_equal(_run_binary(ti.u32, u, v, lambda a, b: a - b), u - v)
    np.testing.assert_array_equal(_run_binary(ti.u32, u, v, lambda a, b: a * b), u * v)
    np.testing.assert_array_equal(_run_binary(ti.u32, u, v, lambda a, b: a // b), u // v)
    np.testing.assert_array_equal(_run_binary(ti.u32, u, v, lambda a, b: a % b), u % v)
    np.testing.assert_array_equal(_run_binary(ti.u32, u, v, lambda a, b: ti.max(a, b)),
                                  np.maximum(u, v))


FA = np.array([-2.5, -1.0, -0.3, 0.0, 0.7, 1.0, 2.25, 9.5], np.float32)
FB = np.array([1.5, -2.0, 0.4, 3.0, -0.25, 7.0, 2.0, -4.0], np.float32)


@pytest.mark.parametrize('name,op,npop', [
    ('add', lambda a, b: a + b, np.add),
    ('sub', lambda a, b: a - b, np.subtract),
    ('mul', lambda a, b: a * b, np.multiply),
    ('div', lambda a, b: a / b, np.divide),
    ('floordiv', lambda a, b: a // b, np.floor_divide),
    ('mod', lambda a, b: a % b, np.mod),
    ('min', lambda a, b: ti.min(a, b), np.minimum),
    ('max', lambda a, b: ti.max(a, b), np.maximum),
    ('atan2', lambda a, b: ti.atan2(a, b), np.arctan2),
])
@pytest.mark.parametrize('dt', [ti.f32, ti.f64])
def test_float_binary_ops(name, op, npop, dt):
    if dt is ti.f64 and name == 'atan2':
        pytest.importorskip('vkdiff.passes.f64math')  # f64 transcendentals are lowered by it
    nd = np.float32 if dt is ti.f32 else np.float64
    a, b = FA.astype(nd), FB.astype(nd)
    got = _run_binary(dt, a, b, op)
    # f32: ulp-level for arithmetic; the driver's atan2 is a few hundred ulp (lavapipe)
    tol = 1e-12 if dt is ti.f64 else 1e-5 if name == 'atan2' else 1e-6
    np.testing.assert_allclose(got, npop(a.astype(np.float64), b.astype(np.float64)),
                               rtol=tol, atol=tol)


def test_float_pow():
    a = np.abs(FA) + 0.5
    got = _run_binary(ti.f32, a, FB, lambda p, q: p ** q)
    np.testing.assert_allclose(got, a ** FB, rtol=2e-6)
    got = _run_binary(ti.f32, FA, FB, lambda p, q: p ** 2 - ti.pow(ti.abs(q), 0.5))
    np.testing.assert_allclose(got, FA ** 2 - np.abs(FB) ** 0.5, rtol=2e-6, atol=1e-6)
    got = _run_binary(ti.f32, FA + 3, FB, lambda p, q: p ** -2)
    np.testing.assert_allclose(got, (FA + 3) ** -2.0, rtol=2e-6)


@pytest.mark.parametrize('dt', [ti.i32, ti.f32])
def test_comparisons_and_logic(dt):
    a = np.array([1, 2, 3, 4, 5, 6], np.float32)
    b = np.array([3, 2, 1, 6, 5, 4], np.float32)
    nd = dt.np
    a, b = a.astype(nd), b.astype(nd)
    n = len(a)
    x = ti.field(dt, shape=n)
    y = ti.field(dt, shape=n)
    out = ti.field(ti.i32, shape=(n, 9))
    x.from_numpy(a)
    y.from_numpy(b)

    @ti.kernel
    def k():
        for i in x:
            p, q = x[i], y[i]
            out[i, 0] = p < q
            out[i, 1] = p <= q
            out[i, 2] = p > q
            out[i, 3] = p >= q
            out[i, 4] = p == q
            out[i, 5] = p != q
            out[i, 6] = p < q and q < 5
            out[i, 7] = p > 4 or q > 4
            out[i, 8] = not (p == q)

    k()
    want = np.stack([a < b, a <= b, a > b, a >= b, a == b, a != b, (a < b) & (b < 5),
                     (a > 4) | (b > 4), ~(a == b)], -1).astype(np.int32)
    np.testing.assert_array_equal(out.to_numpy(), want)


def test_chained_comparison():
    out = ti.field(ti.i32, shape=5)

    @ti.kernel
    def k():
        for i in out:
            out[i] = 1 <= i < 4

    k()
    np.testing.assert_array_equal(out.to_numpy(), [0, 1, 1, 1, 0])


UNARY = [
    ('sin', ti.sin, np.sin, np.linspace(-3, 3, 13)),
    ('cos', ti.cos, np.cos, np.linspace(-3, 3, 13)),
    ('tan', ti.tan, np.tan, np.linspace(-1.2, 1.2, 13)),
    ('asin', ti.asin, np.arcsin, np.linspace(-0.99, 0.99, 13)),
    ('acos', ti.acos, np.arccos, np.linspace(-0.99, 0.99, 13)),
    ('sqrt', ti.sqrt, np.sqrt, np.linspace(0, 100, 13)),
    ('rsqrt', ti.rsqrt, lambda v: 1 / np.sqrt(v), np.linspace(0.1, 100, 13)),
    ('exp', ti.exp, np.exp, np.linspace(-5, 5, 13)),
    ('log', ti.log, np.log, np.linspace(0.01, 100, 13)),
    ('tanh', ti.tanh, np.tanh, np.linspace(-4, 4, 13)),
    ('floor', ti.floor, np.floor, np.linspace(-3.3, 3.3, 13)),
    ('ceil', ti.ceil, np.ceil, np.linspace(-3.3, 3.3, 13)),
    # (kernel: ties away from zero, as Taichi's CPU backend; Python scope: np.round, ties even;
    # the first three are no ties: the Python-scope check below compares them too)
    ('round', ti.round, lambda v: np.trunc(v + np.copysign(0.5, v)),
     np.array([-0.6, -0.4, 0.4, 0.5, -2.5, -1.5, 0.6, 1.5, 2.5, 3.7])),
    ('abs', ti.abs, np.abs, np.linspace(-3, 3, 13)),
    ('abs_builtin', abs, np.abs, np.linspace(-3, 3, 13)),
    ('atan', ti.atan, np.arctan, np.linspace(-10, 10, 13)),
]


@pytest.mark.parametrize('name,fn,npfn,xs', UNARY, ids=[u[0] for u in UNARY])
def test_unary_math_f32(name, fn, npfn, xs):
    xs = xs.astype(np.float32)
    x = ti.field(ti.f32, shape=len(xs))
    y = ti.field(ti.f32, shape=len(xs))
    x.from_numpy(xs)

    @ti.kernel
    def k():
        for i in x:
            y[i] = fn(x[i])

    k()
    want = npfn(xs.astype(np.float64))
    # f32 tolerances; arc functions get the driver's atan accuracy (lavapipe: ~350 ulp)
    tol = 1e-5 if name in ('asin', 'acos', 'atan') else 2e-6
    if name in ('sin', 'cos', 'tan'):
        # Vulkan's precision rules (GLSL.std.450 in the Vulkan spec): sin and cos have an absolute
        # error of at most 2**-11 in [-pi, pi] (SwiftShader: ~2e-4); tan is "derived from
        # sin/cos", so its error is inherited: (e_sin + |tan| e_cos) / |cos| plus 2.5 ulp of the
        # division
        e = 2.0 ** -11
        if name == 'tan':
            c = np.abs(np.cos(xs.astype(np.float64)))
            e = e * (1 + np.abs(want)) / c + 2.5 * np.spacing(np.abs(want).astype(np.float32))
        assert np.all(np.abs(y.to_numpy() - want) <= e), (y.to_numpy(), want)
    else:
        np.testing.assert_allclose(y.to_numpy(), want, rtol=tol, atol=tol)
    # Python scope on plain numbers
    for v, w in zip(xs[:3].tolist(), want[:3].tolist()):
        assert fn(v) == pytest.approx(w, rel=1e-6, abs=1e-6)


def test_min_max_pow_python_scope():
    assert ti.min(3, 1, 2) == 1 and ti.max(3.5, 1) == 3.5
    assert ti.pow(2.0, 10) == 1024.0
    assert ti.atan2(1.0, 1.0) == pytest.approx(math.pi / 4)
    assert ti.sqrt(16.0) == 4.0 and ti.floor(2.7) == 2.0 and ti.ceil(2.1) == 3.0
    assert ti.exp(0.0) == 1.0 and ti.log(1.0) == 0.0 and ti.tanh(0.0) == 0.0
    assert ti.rsqrt(4.0) == pytest.approx(0.5)
    assert ti.cast(3.7, ti.i32) == 3 and ti.cast(-3.7, ti.i32) == -3
    assert ti.cast(5, ti.f32) == 5.0 and isinstance(ti.cast(5, ti.f32), float)
    assert ti.select(True, 1, 2) == 1 and ti.select(0, 1, 2) == 2


def test_unary_math_f64_native():
    xs = np.linspace(-3.3, 3.3, 11)
    x = ti.field(ti.f64, shape=len(xs))
    y = ti.field(ti.f64, shape=(len(xs), 5))
    x.from_numpy(xs)

    @ti.kernel
    def k():
        for i in x:
            v = x[i]
            y[i, 0] = ti.sqrt(ti.abs(v))
            y[i, 1] = ti.floor(v)
            y[i, 2] = ti.ceil(v)
            y[i, 3] = ti.abs(v)
            y[i, 4] = -v

    k()
    want = np.stack([np.sqrt(np.abs(xs)), np.floor(xs), np.ceil(xs), np.abs(xs), -xs], -1)
    np.testing.assert_allclose(y.to_numpy(), want, rtol=1e-15)


def test_casts():
    f = ti.field(ti.f32, shape=6)
    i = ti.field(ti.i32, shape=6)
    u = ti.field(ti.u32, shape=6)
    d = ti.field(ti.f64, shape=6)
    f.from_numpy(np.array([-2.7, -0.5, 0.0, 0.5, 2.7, 1e6], np.float32))

    @ti.kernel
    def k():
        for n in f:
            i[n] = ti.cast(f[n], ti.i32)
            u[n] = ti.cast(ti.abs(f[n]), ti.u32)
            d[n] = ti.cast(f[n], ti.f64) * 2
            if n == 0:
                i[n] = int(f[n] * 2)
            if n == 5:
                d[n] = float(i[n - 1]) + ti.cast(7, ti.f64)

    k()
    a = np.array([-2.7, -0.5, 0.0, 0.5, 2.7, 1e6], np.float32)
    wi = np.trunc(a).astype(np.int32)
    wi[0] = int(np.float32(-2.7) * 2)
    np.testing.assert_array_equal(i.to_numpy(), wi)
    np.testing.assert_array_equal(u.to_numpy(), np.trunc(np.abs(a)).astype(np.uint32))
    wd = a.astype(np.float64) * 2
    wd[5] = 2.0 + 7
    np.testing.assert_array_equal(d.to_numpy(), wd)


def test_int_float_mix_in_kernel():
    out = ti.field(ti.f32, shape=4)
    n = ti.field(ti.i32, shape=4)

    @ti.kernel
    def k():
        for i in out:
            out[i] = i * 0.5 + i / 3
            n[i] = i * 2.5  # stored with the field's type (truncation)

    k()
    ar = np.arange(4)
    np.testing.assert_allclose(out.to_numpy(), ar * 0.5 + ar / 3, rtol=1e-6)
    np.testing.assert_array_equal(n.to_numpy(), np.trunc(ar * 2.5).astype(np.int32))


def test_integer_width_and_sign_casts():
    u = ti.field(ti.u32, shape=2)
    i = ti.field(ti.i32, shape=2)
    out64 = ti.field(ti.i64, shape=4)
    outu64 = ti.field(ti.u64, shape=2)
    out32 = ti.field(ti.i32, shape=2)
    u.from_numpy(np.array([3, 0xfffffff0], np.uint32))
    i.from_numpy(np.array([-1, 7], np.int32))

    @ti.kernel
    def k():
        out64[0] = ti.cast(u[0] + i[0], ti.i64)   # u32 + i32 is u32 (Taichi's rule): 2
        out64[1] = ti.cast(u[1], ti.i64)          # zero-extended
        out64[2] = ti.cast(i[0], ti.i64)          # sign-extended
        out64[3] = ti.cast(u[1], ti.i64) * 16
        outu64[0] = ti.cast(i[0], ti.u64)
        outu64[1] = ti.cast(u[1], ti.u64)
        out32[0] = ti.cast(out64[3], ti.i32)      # narrowing keeps the low bits
        out32[1] = ti.cast(u[1], ti.i32)

    k()
    np.testing.assert_array_equal(out64.to_numpy(), [2, 0xfffffff0, -1, 0xfffffff0 * 16])
    np.testing.assert_array_equal(outu64.to_numpy(), [2 ** 64 - 1, 0xfffffff0])
    np.testing.assert_array_equal(out32.to_numpy(), [np.int64(0xfffffff0 * 16).astype(np.int32),
                                                     np.uint32(0xfffffff0).astype(np.int32)])


@pytest.mark.parametrize('fdt,idt', [(ti.f32, ti.i32), (ti.f64, ti.i32), (ti.f64, ti.i64)])
def test_float_base_runtime_int_exponent(fdt, idt):
    """float ** run-time integer is repeated multiplication (Taichi): defined for a negative
    base, the reciprocal for a negative exponent; d/dx x**n = n x**(n-1)."""
    xs = np.array([-6.66, -2, -1.5, -1, -0.5, 0.5, 1.5, 6.66])
    ns = np.arange(-7, 8)
    x = ti.field(fdt, shape=len(xs), needs_grad=True)
    n = ti.field(idt, shape=len(ns))
    z = ti.field(fdt, shape=(len(xs), len(ns)))
    loss = ti.field(fdt, shape=(), needs_grad=True)
    x.from_numpy(xs)
    n.from_numpy(ns)

    @ti.kernel
    def f():
        for i, j in z:
            z[i, j] = x[i] ** n[j]
            loss[None] += x[i] ** n[j]

    with ti.ad.Tape(loss):
        f()
    want = xs[:, None] ** ns[None, :].astype(float)
    np.testing.assert_allclose(z.to_numpy(), want, rtol=1e-5 if fdt == ti.f32 else 1e-12)
    grad = (ns[None, :] * xs[:, None] ** (ns[None, :] - 1.0)).sum(1)
    np.testing.assert_allclose(x.grad.to_numpy(), grad, rtol=1e-4 if fdt == ti.f32 else 1e-10)


def test_floor_and_ceil_take_taichis_dtype_argument():
    """`ti.floor(x, dtype)`, `ti.math.ceil(x, int)` (Taichi's ops.floor/ceil): the result cast
    to dtype (algorithm/marching_squares.py calls tm.ceil(x, int))."""
    import vkdiff as ti

    @ti.kernel
    def k(a: ti.f32) -> ti.i32:
        return ti.math.ceil(a * 2, int) * 100 + ti.floor(a, ti.i32) * 10 + ti.ceil(-a, int)

    assert k(1.3) == 3 * 100 + 1 * 10 - 1
    assert ti.floor(2.5, int) == 2 and isinstance(ti.floor(2.5, int), int)
    assert ti.math.ceil(ti.Vector([1.2, -2.5]), int).to_list() == [2, -2]


@pytest.mark.parametrize('dt,npd', [(ti.f32, np.float32), (ti.f64, np.float64)])
def test_float_pow_edge_cases_follow_c_pow(dt, npd):
    """x ** y with a run-time float exponent follows C's pow (Taichi 1.7.4 CPU printed numpy's
    values for all of these): a negative base with an integral exponent, a zero base with a
    negative exponent (+-inf), 0 ** 0 and 1 ** nan are 1. In f32 vkdiff used GLSL's Pow
    (undefined there) and gave [0, 0, 0, 0, nan, nan, nan, nan, nan, 0, 0, 0]."""
    a = np.array([0.0, -0.0, 0.0, -0.0, -8.0, -2.0, -2.0, 1.0, -1.0, 0.0, -0.0, 2.0, -3.0,
                  0.5, -0.5, 4.0, -np.inf, -np.inf, -np.inf, -np.inf, -0.5, -2.0, np.nan], npd)
    e = np.array([-1.5, -3.0, -2.0, 3.0, 3.0, -2.0, 0.5, np.nan, np.inf, 0.0, 1.0, -np.inf,
                  2**25, np.inf, -np.inf, 0.5, 3.0, 0.5, -3.0, -2.0, np.inf, np.inf, 0.0], npd)
    with np.errstate(all='ignore'):
        want = np.power(a, e)
    got = _run_binary(dt, a, e, lambda x, y: x ** y)
    np.testing.assert_array_equal(got, want)
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(np.signbit(got[ok]), np.signbit(want[ok]))
