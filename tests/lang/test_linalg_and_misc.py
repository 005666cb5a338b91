"""ti.polar_decompose / ti.svd / ti.sym_eig (2x2 and 3x3), ti.randn, static_assert/static_print."""
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
    np.testing.assert_allclose(d, ref, atol=1e-10)  # both >= 0, as in Taichi
    sym = As + As.transpose(0, 2, 1)
    e, q = ev.to_numpy(), Q.to_numpy()
    np.testing.assert_allclose(e, np.linalg.eigvalsh(sym)[:, ::-1], atol=1e-10)
    np.testing.assert_allclose(sym @ q, q * e[:, None, :], atol=1e-9)


@pytest.mark.parametrize('dt', [ti.f32, ti.f64])
def test_polar_and_svd_2x2_with_negative_determinant_and_zero(dt):
    """Taichi 1.7.4's 2x2 polar decomposition: for det(A) < 0, U is a reflection and P stays
    positive semi-definite (U = B / sqrt|det B| with B = [[a-d, b+c], [c+b, d-a]], P = (A^T A +
    |det A| I) / sqrt|det B|), so svd's singular values are both >= 0; the zero matrix gives
    (I, 0). vkdiff returned a rotation with an indefinite P (P[1, 1] = -0.97 for Taichi's
    1.23 on one matrix), a negative singular value, and NaN for the zero matrix."""
    A = ti.Matrix.field(2, 2, dt, shape=2)
    U = ti.Matrix.field(2, 2, dt, shape=2)
    P = ti.Matrix.field(2, 2, dt, shape=2)
    sig = ti.Matrix.field(2, 2, dt, shape=2)

    @ti.kernel
    def k():
        for i in A:
            u, p = ti.polar_decompose(A[i])
            U[i] = u
            P[i] = p
            _, s, _ = ti.svd(A[i])
            sig[i] = s

    A.from_numpy(np.array([[[1.0, 2.0], [3.0, 4.0]], [[0.0, 0.0], [0.0, 0.0]]]))
    k()
    tol = 1e-6 if dt == ti.f32 else 1e-12
    h = np.sqrt(34.0)
    np.testing.assert_allclose(U.to_numpy()[0], np.array([[-3.0, 5.0], [5.0, 3.0]]) / h, atol=tol)
    np.testing.assert_allclose(P.to_numpy()[0], np.array([[12.0, 14.0], [14.0, 22.0]]) / h,
                               atol=tol * 10)
    sv = np.linalg.svd(np.array([[1.0, 2.0], [3.0, 4.0]]), compute_uv=False)
    np.testing.assert_allclose(np.diag(sig.to_numpy()[0]), sv, rtol=tol * 10)
    assert U.to_numpy()[1].tolist() == [[1, 0], [0, 1]] and P.to_numpy()[1].tolist() == [[0, 0], [0, 0]]


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


def test_4x4_decomposition_is_a_clear_error():
    A = ti.Matrix.field(4, 4, ti.f32, shape=())

    @ti.kernel
    def f():
        r, s = ti.polar_decompose(A[None])

    with pytest.raises(ti.CompileError, match='2x2 and 3x3'):
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

    @ti.kernel
    def runtime_condition():
        value = False
        ti.static_assert(value, 'Oh, no!')

    with pytest.raises(ti.TaichiTypeError, match='Static assert with non-static condition'):
        runtime_condition()


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


# ------------------------------------------------------------------------------- 3x3 decompositions
def _rot(rng):
    q, r = np.linalg.qr(rng.standard_normal((3, 3)))
    q = q * np.sign(np.diag(r))
    return q * np.linalg.det(q)  # det +1


def _cases_3x3(rng, n_random):
    """Random matrices, then degenerate ones: zero, identity, diagonals (unsorted, negative,
    repeated), rank 1 and 2, repeated singular values, rotations, a reflection, an
    ill-conditioned one, tiny and huge scales (1e+-15: |A|^2 still in f32's range)."""
    mats = list(rng.standard_normal((n_random, 3, 3)))
    Q1, Q2 = _rot(rng), _rot(rng)
    u, v = rng.standard_normal(3), rng.standard_normal(3)
    mats += [np.zeros((3, 3)), np.eye(3), np.diag([3.0, 1.0, 2.0]), np.diag([-1.0, 2.0, 0.5]),
             np.diag([2.0, 2.0, 2.0]), np.diag([0.0, 1.0, 0.0]), np.outer(u, v),
             np.outer(u, v) + np.outer(v, u), Q1 @ np.diag([2.0, 2.0, 1.0]) @ Q2.T,
             Q1 @ np.diag([1.0, 3.0, 3.0]) @ Q2.T, Q1 @ np.diag([1.0, 1.0, 1.0]) @ Q2.T, Q1,
             Q1 @ np.diag([1.0, 1.0, -1.0]), 1e-4 * rng.standard_normal((3, 3)),
             1e4 * rng.standard_normal((3, 3)), Q1 @ np.diag([1.0, 1e-3, 1e-6]) @ Q2.T,
             Q1 @ np.diag([1.0, 1.0, 0.0]) @ Q2.T, 1e-15 * rng.standard_normal((3, 3)),
             1e15 * rng.standard_normal((3, 3))]
    return np.array(mats)


def _run_3x3(dt, As):
    n = len(As)
    A = ti.Matrix.field(3, 3, dt, shape=n)
    U, sig, V, R, S, Q = (ti.Matrix.field(3, 3, dt, shape=n) for _ in range(6))
    ev = ti.Vector.field(3, dt, shape=n)

    @ti.kernel
    def k():
        for i in A:
            u, sg, v = ti.svd(A[i])
            U[i] = u
            sig[i] = sg
            V[i] = v
            r, s = ti.polar_decompose(A[i])
            R[i] = r
            S[i] = s
            e, q = ti.sym_eig(A[i] + A[i].transpose())
            ev[i] = e
            Q[i] = q

    A.from_numpy(As)
    k()
    return [f.to_numpy().astype(np.float64) for f in (A, U, sig, V, R, S, ev, Q)]


@pytest.mark.parametrize('dt, tol', [(ti.f64, 1e-12), (ti.f32, 3e-6)])
def test_svd_polar_sym_eig_3x3(dt, tol):
    rng = np.random.default_rng(7)
    As = _cases_3x3(rng, 256)
    A, U, sg, V, R, S, ev, Q = _run_3x3(dt, As)  # A as stored (rounded to f32 for f32)
    n, I = len(A), np.broadcast_to(np.eye(3), (len(A), 3, 3))
    scale = np.maximum(np.abs(A).max((1, 2)), 1e-30)[:, None, None]

    def close(x, y, what, s=scale):
        err = (np.abs(x - y) / s).max()
        assert err < tol, f'{what}: relative error {err:.2e}'

    # svd: A = U diag(sigma) V^T, U and V rotations, |sigma| = numpy's, only the last one signed
    d = np.stack([sg[:, i, i] for i in range(3)], 1)
    close(sg, d[:, :, None] * I, 'sigma is diagonal', 1)
    close(U @ sg @ V.transpose(0, 2, 1), A, 'U S V^T')
    close(U @ U.transpose(0, 2, 1), I, 'U orthogonal', 1)
    close(V @ V.transpose(0, 2, 1), I, 'V orthogonal', 1)
    close(np.linalg.det(U)[:, None, None], 1, 'det U', 1)
    close(np.linalg.det(V)[:, None, None], 1, 'det V', 1)
    ref = np.linalg.svd(A, compute_uv=False)
    close(np.abs(d)[:, :, None], ref[:, :, None], 'singular values')
    assert (d[:, :2] >= 0).all()
    det = np.linalg.det(A)
    big = np.abs(det) > 1e-3 * scale[:, 0, 0] ** 3
    assert (np.sign(d[big, 2]) == np.sign(det[big])).all()
    # polar: R a rotation, S symmetric, R S = A
    close(R @ R.transpose(0, 2, 1), I, 'R orthogonal', 1)
    close(np.linalg.det(R)[:, None, None], 1, 'det R', 1)
    close(S, S.transpose(0, 2, 1), 'S symmetric')
    close(R @ S, A, 'R S')
    # sym_eig: eigenvalues decreasing, matching eigh; eigenvectors orthonormal columns, det +1
    sym = A + A.transpose(0, 2, 1)
    close(ev[:, :, None], np.linalg.eigvalsh(sym)[:, ::-1, None], 'eigenvalues', 2 * scale)
    assert (np.diff(ev, axis=1) <= 0).all()
    close(sym @ Q, Q * ev[:, None, :], 'A Q = Q diag(e)', 2 * scale)
    close(Q @ Q.transpose(0, 2, 1), I, 'Q orthogonal', 1)
    close(np.linalg.det(Q)[:, None, None], 1, 'det Q', 1)


def test_svd_3x3_exact_cases():
    As = np.array([np.eye(3), np.diag([1.0, 3.0, 2.0]), np.diag([2.0, -1.0, 1.0]),
                   np.zeros((3, 3))])
    A, U, sg, V, R, S, ev, Q = _run_3x3(ti.f64, As)
    sig = np.stack([sg[:, i, i] for i in range(3)], 1)
    np.testing.assert_allclose(sig, [[1, 1, 1], [3, 2, 1], [2, 1, -1], [0, 0, 0]], atol=1e-15)
    np.testing.assert_allclose(R[0], np.eye(3), atol=1e-15)
    np.testing.assert_allclose(S[1], As[1], atol=1e-15)  # diagonal, positive: R = I, S = A
    np.testing.assert_allclose(ev[0], [2, 2, 2], atol=1e-15)
    np.testing.assert_allclose(ev[1], [6, 4, 2], atol=1e-15)
    np.testing.assert_allclose(Q[1], [[0, 0, 1], [1, 0, 0], [0, 1, 0]], atol=1e-15)


def _polar_ref(M):
    u, s, vt = np.linalg.svd(M)
    if np.linalg.det(u @ vt) < 0:
        u[:, 2] *= -1
        s[2] *= -1
    return u @ vt, vt.T @ np.diag(s) @ vt


def test_polar_decompose_3x3_gradient():
    A = ti.Matrix.field(3, 3, ti.f64, shape=(), needs_grad=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True)
    W_R = np.array([[0.3, -1.0, 0.5], [0.7, 0.2, -0.4], [1.1, 0.6, 0.9]])
    W_S = np.array([[0.2, 0.5, -0.3], [0.5, -0.8, 0.4], [-0.3, 0.4, 1.3]])

    @ti.kernel
    def f():
        r, s = ti.polar_decompose(A[None])
        for i, j in ti.static(ti.ndrange(3, 3)):
            loss[None] += r[i, j] * W_R[i, j] + s[i, j] * W_S[i, j]

    A0 = np.array([[1.4, 0.3, -0.2], [-0.5, 0.9, 0.4], [0.2, -0.3, 1.7]])
    A.from_numpy(A0)
    with ti.Tape(loss):
        f()

    def ref(M):
        # the weights are float literals in the kernel: f32 constants under default_fp=f32
        Rm, Sm = _polar_ref(M)
        return (Rm * W_R.astype(np.float32)).sum() + (Sm * W_S.astype(np.float32)).sum()

    np.testing.assert_allclose(loss[None], ref(A0), rtol=1e-13)
    h, g = 1e-6, np.zeros((3, 3))
    for idx in np.ndindex(3, 3):
        d = np.zeros((3, 3))
        d[idx] = h
        g[idx] = (ref(A0 + d) - ref(A0 - d)) / (2 * h)
    grad = A.grad.to_numpy()
    assert np.isfinite(grad).all()
    np.testing.assert_allclose(grad, g, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize('what', ['svd', 'sym_eig'])
def test_3x3_gradients_are_finite_at_degenerate_inputs(what):
    A = ti.Matrix.field(3, 3, ti.f32, shape=4, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def f():
        for i in A:
            if ti.static(what == 'svd'):
                r, s = ti.polar_decompose(A[i])
                loss[None] += r.sum() + s.sum()
            else:
                e, q = ti.sym_eig(A[i])
                loss[None] += e.sum()

    A.from_numpy(np.array([np.eye(3), np.zeros((3, 3)), np.diag([1.0, 1.0, 2.0]),
                           np.diag([0.0, 0.0, 3.0])], np.float32))
    with ti.Tape(loss):
        f()
    assert np.isfinite(A.grad.to_numpy()).all()
