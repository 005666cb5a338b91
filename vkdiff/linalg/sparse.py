"""API layer: ``ti.linalg`` sparse matrices (Taichi's SparseMatrixBuilder, SparseMatrix),
assembled on the device and stored sparsely on the host.

A SparseMatrixBuilder is an (n, m) dense field: in a kernel that takes it as
``ti.types.sparse_matrix_builder()``, ``A[i, j] += v`` is an atomic add into it (Taichi appends
a triplet and sums duplicates when it builds, so the matrix is the same). The builder is dense
(n*m values, at most 2**26), so it is meant for the systems of Taichi's examples. ``build()``
reads it back into a SparseMatrix and clears the builder, as Taichi does.
A SparseMatrix is compressed sparse rows (csr.py: only the stored entries, any size);
``build_from_ndarray`` fills one from an ndarray of (row, col, value) triplets. The direct
solver (SparseSolver) is in sparse_solver.py, the device conjugate gradient (SparseCG) in
sparse_cg.py, the matrix-free solvers in matrixfree.py.
"""
import numpy as np

from .. import types as T
from ..errors import TaichiRuntimeError, VkdiffIndexError, VkdiffValueError
from ..lang.field import Field
from ..lang.types_api import sparse_matrix_builder  # noqa: F401  (also ti.types.)
from ..lang.ndarray import ndarray, Ndarray
from .csr import Csr

__all__ = ["SparseMatrixBuilder", "SparseMatrix", "sparse_matrix_builder"]

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
        # set by a kernel's A[i, j] += v outside the matrix (frontend/lvalues.py): the add is
        # dropped there (the dense storage would put it on another entry) and build() raises
        self.index_guard = Field(T.i32, (), name=f'{self.name}_outside')
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
        if self.index_guard.to_numpy()[()]:
            self.index_guard.fill(0)
            self.fill(0)
            raise VkdiffIndexError(f"SparseMatrixBuilder: a kernel added an entry outside the "
                                   f"({self.num_rows}, {self.num_cols}) matrix (those adds were "
                                   "dropped); the builder is cleared")
        sm = SparseMatrix(sm=Csr.from_dense(self.to_numpy(), _np_dtype(dtype or self.dtype)),
                          dtype=dtype or self.dtype)
        self.fill(0)
        return sm


class SparseMatrix:
    """An (n, m) sparse matrix in compressed sparse rows (`self.csr`)."""

    def __init__(self, n=None, m=None, sm=None, dtype=T.f32, storage_format="col_major"):
        self.dtype = dtype
        npdt = _np_dtype(dtype)
        if sm is None:
            if not n or n < 1 or (m is not None and m < 1):
                raise VkdiffValueError(f"SparseMatrix: bad size ({n}, {m})")
            self.csr = Csr.empty((n, m if m else n), npdt)
        elif isinstance(sm, SparseMatrix):
            self.csr = sm.csr.astype(npdt)
        elif isinstance(sm, Csr):
            self.csr = sm.astype(npdt)
        else:
            self.csr = Csr.from_dense(sm, npdt)
        self.n, self.m = self.csr.shape

    @property
    def shape(self):
        return (self.n, self.m)

    @property
    def nnz(self):
        """The number of stored entries."""
        return self.csr.nnz

    def build_from_ndarray(self, ndarray):
        """Fill the matrix from (row, col, value) triplets: an ndarray whose elements, read in
        order, are row0, col0, value0, row1, ... (e.g. a ti.Vector.ndarray(3, ...)); duplicate
        positions are summed, as Taichi does. Replaces what the matrix held."""
        if not isinstance(ndarray, Ndarray):
            raise TaichiRuntimeError(f"build_from_ndarray needs a ti.ndarray, got "
                                     f"{type(ndarray).__name__}")
        flat = np.asarray(ndarray.to_numpy(), np.float64).ravel()
        if flat.size % 3:
            raise TaichiRuntimeError("The number of ndarray elements must have a length that is "
                                     "divisible by 3.")
        t = flat.reshape(-1, 3)
        rc = t[:, :2]
        if not np.array_equal(rc, np.round(rc)):
            raise TaichiRuntimeError("build_from_ndarray: a row or column index is not a whole "
                                     "number")
        try:
            self.csr = Csr.from_coo(self.shape, t[:, 0], t[:, 1], t[:, 2], _np_dtype(self.dtype))
        except IndexError as e:
            raise TaichiRuntimeError(f"build_from_ndarray: {e}") from None

    def _same_shape(self, other, op):
        if not isinstance(other, SparseMatrix):
            raise TaichiRuntimeError(f"sparse matrix {op}: needs a SparseMatrix, got "
                                     f"{type(other).__name__}")
        if other.shape != self.shape:
            raise TaichiRuntimeError(f"Dimension mismatch between sparse matrices {self.shape} "
                                     f"and {other.shape}")
        return other.csr

    def _new(self, csr):
        return SparseMatrix(sm=csr, dtype=self.dtype)

    def __add__(self, other):
        return self._new(self.csr.plus(self._same_shape(other, '+')))

    def __sub__(self, other):
        return self._new(self.csr.plus(self._same_shape(other, '-'), -1.0))

    def __iadd__(self, other):
        self.csr = self.csr.plus(self._same_shape(other, '+='))
        return self

    def __isub__(self, other):
        self.csr = self.csr.plus(self._same_shape(other, '-='), -1.0)
        return self

    def __mul__(self, other):
        """A scalar multiple, or the element-wise product with a SparseMatrix."""
        if isinstance(other, (int, float, np.floating, np.integer)) and not isinstance(other, bool):
            return self._new(self.csr.scaled(other))
        return self._new(self.csr.times(self._same_shape(other, '*')))

    def __rmul__(self, other):
        return self.__mul__(other)

    def __neg__(self):
        return self._new(self.csr.scaled(-1))

    def transpose(self):
        return self._new(self.csr.transpose())

    def __matmul__(self, other):
        """With a SparseMatrix: their product; with a field or numpy vector: a numpy vector; with
        an ndarray: a new ndarray."""
        if isinstance(other, SparseMatrix):
            if self.m != other.n:
                raise TaichiRuntimeError(f"Dimension mismatch between sparse matrices "
                                         f"{self.shape} and {other.shape}")
            return self._new(self.csr.matmul(other.csr))
        nd = isinstance(other, Ndarray)
        vec = other.to_numpy() if isinstance(other, Field) else np.asarray(other)
        if vec.ndim != 1 or vec.shape[0] != self.m:
            raise TaichiRuntimeError(f"Dimension mismatch between sparse matrix {self.shape} and "
                                     f"vector ({vec.shape})")
        res = self.csr.matvec(vec)
        return _as_ndarray(res, other.dtype) if nd else res.astype(self.csr.data.dtype)

    def _index(self, indices):
        i, j = (int(k) for k in indices)
        if not (0 <= i < self.n and 0 <= j < self.m):
            raise VkdiffIndexError(f"sparse matrix {self.shape}: no entry ({i}, {j})")
        return i, j

    def __getitem__(self, indices):
        i, j = self._index(indices)
        p = self.csr.find(i, j)
        return self.csr.data[p] if p >= 0 else self.csr.data.dtype.type(0)

    def __setitem__(self, indices, value):
        i, j = self._index(indices)
        p = self.csr.find(i, j)
        if p >= 0:
            self.csr.data[p] = value
        else:
            r, c, v = self.csr.coo()
            self.csr = Csr.from_coo(self.shape, np.append(r, i), np.append(c, j),
                                    np.append(v, value), self.csr.data.dtype)

    def __str__(self):
        return '\n'.join('[' + ', '.join(f'{x:g}' for x in row) + ']' for row in self.to_numpy())

    __repr__ = __str__

    def to_numpy(self):
        """The dense (n, m) numpy array."""
        return self.csr.to_dense()

    def mmwrite(self, filename):
        """Write the matrix in Matrix Market coordinate format."""
        r, c, v = self.csr.coo()
        with open(filename, 'w') as f:
            f.write("%%MatrixMarket matrix coordinate real general\n")
            f.write(f"{self.n} {self.m} {len(v)}\n")
            for i, j, x in zip(r, c, v):
                f.write(f"{i + 1} {j + 1} {x:.17g}\n")


def _as_ndarray(values, dtype):
    out = ndarray(dtype, shape=values.shape)
    out.from_numpy(values.astype(_np_dtype(dtype)))
    return out
