"""ti.linalg sparse matrices: a builder filled in a kernel (duplicates summed, cleared on
build), SparseMatrix arithmetic and products against numpy, SparseSolver against
numpy.linalg.solve, ndarray inputs/outputs, and clear errors."""
import importlib.util

import numpy as np
import pytest

import vkdiff as ti

# SparseSolver factorises with scipy (the `test` and `sparse` extras; tools/setup.sh installs it)
needs_scipy = pytest.mark.skipif(importlib.util.find_spec('scipy') is None,
                                 reason='SparseSolver needs scipy')


def _laplacian(n):
    b = ti.linalg.SparseMatrixBuilder(n, n, max_num_triplets=100)

    @ti.kernel
    def fill(A: ti.types.sparse_matrix_builder(), shift: ti.f32):
        for i in range(n):
            A[i, i] += 1.0 + shift      # two adds on the diagonal: summed, as Taichi's triplets
            A[i, i] += 1.0
            if i > 0:
                A[i - 1, i] += -1.0
                A[i, i - 1] += -1.0
    return b, fill


def _reference(n, shift):
    a = np.diag(np.full(n, 2.0 + shift)) - np.eye(n, k=1) - np.eye(n, k=-1)
    return a


def test_builder_kernel_and_build():
    n = 6
    b, fill = _laplacian(n)
    fill(b, 0.5)
    A = b.build()
    assert A.shape == (n, n)
    assert np.allclose(A.to_numpy(), _reference(n, 0.5))
    assert A[2, 3] == -1.0 and A[2, 2] == 2.5
    fill(b, 1.0)                          # the builder was cleared by build()
    assert np.allclose(b.build().to_numpy(), _reference(n, 1.0))


def test_sparse_matrix_arithmetic():
    n = 5
    b, fill = _laplacian(n)
    fill(b, 0.0)
    A = b.build()
    fill(b, 2.0)
    B = b.build()
    a, bb = _reference(n, 0.0), _reference(n, 2.0)
    assert np.allclose((A + B).to_numpy(), a + bb)
    assert np.allclose((A - 0.5 * B).to_numpy(), a - 0.5 * bb)
    assert np.allclose((B * 2.0).to_numpy(), 2 * bb)
    assert np.allclose((A @ B).to_numpy(), a @ bb)
    assert np.allclose((A * B).to_numpy(), a * bb)
    assert np.allclose(A.transpose().to_numpy(), a.T)
    v = np.arange(n, dtype=np.float32)
    assert np.allclose(A @ v, a @ v)
    f = ti.field(ti.f32, shape=n)
    f.from_numpy(v)
    assert np.allclose(A @ f, a @ v)
    nd = ti.ndarray(ti.f32, shape=n)
    nd.from_numpy(v)
    r = A @ nd
    assert isinstance(r, ti.Ndarray) and np.allclose(r.to_numpy(), a @ v)
    C = A.transpose()
    C += B
    assert np.allclose(C.to_numpy(), a.T + bb)
    with pytest.raises(ti.TaichiRuntimeError, match='Dimension mismatch'):
        A @ np.ones(n + 1)
    with pytest.raises(ti.TaichiRuntimeError, match='Dimension mismatch'):
        A + ti.linalg.SparseMatrix(n, n + 1)


@needs_scipy
@pytest.mark.parametrize('solver_type', ['LLT', 'LDLT', 'LU'])
def test_sparse_solver(solver_type):
    n = 8
    b, fill = _laplacian(n)
    fill(b, 0.1)
    A = b.build()
    rhs = np.linspace(-1, 1, n).astype(np.float32)
    solver = ti.linalg.SparseSolver(solver_type=solver_type)
    solver.analyze_pattern(A)
    solver.factorize(A)
    x = solver.solve(rhs)
    assert solver.info()
    assert x.dtype == np.float32
    assert np.allclose(x, np.linalg.solve(_reference(n, 0.1), rhs), rtol=1e-5, atol=1e-6)
    nd = ti.ndarray(ti.f32, shape=n)
    nd.from_numpy(rhs)
    xn = solver.solve(nd)
    assert isinstance(xn, ti.Ndarray) and np.allclose(xn.to_numpy(), x)


@needs_scipy
def test_solver_reports_failure_and_bad_input():
    A = ti.linalg.SparseMatrix(sm=np.array([[1.0, 2.0], [2.0, 1.0]]))   # not positive definite
    s = ti.linalg.SparseSolver(solver_type='LLT')
    s.compute(A)
    assert not s.info()
    with pytest.raises(ti.TaichiRuntimeError, match='compute'):
        ti.linalg.SparseSolver().solve(np.ones(2))
    with pytest.raises(ti.TaichiRuntimeError, match='solver_type'):
        ti.linalg.SparseSolver(solver_type='QR2')
    with pytest.raises(ValueError, match='densely'):
        ti.linalg.SparseMatrixBuilder(1 << 14, 1 << 14)


def test_builder_entry_outside_the_matrix_is_an_error_not_another_entry():
    """The builder is a dense (n, m) field: A[0, 5] += 7 on a 4 x 4 builder landed on A[1, 1]
    (row-major 0 * 4 + 5), a silently wrong matrix (Taichi 1.7.4's build asserts). Now the add
    is dropped and build() raises, naming the size; the builder works again after it."""
    K = ti.linalg.SparseMatrixBuilder(4, 4, max_num_triplets=100)

    @ti.kernel
    def fill(A: ti.types.sparse_matrix_builder(), r: ti.i32, c: ti.i32):
        for i in range(4):
            A[i, i] += 1.0
        A[r, c] += 7.0

    for r, c in ((0, 5), (4, 0), (-1, 2), (2, -1)):
        fill(K, r, c)
        with pytest.raises(IndexError, match=r'outside the \(4, 4\)'):
            K.build()
    fill(K, 1, 2)
    M = K.build()
    dense = np.array([[M[i, j] for j in range(4)] for i in range(4)])
    want = np.eye(4)
    want[1, 2] = 7.0
    np.testing.assert_array_equal(dense, want)
