"""API layer: ``ti.linalg`` sparse matrices (Taichi's SparseMatrixBuilder, SparseMatrix,
SparseSolver), assembled on the device and solved on the host.

A SparseMatrixBuilder is an (n, m) dense field: in a kernel that takes it as
``ti.types.sparse_matrix_builder()``, ``A[i, j] += v`` is an atomic add into it (Taichi appends
a triplet and sums duplicates when it builds, so the matrix is the same). ``build()`` reads it
back into a SparseMatrix and clears the builder, as Taichi does. A SparseMatrix holds its values
as a dense numpy array; SparseSolver factorises with numpy in float64 (LLT: Cholesky; LDLT and
LU: LU) and returns the solution in the matrix's dtype. Meant for the small systems of Taichi's
examples: storage is n*m values (more than 2**26 is an error), not a triplet list.
The matrix-free solvers (LinearOperator, MatrixFreeCG, MatrixFreeBICGSTAB) live in
vkdiff/linalg/matrixfree.py.
"""
import numpy as np

from .. import types as T
from ..errors import TaichiRuntimeError, VkdiffValueError
from ..lang.field import Field
from ..lang.types_api import sparse_matrix_builder  # noqa: F401  (also ti.types.)
from ..lang.ndarray import ndarray, Ndarray

MAX_ENTRIES = 1 << 26


def _np_dtype(dtype):
    return np.float64 if T.resolve(dtype) is T.f64 else np.float32


class SparseMatrixBuilder(Field):
    """An (num_rows, num_cols) accumulator: ``A[i, j] += v`` in a kernel."""

    def __init__(self, num_rows=None, num_cols=None, max_num_triplets=0, dtype=T.f32,
                 storage_format="col_major"):
        num_cols = num_cols if num_cols else num_rows
        if not num_rows or num_rows < 1 or num_cols < 1:
            raise VkdiffValueError(f"SparseMatrixBuilder: bad size ({num_rows}, {num_cols})")
        if num_rows * num_cols > MAX_ENTRIES:
            raise VkdiffValueError(f"SparseMatrixBuilder({num_rows}, {num_cols}): vkdiff stores "
                                   f"the matrix densely and allows at most {MAX_ENTRIES} entries")
        super().__init__(dtype, (num_rows, num_cols), name=f'sparse_builder{id(self) % 10000}')
        self.num_rows, self.num_cols = num_rows, num_cols
        self.max_num_triplets = max_num_triplets

    def print_triplets(self):
        a = self.to_numpy()
        rows, cols = np.nonzero(a)
        print(f"n={self.num_rows}, m={self.num_cols}, num_triplets={len(rows)}")
        for i, j in zip(rows, cols):
            print(f"({i}, {j}) val={a[i, j]}")

    def build(self, dtype=None, _format="CSR"):
        """The SparseMatrix of what kernels added; the builder is cleared for the next assembly."""
        sm = SparseMatrix(sm=self.to_numpy(), dtype=dtype or self.dtype)
        self.fill(0)
        return sm


class SparseMatrix:
    def __init__(self, n=None, m=None, sm=None, dtype=T.f32, storage_format="col_major"):
        self.dtype = dtype
        if sm is None:
            self.matrix = np.zeros((n, m if m else n), _np_dtype(dtype))
        else:
            self.matrix = np.array(sm.matrix if isinstance(sm, SparseMatrix) else sm,
                                   dtype=_np_dtype(dtype))
        self.n, self.m = self.matrix.shape

    @property
    def shape(self):
        return (self.n, self.m)

    def _same_shape(self, other, op):
        if not isinstance(other, SparseMatrix):
            raise TaichiRuntimeError(f"sparse matrix {op}: needs a SparseMatrix, got "
                                     f"{type(other).__name__}")
        if other.shape != self.shape:
            raise TaichiRuntimeError(f"Dimension mismatch between sparse matrices {self.shape} "
                                     f"and {other.shape}")
        return other.matrix

    def _new(self, a):
        return SparseMatrix(sm=a, dtype=self.dtype)

    def __add__(self, other):
        return self._new(self.matrix + self._same_shape(other, '+'))

    def __sub__(self, other):
        return self._new(self.matrix - self._same_shape(other, '-'))

    def __iadd__(self, other):
        self.matrix += self._same_shape(other, '+=')
        return self

    def __isub__(self, other):
        self.matrix -= self._same_shape(other, '-=')
        return self

    def __mul__(self, other):
        """A scalar multiple, or the element-wise product with a SparseMatrix."""
        if isinstance(other, (int, float, np.floating)) and not isinstance(other, bool):
            return self._new(self.matrix * other)
        return self._new(self.matrix * self._same_shape(other, '*'))

    def __rmul__(self, other):
        return self.__mul__(other)

    def __neg__(self):
        return self._new(-self.matrix)

    def transpose(self):
        return self._new(self.matrix.T)

    def __matmul__(self, other):
        """With a SparseMatrix: their product; with a field or numpy vector: a numpy vector; with
        an ndarray: a new ndarray."""
        if isinstance(other, SparseMatrix):
            if self.m != other.n:
                raise TaichiRuntimeError(f"Dimension mismatch between sparse matrices "
                                         f"{self.shape} and {other.shape}")
            return self._new(self.matrix @ other.matrix)
        nd = isinstance(other, Ndarray)
        vec = other.to_numpy() if isinstance(other, Field) else np.asarray(other)
        if vec.ndim != 1 or vec.shape[0] != self.m:
            raise TaichiRuntimeError(f"Dimension mismatch between sparse matrix {self.shape} and "
                                     f"vector ({vec.shape})")
        res = self.matrix.astype(np.float64) @ vec.astype(np.float64)
        return _as_ndarray(res, other.dtype) if nd else res.astype(self.matrix.dtype)

    def __getitem__(self, indices):
        return self.matrix[indices[0], indices[1]]

    def __setitem__(self, indices, value):
        self.matrix[indices[0], indices[1]] = value

    def __str__(self):
        return '\n'.join('[' + ', '.join(f'{x:g}' for x in row) + ']' for row in self.matrix)

    __repr__ = __str__

    def to_numpy(self):
        return self.matrix.copy()

    def mmwrite(self, filename):
        """Write the matrix in Matrix Market coordinate format."""
        rows, cols = np.nonzero(self.matrix)
        with open(filename, 'w') as f:
            f.write("%%MatrixMarket matrix coordinate real general\n")
            f.write(f"{self.n} {self.m} {len(rows)}\n")
            for i, j in zip(rows, cols):
                f.write(f"{i + 1} {j + 1} {self.matrix[i, j]:.17g}\n")


def _as_ndarray(values, dtype):
    out = ndarray(dtype, shape=values.shape)
    out.from_numpy(values.astype(_np_dtype(dtype)))
    return out


class SparseSolver:
    """Direct solver: solver_type 'LLT' (Cholesky), 'LDLT' or 'LU'."""

    def __init__(self, dtype=T.f32, solver_type="LLT", ordering="AMD"):
        if solver_type not in ("LLT", "LDLT", "LU"):
            raise TaichiRuntimeError(f"SparseSolver: solver_type must be LLT, LDLT or LU, got "
                                     f"{solver_type!r}")
        self.dtype, self.solver_type, self.ordering = dtype, solver_type, ordering
        self.matrix, self._chol, self._ok = None, None, False

    def _check(self, sparse_matrix):
        if not isinstance(sparse_matrix, SparseMatrix):
            raise TaichiRuntimeError(f"The parameter type: {type(sparse_matrix)} is not "
                                     f"supported in linear solvers for now.")
        if sparse_matrix.n != sparse_matrix.m:
            raise TaichiRuntimeError(f"SparseSolver: the matrix is not square: "
                                     f"{sparse_matrix.shape}")

    def analyze_pattern(self, sparse_matrix):
        self._check(sparse_matrix)
        self.matrix = sparse_matrix

    def factorize(self, sparse_matrix):
        self._check(sparse_matrix)
        self.matrix = sparse_matrix
        a = sparse_matrix.matrix.astype(np.float64)
        self._chol = None
        try:
            if self.solver_type == "LLT":
                self._chol = np.linalg.cholesky(a)
            self._ok = bool(np.isfinite(a).all())  # LU / LDLT: a singular matrix fails in solve
        except np.linalg.LinAlgError:
            self._ok = False

    def compute(self, sparse_matrix):
        self.analyze_pattern(sparse_matrix)
        self.factorize(sparse_matrix)

    def solve(self, b):
        """The solution x of A x = b: numpy for a field or numpy b, an ndarray for an ndarray b."""
        if self.matrix is None:
            raise TaichiRuntimeError("Please call compute() before calling solve().")
        nd = isinstance(b, Ndarray)
        if not (nd or isinstance(b, (Field, np.ndarray))):
            raise TaichiRuntimeError(f"The parameter type: {type(b)} is not supported in linear "
                                     f"solvers for now.")
        rhs = (b.to_numpy() if nd or isinstance(b, Field) else b).astype(np.float64)
        a = self.matrix.matrix.astype(np.float64)
        try:
            if self._chol is not None:
                y = np.linalg.solve(self._chol, rhs)
                x = np.linalg.solve(self._chol.T, y)
            else:
                x = np.linalg.solve(a, rhs)
            self._ok = self._ok and bool(np.isfinite(x).all())
        except np.linalg.LinAlgError:
            self._ok = False
            x = np.full(a.shape[1], np.nan)
        if nd:
            return _as_ndarray(x, self.dtype)
        return x.astype(_np_dtype(self.dtype))

    def info(self):
        """True if the last factorisation and solve succeeded."""
        return self._ok
