"""ti.polar_decompose / ti.svd / ti.sym_eig (2x2), ti.randn, static_assert/static_print."""
import numpy as np
import pytest

import vkdiff as ti


def test_polar_svd_eig_2x2():
    n = 64
    A = ti.Matrix.field(2, 2, ti.f64, shape=n)
    R = ti.Matrix.field(2, 2, ti.f64, shape=n)
    S = ti.Matrix.field(2, 2, ti.f64, shape=n)
    U = ti.Matrix.field(2, 2, ti.f64, shape=n)
    sig = ti.Matrix.field(2, 2, ti.f64, shape=n)
    V = ti.Matrix.field(2, 2, ti.f64, shape=n)
    ev = ti.Vector.field(2, ti.f64, shape=n)
    Q = ti.Matrix.field(2, 2, ti.f64, shape=n)

    @ti.kernel
    def k():
        for i in A:
            r, s = ti.polar_decompose(A[i])
            R[i] = r
            S[i] = s
            u, sg, v = ti.svd(A[i])
            U[i] = u
            sig[i] = sg
            V[i] = v
            sym = A[i] + A[i].transpose()
            e, q = ti.sym_eig(sym)
            ev[i] = e
            Q[i] = q

    rng = np.random.default_rng(0)
    As = rng.standard_normal((n, 2, 2))
    As[:, 0, 0] += 2.0  # keep det > 0 for a proper rotation in most cases
    A.from_numpy(As)
    k()
    Rs, Ss = R.to_numpy(), S.to_numpy()
    np.testing.assert_allclose(Rs @ Ss, As, atol=1e-12)
    np.testing.assert_allclose(Rs @ Rs.transpose(0, 2, 1), np.broadcast_to(np.eye(2), (n, 2, 2)), atol=1e-12)
    np.testing.assert_allclose(Ss, Ss.transpose(0, 2, 1), atol=1e-12)
    Us, sg, Vs = U.to_numpy(), sig.to_numpy(), V.to_numpy()
    np.testing.assert_allclose(Us @ sg @ Vs.transpose(0, 2, 1), As, atol=1e-10)
    ref = np.linalg.svd(As, compute_uv=False)
    d = np.stack([sg[:, 0, 0], sg[:, 1, 1]], 1)
    # vkdiff (like Taichi) keeps det(U) = det(V) = +1, so the smaller value may carry the sign
    np.testing.assert_allclose(np.abs(d), ref, atol=1e-10)
    sym = As + As.transpose(0, 2, 1)
    e, q = ev.to_numpy(), Q.to_numpy()
    np.testing.assert_allclose(e, np.linalg.eigvalsh(sym)[:, ::-1], atol=1e-10)
    np.testing.assert_allclose(sym @ q, q * e[:, None, :], atol=1e-9)


def test_polar_decompose_is_differentiable():
    A = ti.Matrix.field(2, 2, ti.f64, shape=(), needs_grad=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def f():
        r, s = ti.polar_decompose(A[None])
        loss[None] += r[0, 1] * 3 + s[1, 1]

    A0 = np.array([[1.5, 0.3], [-0.2, 0.8]])
    A.from_numpy(A0)
    with ti.Tape(loss):
        f()

    def ref(M):
        x, y = M[0, 0] + M[1, 1], M[1, 0] - M[0, 1]
        c, s = x / np.hypot(x, y), y / np.hypot(x, y)
        Rm = np.array([[c, -s], [s, c]])
        return Rm[0, 1] * 3 + (Rm.T @ M)[1, 1]

    h, g = 1e-6, np.zeros((2, 2))
    for idx in np.ndindex(2, 2):
        d = np.zeros((2, 2))
        d[idx] = h
        g[idx] = (ref(A0 + d) - ref(A0 - d)) / (2 * h)
    np.testing.assert_allclose(A.grad.to_numpy(), g, rtol=1e-7, atol=1e-9)


def test_3x3_decomposition_is_a_clear_error():
    A = ti.Matrix.field(3, 3, ti.f32, shape=())

    @ti.kernel
    def f():
        r, s = ti.polar_decompose(A[None])

    with pytest.raises(ti.CompileError, match='2x2'):
        f()


def test_randn_moments():
    n = 200_000
    x = ti.field(ti.f32, shape=n)

    @ti.kernel
    def f():
        for i in x:
            x[i] = ti.randn()

    f()
    a = x.to_numpy().astype(np.float64)
    assert abs(a.mean()) < 0.01 and abs(a.std() - 1) < 0.01
    assert abs((a ** 3).mean()) < 0.03 and abs((a ** 4).mean() - 3) < 0.05


def test_static_assert_and_print(capsys):
    x = ti.field(ti.f32, shape=4)

    @ti.kernel
    def ok():
        ti.static_assert(x.shape[0] == 4)
        ti.static_print('shape is', x.shape)
        for i in x:
            x[i] = 1

    @ti.kernel
    def bad():
        ti.static_assert(x.shape[0] == 5, 'need 5')

    ok()
    assert 'shape is (4,)' in capsys.readouterr().out
    with pytest.raises(ti.CompileError, match='need 5'):
        bad()


def test_raw_div_raw_mod_isnan_isinf():
    a = np.array([7, -7, 7, -7, 6, -6], np.int32)
    b = np.array([2, 2, -2, -2, 3, -3], np.int32)
    fa = ti.field(ti.i32, shape=6)
    fb = ti.field(ti.i32, shape=6)
    q = ti.field(ti.i32, shape=6)
    r = ti.field(ti.i32, shape=6)
    xf = ti.field(ti.f32, shape=4)
    rf = ti.field(ti.f32, shape=4)
    flags = ti.field(ti.i32, shape=(4, 2))

    @ti.kernel
    def k():
        for i in fa:
            q[i] = ti.raw_div(fa[i], fb[i])
            r[i] = ti.raw_mod(fa[i], fb[i])
        for i in xf:
            rf[i] = ti.raw_mod(xf[i], 2.0)
            flags[i, 0] = ti.isnan(xf[i])
            flags[i, 1] = ti.isinf(xf[i])

    fa.from_numpy(a)
    fb.from_numpy(b)
    xs = np.array([-5.5, 5.5, np.nan, -np.inf], np.float32)
    xf.from_numpy(xs)
    k()
    np.testing.assert_array_equal(q.to_numpy(), np.trunc(a / b).astype(np.int32))
    np.testing.assert_array_equal(r.to_numpy(), np.fmod(a, b))
    np.testing.assert_array_equal(rf.to_numpy()[:2], np.fmod(xs[:2], 2.0))
    np.testing.assert_array_equal(flags.to_numpy(), [[0, 0], [0, 0], [1, 0], [0, 1]])
