"""`ti.linalg.LinearOperator`, `MatrixFreeCG`, `MatrixFreeBICGSTAB` (Taichi 1.7.4's matrix-free
Krylov solvers): the solution checked against numpy's dense solve of the same system."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.linalg import LinearOperator, MatrixFreeBICGSTAB, MatrixFreeCG

N = 12


def _dense(sym):
    """The matrix of the operator below: 4 on the diagonal, -1 / (-2 if not sym) beside it."""
    a = 4 * np.eye(N)
    for i in range(N):
        if i > 0:
            a[i, i - 1] = -1 if sym else -2
        if i < N - 1:
            a[i, i + 1] = -1
    return a


def _operator(sym):
    left = -1.0 if sym else -2.0

    @ti.kernel
    def matvec(v: ti.template(), mv: ti.template()):
        for i in v:
            l = v[i - 1] if i >= 1 else 0.0
            r = v[i + 1] if i + 1 < N else 0.0
            mv[i] = 4 * v[i] + left * l - r

    return LinearOperator(matvec)


@pytest.mark.parametrize('solver,sym', [(MatrixFreeCG, True), (MatrixFreeBICGSTAB, False)])
@pytest.mark.parametrize('dt', [ti.f32, ti.f64])
def test_matrix_free_solvers_match_a_dense_solve(solver, sym, dt):
    b = ti.field(dt, shape=N)
    x = ti.field(dt, shape=N)
    rhs = np.sin(np.arange(N) + 1.0)
    b.from_numpy(rhs)
    assert solver(_operator(sym), b, x, tol=1e-5 if dt == ti.f32 else 1e-10, maxiter=200)
    want = np.linalg.solve(_dense(sym), rhs)
    np.testing.assert_allclose(x.to_numpy(), want, atol=1e-4 if dt == ti.f32 else 1e-6)


def test_matrix_free_solver_errors():
    a = _operator(True)
    x32, x64 = ti.field(ti.f32, shape=N), ti.field(ti.f64, shape=N)
    with pytest.raises(ti.TaichiTypeError, match='Dtype mismatch'):
        MatrixFreeCG(a, x32, x64)
    with pytest.raises(ti.TaichiRuntimeError, match='Dimension mismatch'):
        MatrixFreeCG(a, x32, ti.field(ti.f32, shape=N + 1))
    with pytest.raises(ti.TaichiRuntimeError, match='Dimension mismatch'):
        a.matvec(x32, ti.field(ti.f32, shape=3))
