"""Every differentiable op: the reverse gradient against central finite differences in f64, and
the forward-mode JVP against the dot product of the reverse gradient with the seed (f32 and f64)."""
import numpy as np
import pytest
from device_requires import F64, requires

import vkdiff as ti

UNARY = {
    'sin': (ti.sin, np.sin, (-3, 3)), 'cos': (ti.cos, np.cos, (-3, 3)),
    'tan': (ti.tan, np.tan, (-1.2, 1.2)), 'asin': (ti.asin, np.arcsin, (-0.9, 0.9)),
    'acos': (ti.acos, np.arccos, (-0.9, 0.9)), 'atan': (ti.atan, np.arctan, (-3, 3)),
    'sqrt': (ti.sqrt, np.sqrt, (0.1, 4)), 'rsqrt': (ti.rsqrt, lambda x: 1 / np.sqrt(x), (0.1, 4)),
    'exp': (ti.exp, np.exp, (-2, 2)), 'log': (ti.log, np.log, (0.1, 4)),
    'tanh': (ti.tanh, np.tanh, (-2, 2)), 'abs': (ti.abs, np.abs, (-2, 2)),
    'neg': (lambda v: -v, np.negative, (-2, 2)),
    'square': (lambda v: v ** 2, np.square, (-2, 2)),
    'cube_inv': (lambda v: v ** -3, lambda x: x ** -3.0, (0.5, 2)),
    # the literal 1.7 is a default_fp (f32) constant, as in Taichi 1.7.4: f64 2.0 ** 1.7 there
    # prints 3.2490096928106666 = 2.0 ** float(np.float32(1.7))
    'pow_const': (lambda v: v ** 1.7, lambda x: x ** float(np.float32(1.7)), (0.2, 3)),
    'cast_roundtrip': (lambda v: ti.cast(ti.cast(v, ti.f32), ti.f64) * 2, lambda x: x * 2, (-1, 1)),
}
BINARY = {
    'add': (lambda a, b: a + b, np.add), 'sub': (lambda a, b: a - b, np.subtract),
    'mul': (lambda a, b: a * b, np.multiply), 'div': (lambda a, b: a / b, np.divide),
    'pow': (lambda a, b: a ** b, np.power), 'atan2': (ti.atan2, np.arctan2),
    'min': (ti.min, np.minimum), 'max': (ti.max, np.maximum),
    'select': (lambda a, b: ti.select(a > b, a * b, a - b), lambda a, b: np.where(a > b, a * b, a - b)),
    'mod': (lambda a, b: a % b, np.mod),
}


def _grad_unary(op, dt, xs):
    x = ti.field(dt, shape=len(xs), needs_grad=True)
    loss = ti.field(dt, shape=(), needs_grad=True)

    @ti.kernel
    def f():
        for i in x:
            loss[None] += op(x[i])

    x.from_numpy(xs.astype(dt.np))
    with ti.Tape(loss):
        f()
    return x.grad.to_numpy(), loss[None]


@pytest.mark.parametrize('name', sorted(UNARY))
@pytest.mark.requires('float64')
def test_unary_gradient_vs_finite_differences(name):
    op, ref, (lo, hi) = UNARY[name]
    xs = np.linspace(lo, hi, 37)
    xs = xs[np.abs(xs) > 1e-3]  # keep away from the kink of abs
    g, total = _grad_unary(op, ti.f64, xs)
    h = 1e-6
    fd = (ref(xs + h) - ref(xs - h)) / (2 * h)
    assert total == pytest.approx(ref(xs).sum(), rel=1e-12)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize('name', sorted(BINARY))
@pytest.mark.requires('float64')
def test_binary_gradient_vs_finite_differences(name):
    op, ref = BINARY[name]
    rng = np.random.default_rng(1)
    av = rng.uniform(0.3, 2.0, 40)
    bv = rng.uniform(0.3, 2.0, 40)
    far = np.abs(av - bv) > 1e-3
    if name == 'mod':
        far &= np.abs(av / bv - np.round(av / bv)) > 1e-3
    av, bv = av[far], bv[far]
    a = ti.field(ti.f64, shape=len(av), needs_grad=True)
    b = ti.field(ti.f64, shape=len(av), needs_grad=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def f():
        for i in a:
            loss[None] += op(a[i], b[i])

    a.from_numpy(av)
    b.from_numpy(bv)
    with ti.Tape(loss):
        f()
    h = 1e-6
    np.testing.assert_allclose(a.grad.to_numpy(), (ref(av + h, bv) - ref(av - h, bv)) / (2 * h),
                               rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(b.grad.to_numpy(), (ref(av, bv + h) - ref(av, bv - h)) / (2 * h),
                               rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize('dt', [ti.f32, F64])
@pytest.mark.parametrize('name', [pytest.param(n, marks=requires('float64')) if n == 'cast_roundtrip'
                                  else n for n in sorted(UNARY)])
def test_unary_jvp_equals_reverse_dot_seed(name, dt):
    op, _, (lo, hi) = UNARY[name]
    xs = np.linspace(lo, hi, 16)
    xs = xs[np.abs(xs) > 1e-3]
    n = len(xs)
    x = ti.field(dt, shape=n, needs_grad=True, needs_dual=True)
    loss = ti.field(dt, shape=(), needs_grad=True, needs_dual=True)

    @ti.kernel
    def f():
        for i in x:
            loss[None] += op(x[i])

    x.from_numpy(xs.astype(dt.np))
    with ti.Tape(loss):
        f()
    g = x.grad.to_numpy().astype(np.float64)
    seed = np.random.default_rng(2).standard_normal(n)
    loss[None] = 0
    with ti.ad.FwdMode(loss=loss, param=x, seed=list(seed)):
        f()
    rtol = 1e-5 if dt is ti.f32 or name == 'cast_roundtrip' else 1e-12  # f32 in the middle
    assert loss.dual[None] == pytest.approx(float(g @ seed), rel=rtol, abs=rtol)


@pytest.mark.parametrize('dt', [ti.f32, F64])
@pytest.mark.parametrize('name', sorted(BINARY))
def test_binary_jvp_equals_reverse_dot_seed(name, dt):
    op, _ = BINARY[name]
    rng = np.random.default_rng(3)
    av, bv = rng.uniform(0.3, 2.0, 12), rng.uniform(0.3, 2.0, 12)
    a = ti.field(dt, shape=12, needs_grad=True, needs_dual=True)
    b = ti.field(dt, shape=12, needs_grad=True, needs_dual=True)
    loss = ti.field(dt, shape=(), needs_grad=True, needs_dual=True)

    @ti.kernel
    def f():
        for i in a:
            loss[None] += op(a[i], b[i])

    a.from_numpy(av.astype(dt.np))
    b.from_numpy(bv.astype(dt.np))
    with ti.Tape(loss):
        f()
    ga, gb = a.grad.to_numpy().astype(np.float64), b.grad.to_numpy().astype(np.float64)
    seed = rng.standard_normal(12)
    rtol = 1e-5 if dt is ti.f32 else 1e-12
    for p, g in ((a, ga), (b, gb)):
        loss[None] = 0
        with ti.ad.FwdMode(loss=loss, param=p, seed=list(seed)):
            f()
        assert loss.dual[None] == pytest.approx(float(g @ seed), rel=rtol, abs=rtol)


def test_norm_at_zero_vector_has_zero_gradient():
    x = ti.Vector.field(3, ti.f32, shape=2, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def f():
        for i in x:
            loss[None] += x[i].norm() + x[i].norm(1e-2)

    x[1] = [3, 0, 4]
    with ti.Tape(loss):
        f()
    np.testing.assert_array_equal(x.grad.to_numpy()[0], [0, 0, 0])
    np.testing.assert_allclose(x.grad.to_numpy()[1], np.array([3, 0, 4]) / 5 + np.array([3, 0, 4]) / np.sqrt(25.01),
                               rtol=1e-6)


def test_floor_and_int_casts_have_zero_gradient():
    x = ti.field(ti.f32, shape=4, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def f():
        for i in x:
            loss[None] += ti.floor(x[i]) + ti.cast(ti.cast(x[i] * 3, ti.i32), ti.f32) + x[i]

    x.from_numpy(np.array([0.5, 1.5, 2.25, -1.75], np.float32))
    with ti.Tape(loss):
        f()
    np.testing.assert_array_equal(x.grad.to_numpy(), [1, 1, 1, 1])


@pytest.mark.requires('float64')
def test_vector_and_matrix_ops_gradient():
    n = 5
    a = ti.Vector.field(3, ti.f64, shape=n, needs_grad=True)
    M = ti.Matrix.field(3, 3, ti.f64, shape=n, needs_grad=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def f():
        for i in a:
            v = M[i] @ a[i]
            w = v.cross(a[i]) + v.normalized() * a[i].dot(v)
            loss[None] += w.norm_sqr() + (M[i].transpose() @ M[i]).trace() + a[i].outer_product(v).sum()

    rng = np.random.default_rng(4)
    A, MM = rng.standard_normal((n, 3)), rng.standard_normal((n, 3, 3))
    a.from_numpy(A)
    M.from_numpy(MM)
    with ti.Tape(loss):
        f()

    def ref(A, MM):
        v = np.einsum('nij,nj->ni', MM, A)
        w = np.cross(v, A) + v / np.linalg.norm(v, axis=1, keepdims=True) * (A * v).sum(1, keepdims=True)
        return (w ** 2).sum() + np.einsum('nij,nij->', MM, MM) + (A[:, :, None] * v[:, None, :]).sum()

    h = 1e-6
    ga = np.zeros_like(A)
    for idx in np.ndindex(A.shape):
        d = np.zeros_like(A)
        d[idx] = h
        ga[idx] = (ref(A + d, MM) - ref(A - d, MM)) / (2 * h)
    gm = np.zeros_like(MM)
    for idx in np.ndindex(MM.shape):
        d = np.zeros_like(MM)
        d[idx] = h
        gm[idx] = (ref(A, MM + d) - ref(A, MM - d)) / (2 * h)
    np.testing.assert_allclose(a.grad.to_numpy(), ga, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(M.grad.to_numpy(), gm, rtol=1e-6, atol=1e-6)
