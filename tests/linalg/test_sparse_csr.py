"""ti.linalg.SparseMatrix's compressed sparse rows (vkdiff/linalg/csr.py): every operation on
random sparse matrices against the same operation on dense numpy arrays, storage that grows
with the stored entries (not n * m), build_from_ndarray with duplicates, item access, errors."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.linalg.csr import Csr


def _random(rng, n, m, density=0.1):
    a = rng.standard_normal((n, m)) * (rng.random((n, m)) < density)
    return a


def test_csr_ops_match_dense():
    rng = np.random.default_rng(0)
    a, b, c = _random(rng, 40, 30), _random(rng, 40, 30), _random(rng, 30, 25)
    A, B, C = (ti.linalg.SparseMatrix(sm=x, dtype=ti.f64) for x in (a, b, c))
    np.testing.assert_allclose((A + B).to_numpy(), a + b, rtol=1e-12)
    np.testing.assert_allclose((A - B).to_numpy(), a - b, rtol=1e-12)
    np.testing.assert_allclose((A * B).to_numpy(), a * b, rtol=1e-12)
    np.testing.assert_allclose((2.5 * A).to_numpy(), 2.5 * a, rtol=1e-12)
    np.testing.assert_allclose(A.transpose().to_numpy(), a.T)
    np.testing.assert_allclose((A @ C).to_numpy(), a @ c, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose((A.transpose() @ B).to_numpy(), a.T @ b, rtol=1e-12, atol=1e-12)
    v = rng.standard_normal(30)
    np.testing.assert_allclose(A @ v, a @ v, rtol=1e-12, atol=1e-12)
    assert A.nnz == np.count_nonzero(a)


def test_large_sparse_matrix_stores_only_its_entries():
    n = 1 << 20  # dense would be 2**40 values
    idx = np.arange(n, dtype=np.float64)
    trip = np.stack([idx, (idx * 7) % n, idx + 1], axis=1).astype(np.float32)
    nd = ti.Vector.ndarray(3, ti.f32, shape=n)
    nd.from_numpy(trip)
    A = ti.linalg.SparseMatrix(n, n, dtype=ti.f32)
    A.build_from_ndarray(nd)
    assert A.nnz == n and A.csr.data.nbytes == 4 * n
    assert A[5, 35] == 6.0 and A[5, 34] == 0.0
    x = np.ones(n, np.float32)
    np.testing.assert_allclose(A @ x, idx + 1)


def test_build_from_ndarray_sums_duplicates_and_replaces():
    A = ti.linalg.SparseMatrix(4, 5, dtype=ti.f32)
    A[0, 0] = 9.0
    nd = ti.ndarray(ti.f32, shape=(12,))  # flat: row, col, value, row, ...
    nd.from_numpy(np.array([1, 2, 1.5, 3, 4, -2, 1, 2, 0.25, 0, 1, 7], np.float32))
    A.build_from_ndarray(nd)
    expect = np.zeros((4, 5), np.float32)
    expect[1, 2], expect[3, 4], expect[0, 1] = 1.75, -2, 7
    np.testing.assert_array_equal(A.to_numpy(), expect)


def test_build_from_ndarray_errors_keep_the_matrix():
    A = ti.linalg.SparseMatrix(3, 3, dtype=ti.f32)
    A[1, 1] = 2.0
    with pytest.raises(RuntimeError, match='divisible by 3'):
        A.build_from_ndarray(ti.ndarray(ti.f32, shape=(4,)))
    out = ti.ndarray(ti.f32, shape=(3,))
    out.from_numpy(np.array([3, 0, 1], np.float32))
    with pytest.raises(RuntimeError, match='outside'):
        A.build_from_ndarray(out)
    half = ti.ndarray(ti.f32, shape=(3,))
    half.from_numpy(np.array([0.5, 0, 1], np.float32))
    with pytest.raises(RuntimeError, match='whole number'):
        A.build_from_ndarray(half)
    with pytest.raises(RuntimeError, match='ti.ndarray'):
        A.build_from_ndarray(np.zeros(3))
    assert A[1, 1] == 2.0 and A.nnz == 1


def test_setitem_inserts_and_getitem_checks_bounds():
    A = ti.linalg.SparseMatrix(3, 4, dtype=ti.f64)
    A[2, 3] = 1.5
    A[0, 1] = -1.0
    A[2, 3] += 1.0
    assert A[2, 3] == 2.5 and A[0, 1] == -1.0 and A[1, 1] == 0.0 and A.nnz == 2
    with pytest.raises(IndexError):
        A[3, 0]
    with pytest.raises(IndexError):
        A[0, -1] = 1.0


def test_csr_from_coo_is_sorted_and_unique():
    c = Csr.from_coo((3, 3), [2, 0, 2, 0], [1, 2, 1, 0], [1.0, 2.0, 3.0, 4.0], np.float64)
    np.testing.assert_array_equal(c.indptr, [0, 2, 2, 3])
    np.testing.assert_array_equal(c.indices, [0, 2, 1])
    np.testing.assert_array_equal(c.data, [4.0, 2.0, 4.0])
