"""ti.linalg.SparseCG on the device: solutions of SPD systems against numpy.linalg.solve, the
convergence flag (|r| <= atol |b|, as Eigen's), the initial guess, ndarray and numpy right-hand
sides, and errors."""
import numpy as np
import pytest

import vkdiff as ti
from tests.device_requires import F64


def _poisson_2d(k):
    """The 5-point Laplacian on a k x k grid (SPD, n = k * k), as a SparseMatrix via triplets."""
    n = k * k
    rows, cols, vals = [], [], []
    for i in range(k):
        for j in range(k):
            p = i * k + j
            rows.append(p), cols.append(p), vals.append(4.0)
            for di, dj in ((1, 0), (-1, 0), (0, 1), (0, -1)):
                if 0 <= i + di < k and 0 <= j + dj < k:
                    rows.append(p), cols.append((i + di) * k + j + dj), vals.append(-1.0)
    dense = np.zeros((n, n))
    dense[rows, cols] = vals
    return n, rows, cols, vals, dense


@pytest.mark.parametrize('dtype', [ti.f32, F64])
def test_cg_poisson_matches_numpy(dtype):
    n, rows, cols, vals, dense = _poisson_2d(20)
    nd = ti.Vector.ndarray(3, ti.f32, shape=len(vals))
    nd.from_numpy(np.stack([rows, cols, vals], 1).astype(np.float32))
    A = ti.linalg.SparseMatrix(n, n, dtype=dtype)
    A.build_from_ndarray(nd)
    rhs = np.sin(np.arange(n) * 0.1) + 1.0
    b = ti.ndarray(dtype, shape=n)
    b.from_numpy(rhs.astype(np.float32 if dtype == ti.f32 else np.float64))
    tol = 1e-5 if dtype == ti.f32 else 1e-10
    cg = ti.linalg.SparseCG(A, b, max_iter=400, atol=tol)
    x, ok = cg.solve()
    assert ok and isinstance(x, ti.Ndarray)
    ref = np.linalg.solve(dense, b.to_numpy().astype(np.float64))
    np.testing.assert_allclose(x.to_numpy(), ref, rtol=50 * tol, atol=50 * tol * abs(ref).max())
    assert cg.residual_norm <= tol


def test_cg_numpy_rhs_initial_guess_and_no_convergence():
    rng = np.random.default_rng(4)
    m = rng.random((12, 12))
    a = m @ m.T + 12 * np.eye(12)
    A = ti.linalg.SparseMatrix(sm=a, dtype=ti.f32)
    rhs = rng.random(12)
    ref = np.linalg.solve(a, rhs)
    x, ok = ti.linalg.SparseCG(A, rhs, x0=ref.astype(np.float32), max_iter=0, atol=1e-5).solve()
    assert ok and isinstance(x, np.ndarray)  # the exact guess already meets the tolerance
    np.testing.assert_allclose(x, ref, rtol=1e-6)
    x, ok = ti.linalg.SparseCG(A, rhs, max_iter=1, atol=1e-7).solve()
    assert not ok  # one step cannot solve a dense 12 x 12 system
    x, ok = ti.linalg.SparseCG(A, rhs, max_iter=100, atol=1e-6).solve()
    assert ok
    np.testing.assert_allclose(x, ref, rtol=1e-4)


def test_cg_zero_rhs_and_errors():
    A = ti.linalg.SparseMatrix(sm=np.eye(3) * 2, dtype=ti.f32)
    x, ok = ti.linalg.SparseCG(A, np.zeros(3), x0=np.ones(3)).solve()
    assert ok and (x == 0).all()
    with pytest.raises(RuntimeError, match='shape'):
        ti.linalg.SparseCG(A, np.zeros(4))
    with pytest.raises(RuntimeError, match='square'):
        ti.linalg.SparseCG(ti.linalg.SparseMatrix(3, 4), np.zeros(3))
    with pytest.raises(RuntimeError, match='SparseMatrix'):
        ti.linalg.SparseCG(np.eye(3), np.zeros(3))


def test_cg_symmetric_indefinite_system_continues_as_eigen():
    """Eigen's ConjugateGradient (Taichi's CPU SparseCG) does not stop when p.Ap <= 0: on this
    symmetric indefinite system Taichi 1.7.4 converges ([0.149, -0.404, 0.466, ...]); vkdiff
    stopped after one step and returned converged=False with x = [2, -2, 2, ...]."""
    n = 6
    dense = np.diag([4.0, -4.0, 4.0, -4.0, 0.5, 1.0]) - np.eye(n, k=1) - np.eye(n, k=-1)
    r, c = np.nonzero(dense)
    nd = ti.Vector.ndarray(3, ti.f32, shape=len(r))
    nd.from_numpy(np.stack([r, c, dense[r, c]], 1).astype(np.float32))
    A = ti.linalg.SparseMatrix(n, n, dtype=ti.f32)
    A.build_from_ndarray(nd)
    b = np.ones(n, np.float32)
    x, ok = ti.linalg.SparseCG(A, b, max_iter=50, atol=1e-5).solve()
    assert ok
    ref = np.linalg.solve(dense, b.astype(np.float64))
    np.testing.assert_allclose(x, ref, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(ref[:3], [0.14906836, -0.40372667, 0.46583894], rtol=1e-6)
