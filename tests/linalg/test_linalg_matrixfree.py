"""ti.linalg matrix-free solvers (MatrixFreeCG, MatrixFreeBICGSTAB with a LinearOperator), checked
against numpy.linalg.solve on small dense systems."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.linalg import LinearOperator, MatrixFreeBICGSTAB, MatrixFreeCG


def _tridiag(n, lo, d, up):
    return np.diag([d] * n) + np.diag([lo] * (n - 1), -1) + np.diag([up] * (n - 1), 1)


def _operator(lo, d, up):
    @ti.kernel
    def matvec(v: ti.template(), mv: ti.template()):
        for k in v:
            left = v[k - 1] if k - 1 >= 0 else 0.0
            right = v[k + 1] if k + 1 < v.shape[0] else 0.0
            mv[k] = d * v[k] + lo * left + up * right
    return LinearOperator(matvec)


@pytest.mark.parametrize('dt', [ti.f32, ti.f64])
@pytest.mark.parametrize('solver,coefs', [(MatrixFreeCG, (-1.0, 4.0, -1.0)),
                                          (MatrixFreeBICGSTAB, (-1.0, 4.0, -2.0))])
def test_matrix_free_solvers_match_a_dense_solve(dt, solver, coefs):
    n = 24
    rng = np.random.default_rng(3)
    rhs = rng.standard_normal(n)
    b = ti.field(dt, shape=n)
    x = ti.field(dt, shape=n)
    b.from_numpy(rhs)
    tol = 1e-5 if dt == ti.f32 else 1e-12
    assert solver(_operator(*coefs), b, x, tol=tol, maxiter=200, quiet=True)
    want = np.linalg.solve(_tridiag(n, *coefs), rhs)
    np.testing.assert_allclose(x.to_numpy(), want, rtol=0, atol=1e-5 if dt == ti.f32 else 1e-10)


def test_matrix_free_cg_2d_and_reports_failure_to_converge():
    n = 6
    b = ti.field(ti.f64, shape=(n, n))
    x = ti.field(ti.f64, shape=(n, n))
    b.fill(1.0)

    @ti.kernel
    def lap(v: ti.template(), mv: ti.template()):
        for p, q in v:
            s = 5.0 * v[p, q]
            if p > 0:
                s -= v[p - 1, q]
            if p < n - 1:
                s -= v[p + 1, q]
            if q > 0:
                s -= v[p, q - 1]
            if q < n - 1:
                s -= v[p, q + 1]
            mv[p, q] = s

    A = LinearOperator(lap)
    assert not MatrixFreeCG(A, b, x, tol=1e-14, maxiter=2)  # two steps are not enough
    x.fill(0.0)
    assert MatrixFreeCG(A, b, x, tol=1e-12, maxiter=500)
    Ax = ti.field(ti.f64, shape=(n, n))
    A.matvec(x, Ax)
    np.testing.assert_allclose(Ax.to_numpy(), 1.0, atol=1e-10)


def test_matrix_free_solver_errors():
    A = _operator(-1.0, 4.0, -1.0)
    b32, x64 = ti.field(ti.f32, shape=4), ti.field(ti.f64, shape=4)
    with pytest.raises(ti.TaichiTypeError, match='Dtype mismatch'):
        MatrixFreeCG(A, b32, x64)
    with pytest.raises(ti.TaichiTypeError, match='Not supported dtype'):
        MatrixFreeCG(A, ti.field(ti.i32, shape=4), ti.field(ti.i32, shape=4))
    with pytest.raises(ti.TaichiRuntimeError, match='Dimension mismatch'):
        MatrixFreeBICGSTAB(A, b32, ti.field(ti.f32, shape=5))
    with pytest.raises(ti.TaichiRuntimeError, match='Dimension mismatch'):
        A.matvec(b32, ti.field(ti.f32, shape=5))
