"""ti.linalg.SparseSolver (scipy's SuperLU): LLT, LDLT and LU with both orderings against
numpy.linalg.solve on a large sparse SPD system and a non-symmetric one, and info() False where
the factorisation does not exist (not SPD for LLT, not symmetric for LLT/LDLT, singular)."""
import numpy as np
import pytest

import vkdiff as ti

pytest.importorskip('scipy', reason='SparseSolver needs scipy (the test and sparse extras)')


def _spd(n, rng):
    a = np.diag(np.full(n, 4.0)) - np.eye(n, k=1) - np.eye(n, k=-1) - np.eye(n, k=7) - \
        np.eye(n, k=-7)
    return a + np.diag(rng.random(n))


@pytest.mark.parametrize('solver_type', ['LLT', 'LDLT', 'LU'])
@pytest.mark.parametrize('ordering', ['AMD', 'COLAMD'])
def test_solver_spd_matches_numpy(solver_type, ordering):
    rng = np.random.default_rng(1)
    a = _spd(300, rng)
    A = ti.linalg.SparseMatrix(sm=a, dtype=ti.f64)
    s = ti.linalg.SparseSolver(dtype=ti.f64, solver_type=solver_type, ordering=ordering)
    s.compute(A)
    rhs = rng.standard_normal(300)
    x = s.solve(rhs)
    assert s.info() and x.dtype == np.float64
    np.testing.assert_allclose(x, np.linalg.solve(a, rhs), rtol=1e-10, atol=1e-12)


def test_lu_nonsymmetric_and_symmetric_solvers_refuse_it():
    rng = np.random.default_rng(2)
    a = _spd(50, rng) + np.triu(rng.random((50, 50)) < 0.05, 1) * 0.5
    A = ti.linalg.SparseMatrix(sm=a, dtype=ti.f32)
    rhs = rng.standard_normal(50).astype(np.float32)
    lu = ti.linalg.SparseSolver(solver_type='LU')
    lu.compute(A)
    x = lu.solve(rhs)
    assert lu.info() and x.dtype == np.float32
    np.testing.assert_allclose(x, np.linalg.solve(a, rhs), rtol=1e-5, atol=1e-6)
    for kind in ('LLT', 'LDLT'):
        s = ti.linalg.SparseSolver(solver_type=kind)
        s.compute(A)
        assert not s.info() and np.isnan(s.solve(rhs)).all()


def test_ldlt_indefinite_llt_refuses():
    a = np.array([[2.0, 1.0, 0.0], [1.0, -3.0, 1.0], [0.0, 1.0, 1.0]])  # symmetric, indefinite
    A = ti.linalg.SparseMatrix(sm=a, dtype=ti.f64)
    rhs = np.array([1.0, 2.0, 3.0])
    ldlt = ti.linalg.SparseSolver(dtype=ti.f64, solver_type='LDLT')
    ldlt.compute(A)
    assert ldlt.info()
    np.testing.assert_allclose(ldlt.solve(rhs), np.linalg.solve(a, rhs), rtol=1e-12)
    llt = ti.linalg.SparseSolver(dtype=ti.f64, solver_type='LLT')
    llt.compute(A)
    assert not llt.info()


def test_singular_matrix_and_bad_input():
    A = ti.linalg.SparseMatrix(sm=np.array([[1.0, 2.0], [2.0, 4.0]]), dtype=ti.f64)
    s = ti.linalg.SparseSolver(dtype=ti.f64, solver_type='LU')
    s.compute(A)
    assert not s.info()
    with pytest.raises(RuntimeError, match='shape'):
        s.solve(np.ones(3))
    with pytest.raises(RuntimeError, match='ordering'):
        ti.linalg.SparseSolver(ordering='METIS')
