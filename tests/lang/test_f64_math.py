"""f64 transcendentals (vkdiff/passes/f64math.py): GLSL.std.450 has no f64 Sin/Exp/Log/Pow/...,
so vkdiff lowers them to its own straight-line f64 code. Checked in kernels against numpy over dense
grids (negative, tiny, huge and special arguments), with near-double-precision bounds; f32 keeps
the native GLSL instructions."""
import decimal
import math

import numpy as np
import pytest

import vkdiff as ti

TINY = np.finfo(np.float64).tiny          # smallest normal double
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, TINY, -TINY,
                    1e-300, -1e-300, 1e300, -1e300, np.finfo(np.float64).max, 1.0, -1.0])

# Bounds asserted (measured on lavapipe: at most ~3 ulp = 6.7e-16 for every function).
REL = 2e-15
REL_TAN = 3e-15


def _sym_log(lo, hi, n):
    v = np.logspace(lo, hi, n)
    return np.concatenate([-v[::-1], v])


def _run(fn, *cols, dtype=ti.f64):
    """fn applied elementwise in a kernel to the given numpy columns (f64 fields)."""
    n = len(cols[0])
    ins = [ti.field(dtype, shape=n) for _ in cols]
    out = ti.field(dtype, shape=n)
    for f, c in zip(ins, cols):
        f.from_numpy(np.asarray(c, dtype=dtype.np))
    if len(cols) == 1:
        x, = ins

        @ti.kernel
        def k():
            for i in x:
                out[i] = fn(x[i])
    else:
        x, z = ins

        @ti.kernel
        def k():
            for i in x:
                out[i] = fn(x[i], z[i])
    k()
    return out.to_numpy(), k


def _check(got, want, rel, what=''):
    """Same NaNs / infinities / zeros (with sign) as numpy; finite normal results within `rel`
    relative error; subnormal results within the subnormal range (absolute error < TINY)."""
    got, want = np.asarray(got), np.asarray(want)
    nan_w = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan_w), \
        f'{what}: NaN mismatch at {np.nonzero(np.isnan(got) != nan_w)[0][:5]}'
    inf_w = np.isinf(want)
    assert np.array_equal(got[inf_w], want[inf_w]), f'{what}: infinity mismatch'
    zero_w = want == 0
    assert np.array_equal(got[zero_w], want[zero_w]), f'{what}: zero mismatch'
    assert np.array_equal(np.signbit(got[zero_w | inf_w]), np.signbit(want[zero_w | inf_w])), \
        f'{what}: sign of zero/infinity'
    fin = np.isfinite(want) & ~zero_w
    normal = fin & (np.abs(want) >= TINY)
    err = np.abs(got[normal] - want[normal]) / np.abs(want[normal])
    worst = int(np.argmax(err)) if err.size else 0
    assert err.size == 0 or err.max() <= rel, \
        f'{what}: max relative error {err.max():.3g} at x={np.asarray(got)[normal][worst]!r}'
    sub = fin & ~normal
    assert np.all(np.abs(got[sub] - want[sub]) < TINY), f'{what}: subnormal results'
    return err.max() if err.size else 0.0


def _max_rel(got, want):
    m = np.isfinite(want) & (np.abs(want) >= TINY)
    return float(np.max(np.abs(got[m] - want[m]) / np.abs(want[m])))


# ---------------------------------------------------------------- unary functions
def _grid_exp():
    return np.concatenate([np.linspace(-745.2, 709.8, 40001), np.linspace(-1, 1, 4001),
                           _sym_log(-310, 2.85, 4000), SPECIAL,
                           [709.78, 709.7827128933840, 709.79, -745.13, -745.1332191019412, -746.0,
                            1.0, 0.5 * math.log(2), 1.5 * math.log(2)]])


def _grid_trig():
    k = np.arange(-40000, 40001, 7, dtype=np.float64)
    return np.concatenate([np.linspace(-10, 10, 20001), np.linspace(-1e5, 1e5, 100001),
                           np.random.default_rng(3).uniform(-1e5, 1e5, 50000),
                           _sym_log(-310, 5, 4000), SPECIAL[np.abs(SPECIAL) < 1e6],
                           [np.inf, -np.inf, np.nan],
                           k * (np.pi / 2), (k + 0.5) * np.pi / 2])


UNARY = {
    'exp': (ti.exp, np.exp, _grid_exp, REL),
    'log': (ti.log, np.log, lambda: np.concatenate([
        np.logspace(-323, 308, 40001), np.linspace(0.25, 4.0, 20001), 1 + _sym_log(-16, -1, 2000),
        SPECIAL, -np.logspace(-5, 5, 11), [np.nextafter(1.0, 2), np.nextafter(1.0, 0)]]), REL),
    'sin': (ti.sin, np.sin, _grid_trig, REL),
    'cos': (ti.cos, np.cos, _grid_trig, REL),
    'tan': (ti.tan, np.tan, _grid_trig, REL_TAN),
    'tanh': (ti.tanh, np.tanh, lambda: np.concatenate([
        np.linspace(-30, 30, 40001), _sym_log(-320, 2.5, 4000), SPECIAL,
        [0.17, -0.17, 1.0, -1.0, 22.0, -22.0]]), REL),
    'atan': (ti.atan, np.arctan, lambda: np.concatenate([
        np.linspace(-20, 20, 40001), _sym_log(-320, 308, 4000), SPECIAL,
        [0.4375, 0.6875, 1.1875, 2.4375, 2.0 ** 66]]), REL),
    'asin': (ti.asin, np.arcsin, lambda: np.concatenate([
        np.linspace(-1, 1, 40001), _sym_log(-320, 0, 4000), 1 - np.logspace(-16, -1, 300),
        -1 + np.logspace(-16, -1, 300), SPECIAL,
        [0.5, -0.5, 0.975, -0.975, 1.0000001, -2.0]]), REL),
    'acos': (ti.acos, np.arccos, lambda: np.concatenate([
        np.linspace(-1, 1, 40001), _sym_log(-320, 0, 4000), 1 - np.logspace(-16, -1, 300),
        -1 + np.logspace(-16, -1, 300), SPECIAL, [0.5, -0.5, 1.0000001, -2.0]]), REL),
}


@pytest.mark.parametrize('name', sorted(UNARY))
def test_unary_f64_against_numpy(name):
    tfn, npfn, grid, rel = UNARY[name]
    xs = grid()
    got, _ = _run(tfn, xs)
    with np.errstate(all='ignore'):
        want = npfn(xs)
    _check(got, want, rel, what=name)


def test_exp_special_values():
    xs = np.array([np.inf, -np.inf, np.nan, 710.0, 1e308, -746.0, -1e308, 0.0, -0.0,
                   709.782712893383, -745.1, -740.0])
    got, _ = _run(ti.exp, xs)
    assert got[0] == np.inf and got[1] == 0.0 and np.isnan(got[2])
    assert got[3] == np.inf and got[4] == np.inf            # overflow -> inf
    assert got[5] == 0.0 and got[6] == 0.0                  # underflow -> 0
    assert got[7] == 1.0 and got[8] == 1.0
    assert np.isfinite(got[9]) and got[9] == pytest.approx(np.exp(709.782712893383), rel=1e-15)
    assert 0 < got[11] < TINY                               # a subnormal result, not flushed
    assert abs(got[11] - np.exp(-740.0)) <= 1e-323


def test_log_special_values():
    xs = np.array([0.0, -0.0, -1.0, -np.inf, np.inf, np.nan, 1.0, 5e-324, TINY / 3, 2.0 ** 1023])
    got, _ = _run(ti.log, xs)
    assert got[0] == -np.inf and got[1] == -np.inf
    assert np.isnan(got[2]) and np.isnan(got[3]) and np.isnan(got[5])
    assert got[4] == np.inf and got[6] == 0.0
    np.testing.assert_allclose(got[7:], np.log(xs[7:]), rtol=1e-15, atol=0)


def test_trig_near_zeros_absolute_error():
    """Multiples of pi/2 (the doubles nearest to them) up to 1e5: sin/cos/tan are near zero or
    one there; the exact reduction keeps the absolute error at the 1e-16 level and
    the relative error of the tiny results small too."""
    k = np.arange(-63000, 63001, dtype=np.float64)
    xs = k * (np.pi / 2)
    for tfn, npfn in ((ti.sin, np.sin), (ti.cos, np.cos)):
        got, _ = _run(tfn, xs)
        want = npfn(xs)
        assert np.max(np.abs(got - want)) <= 1e-15
        assert _max_rel(got, want) <= 1e-14
    got, _ = _run(ti.tan, xs[k % 2 == 0])
    want = np.tan(xs[k % 2 == 0])
    assert np.max(np.abs(got - want)) <= 1e-15


def test_trig_large_arguments():
    """Full precision from 1e5 to 1.3e10 and at multiples of pi/2 there; beyond, finite and within
    [-1, 1] (and within 2 ulp: test_f64_trig_range.py)."""
    rng = np.random.default_rng(5)
    xs = np.concatenate([np.exp(rng.uniform(np.log(1e5), np.log(1.3e10), 40000)),
                         np.round(np.arange(1, 2001) * 1e7 * np.pi) / 2])
    xs = np.concatenate([xs, -xs])
    for tfn, npfn in ((ti.sin, np.sin), (ti.cos, np.cos)):
        got, _ = _run(tfn, xs)
        assert np.max(np.abs(got - npfn(xs))) <= 4e-16
    huge = np.concatenate([np.logspace(10.2, 307, 2000), -np.logspace(10.2, 307, 2000)])
    for tfn in (ti.sin, ti.cos, ti.tan):
        got, _ = _run(tfn, huge)
        assert np.isfinite(got).all()
        if tfn is not ti.tan:
            assert np.abs(got).max() <= 1.0


def test_trig_nonfinite_is_nan():
    for tfn in (ti.sin, ti.cos, ti.tan):
        got, _ = _run(tfn, np.array([np.inf, -np.inf, np.nan, 1.0]))
        assert np.isnan(got[:3]).all() and np.isfinite(got[3])


def test_inverse_trig_domain():
    xs = np.array([1.0, -1.0, 1.5, -1.5, np.inf, np.nan, -0.0, 0.0])
    s, _ = _run(ti.asin, xs)
    c, _ = _run(ti.acos, xs)
    assert s[0] == np.pi / 2 and s[1] == -np.pi / 2
    assert c[0] == 0.0 and c[1] == np.pi
    assert np.isnan(s[2:6]).all() and np.isnan(c[2:6]).all()
    assert s[6] == 0.0 and np.signbit(s[6]) and c[6] == np.pi / 2 and c[7] == np.pi / 2
    a, _ = _run(ti.atan, np.array([np.inf, -np.inf, np.nan, -0.0]))
    assert a[0] == np.pi / 2 and a[1] == -np.pi / 2 and np.isnan(a[2])
    assert a[3] == 0.0 and np.signbit(a[3])


def test_tanh_saturates_and_keeps_tiny():
    xs = np.array([np.inf, -np.inf, 25.0, -25.0, 1e-200, -1e-200, 5e-324, np.nan])
    got, _ = _run(ti.tanh, xs)
    assert list(got[:4]) == [1.0, -1.0, 1.0, -1.0]
    assert got[4] == 1e-200 and got[5] == -1e-200 and got[6] == 5e-324 and np.isnan(got[7])


# ---------------------------------------------------------------- binary functions
def test_pow_runtime_exponent_against_numpy():
    rng = np.random.default_rng(7)
    n = 60000
    x = np.concatenate([np.exp(rng.uniform(-25, 25, n)), rng.uniform(0, 3, n),
                        np.exp(rng.uniform(-700, 700, n // 4)),
                        1 + rng.uniform(-1e-6, 1e-6, n // 4),                      # close to 1
                        -np.round(rng.uniform(0, 40, n // 2)),                     # negative bases
                        -rng.uniform(0, 5, n // 4)])
    y = np.concatenate([rng.uniform(-30, 30, n), rng.uniform(-600, 600, n),
                        rng.uniform(-1.5, 1.5, n // 4), rng.uniform(-1e8, 1e8, n // 4),
                        np.round(rng.uniform(-60, 60, n // 2)),                    # integers
                        rng.uniform(-5, 5, n // 4)])                               # -> NaN
    got, _ = _run(lambda a, b: a ** b, x, y)
    with np.errstate(all='ignore'):
        want = np.power(x, y)
    _check(got, want, REL, what='pow')


def test_pow_special_values():
    xs = np.array([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 3.0, -3.0, np.inf, -np.inf, np.nan,
                   5e-324, 1e308, 1 + 2.0 ** -30, 1 - 2.0 ** -40, 10.0])
    ys = np.array([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 0.5, -0.5, 2.5, -2.5, np.inf,
                   -np.inf, np.nan, 1e10, -1e10, 1e300, 2.0 ** 53, 2.0 ** 53 + 2, 1075.0, -1075.0,
                   0.1])
    X, Y = (a.ravel() for a in np.meshgrid(xs, ys))
    got, _ = _run(lambda a, b: a ** b, X, Y)
    with np.errstate(all='ignore'):
        want = np.power(X, Y)
    _check(got, want, REL, what='pow specials')
    # integer powers of integers are exact
    b = np.arange(-12.0, 13.0)
    e = np.arange(0.0, 15.0)
    B, E = (a.ravel() for a in np.meshgrid(b, e))
    got, _ = _run(lambda a, c: a ** c, B, E)
    assert np.array_equal(got, B ** E)


def test_atan2_against_numpy():
    rng = np.random.default_rng(11)
    n = 100000
    a = rng.normal(size=n) * np.exp(rng.uniform(-40, 40, n))
    b = rng.normal(size=n) * np.exp(rng.uniform(-40, 40, n))
    sp = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, 1e-300, -1e300, 5e-324, 3.0])
    A, B = (v.ravel() for v in np.meshgrid(sp, sp))
    ys, xs = np.concatenate([a, A, np.sin(np.linspace(0, 7, 2001))]), \
        np.concatenate([b, B, np.cos(np.linspace(0, 7, 2001))])
    got, _ = _run(lambda p, q: ti.atan2(p, q), ys, xs)
    _check(got, np.arctan2(ys, xs), REL, what='atan2')


# ---------------------------------------------------------------- lowering / integration
F64_GLSL = ('Sin', 'Cos', 'Tan', 'Asin', 'Acos', 'Atan', 'Atan2', 'Exp', 'Log', 'Pow', 'Tanh')


def _glsl_ext_insts(spirv, type_name):
    return {line.split()[5] for line in spirv.splitlines()
            if 'OpExtInst' in line and line.split()[3] == type_name}


def test_f64_kernel_has_no_glsl_transcendentals():
    n = 8
    x = ti.field(ti.f64, shape=n)
    y = ti.field(ti.f64, shape=n)
    x.from_numpy(np.linspace(0.1, 0.9, n))

    @ti.kernel
    def k():
        for i in x:
            v = x[i]
            y[i] = (ti.sin(v) + ti.cos(v) + ti.tan(v) + ti.asin(v) + ti.acos(v) + ti.atan(v)
                    + ti.exp(v) + ti.log(v) + ti.tanh(v) + v ** x[(i + 1) % n] + ti.atan2(v, 2.0))

    k()
    v = np.linspace(0.1, 0.9, n)
    want = (np.sin(v) + np.cos(v) + np.tan(v) + np.arcsin(v) + np.arccos(v) + np.arctan(v)
            + np.exp(v) + np.log(v) + np.tanh(v) + v ** np.roll(v, -1) + np.arctan2(v, 2.0))
    np.testing.assert_allclose(y.to_numpy(), want, rtol=1e-15)
    used = _glsl_ext_insts(k.spirv(), '%double')
    assert not used & set(F64_GLSL), used


def test_f32_keeps_native_glsl():
    xs = np.linspace(0.05, 0.95, 64).astype(np.float32)
    n = len(xs)
    x = ti.field(ti.f32, shape=n)
    out = ti.field(ti.f32, shape=(n, 11))
    x.from_numpy(xs)

    @ti.kernel
    def k():
        for i in x:
            v = x[i]
            out[i, 0] = ti.sin(v)
            out[i, 1] = ti.cos(v)
            out[i, 2] = ti.tan(v)
            out[i, 3] = ti.asin(v)
            out[i, 4] = ti.acos(v)
            out[i, 5] = ti.atan(v)
            out[i, 6] = ti.exp(v)
            out[i, 7] = ti.log(v)
            out[i, 8] = ti.tanh(v)
            out[i, 9] = v ** x[n - 1 - i]
            out[i, 10] = ti.atan2(v, 0.5)

    k()
    v = xs.astype(np.float64)
    want = np.stack([np.sin(v), np.cos(v), np.tan(v), np.arcsin(v), np.arccos(v), np.arctan(v),
                     np.exp(v), np.log(v), np.tanh(v), v ** v[::-1], np.arctan2(v, 0.5)], axis=1)
    np.testing.assert_allclose(out.to_numpy(), want, rtol=2e-5, atol=1e-6)
    spirv = k.spirv()
    used = _glsl_ext_insts(spirv, '%float')
    # (codegen computes f32 asin/acos through Atan2, for accuracy)
    assert set(F64_GLSL) - {'Asin', 'Acos'} <= used, used
    assert 'OpTypeFloat 64' not in spirv


def test_lowering_in_control_flow_and_shared_results():
    n = 64
    x = ti.field(ti.f64, shape=n)
    y = ti.field(ti.f64, shape=n)
    acc = ti.field(ti.f64, shape=())
    xs = np.linspace(-3, 3, n)
    x.from_numpy(xs)

    @ti.kernel
    def k():
        for i in x:
            v = x[i]
            if v > 0:
                y[i] = ti.log(v)
            else:
                s = ti.sin(v)
                y[i] = s * s + s + ti.exp(v)
        for _ in range(1):
            a = ti.f64(0.5)
            for j in range(5):                               # inner loop: serial, loop-carried
                a = ti.cos(a) + ti.atan(a) ** 2.0
            acc[None] = a

    k()
    with np.errstate(divide='ignore', invalid='ignore'):
        want = np.where(xs > 0, np.log(np.abs(xs)), np.sin(xs) ** 2 + np.sin(xs) + np.exp(xs))
    np.testing.assert_allclose(y.to_numpy(), want, rtol=1e-15)
    a = 0.5
    for _ in range(5):
        a = math.cos(a) + math.atan(a) ** 2
    assert acc[None] == pytest.approx(a, rel=1e-15)


def test_f64_gradient_through_lowered_functions():
    x = ti.field(ti.f64, shape=(), needs_grad=True)
    y = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def f():
        y[None] = ti.sin(x[None]) * ti.exp(x[None]) + ti.log(x[None])

    x[None] = 0.7
    with ti.Tape(y):
        f()
    v = 0.7
    assert y[None] == pytest.approx(math.sin(v) * math.exp(v) + math.log(v), rel=1e-15)
    assert x.grad[None] == pytest.approx((math.cos(v) + math.sin(v)) * math.exp(v) + 1 / v,
                                         rel=1e-14)


def test_python_scope_math_returns_floats():
    for fn, ref in ((ti.sin, math.sin), (ti.cos, math.cos), (ti.tan, math.tan), (ti.exp, math.exp),
                    (ti.log, math.log), (ti.tanh, math.tanh), (ti.atan, math.atan),
                    (ti.asin, math.asin), (ti.acos, math.acos)):
        r = fn(0.5)
        assert type(r) is float and r == pytest.approx(ref(0.5), rel=1e-15)
    assert type(ti.sin(1.0)) is float and ti.sin(1.0) == pytest.approx(math.sin(1.0), rel=1e-15)
    r = ti.atan2(1.0, 2.0)
    assert isinstance(r, float) and r == pytest.approx(math.atan2(1.0, 2.0), rel=1e-15)


def _round_half_away(xs):
    """C's round(): to nearest, ties away from zero (exact, through decimal), sign kept."""
    ctx = decimal.Context(prec=400, rounding=decimal.ROUND_HALF_UP)
    out = [math.copysign(float(decimal.Decimal(float(v)).quantize(decimal.Decimal(1), context=ctx)),
                         v) if math.isfinite(v) else v for v in xs.tolist()]
    return np.array(out, dtype=xs.dtype)


@pytest.mark.parametrize('dtype', [ti.f64, ti.f32, ti.f16])
def test_round_half_away_from_zero_at_every_magnitude(dtype):
    """ti.round in a kernel rounds ties away from zero, as Taichi 1.7.4's CPU (llvm.round) and
    CUDA backends do (its Vulkan backend's GLSL Round is implementation-defined), at every
    magnitude, keeping the sign of zero. Mesa 22.3.6 (Debian's deb12u2 lavapipe) returns the
    input of an f64 RoundEven unchanged from about 2^26 on (round(63661977.2367) gave
    63661977.2367), so f64 is vkdiff's own code."""
    rng = np.random.default_rng(11)
    big = {ti.f64: 2.0 ** 52, ti.f32: 2.0 ** 23, ti.f16: 2.0 ** 10}[dtype]
    top = 1e300 if dtype is ti.f64 else 6e4
    xs = np.concatenate([
        np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999999999999994, 3.0, -3.0, 0.0, -0.0,
                  -0.4, big - 0.5, big + 1, -(big + 2), top, -top]),
        np.exp(rng.uniform(-3, np.log(big), 4000)) * rng.choice([-1, 1], 4000),
        np.floor(rng.uniform(0, big, 500)) + 0.5])
    xs = xs.astype(dtype.np)
    got, _ = _run(ti.round, xs, dtype=dtype)
    want = _round_half_away(xs)
    assert np.array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))  # round(-0.4) is -0.0
    special, _ = _run(ti.round, np.array([np.inf, -np.inf, np.nan], dtype=dtype.np), dtype=dtype)
    assert special[0] == np.inf and special[1] == -np.inf and np.isnan(special[2])


def test_round_ties_in_python_scope_and_on_literals_are_numpys():
    """Taichi evaluates ti.round of Python numbers with np.round (ties to even), in Python scope
    and on literals in a kernel; run-time values round ties away from zero."""
    assert [ti.round(v) for v in (0.5, 1.5, 2.5, -2.5)] == [0.0, 2.0, 2.0, -2.0]

    @ti.kernel
    def k(v: ti.f32) -> ti.types.vector(3, ti.f32):
        a = 2.5
        return ti.Vector([ti.round(2.5), ti.round(a), ti.round(v)])

    assert [float(e) for e in k(-2.5)] == [2.0, 3.0, -3.0]
    assert ti.round(2.5, ti.i32) == 2
