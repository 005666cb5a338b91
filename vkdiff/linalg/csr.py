"""API layer (face floor): compressed sparse row storage for `ti.linalg.SparseMatrix`, in numpy.

A Csr holds `indptr` (n + 1 row starts, int64), `indices` (column of each stored value, int64,
sorted and unique within a row) and `data`; `shape` is (n, m). Everything is built through
`Csr.from_coo`, which sums duplicate (row, col) entries as Eigen's setFromTriplets does and keeps
explicit zeros (the pattern is what was stored). The operations (sum, element-wise product,
transpose, product with a matrix or a vector) cost O(stored entries), never O(n * m).
"""
import numpy as np


class Csr:
    __slots__ = ('shape', 'indptr', 'indices', 'data')

    def __init__(self, shape, indptr, indices, data):
        self.shape, self.indptr, self.indices, self.data = shape, indptr, indices, data

    @classmethod
    def from_coo(cls, shape, rows, cols, vals, dtype):
        n, m = shape
        rows = np.asarray(rows, np.int64).ravel()
        cols = np.asarray(cols, np.int64).ravel()
        vals = np.asarray(vals, dtype).ravel()
        if rows.size and (rows.min() < 0 or rows.max() >= n or cols.min() < 0 or cols.max() >= m):
            raise IndexError(f'sparse matrix {shape}: an entry lies outside it (rows '
                             f'{rows.min()}..{rows.max()}, columns {cols.min()}..{cols.max()})')
        key = rows * m + cols
        uniq, inverse = np.unique(key, return_inverse=True)
        data = np.zeros(uniq.size, dtype)
        np.add.at(data, inverse, vals)
        r = uniq // m if m else uniq
        indptr = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(r, minlength=n), out=indptr[1:])
        return cls((n, m), indptr, uniq - r * m, data)

    @classmethod
    def from_dense(cls, a, dtype):
        a = np.asarray(a)
        if a.ndim != 2:
            raise ValueError(f'a sparse matrix needs a 2-D array, got shape {a.shape}')
        r, c = np.nonzero(a)
        return cls.from_coo(a.shape, r, c, a[r, c], dtype)

    @classmethod
    def empty(cls, shape, dtype):
        return cls.from_coo(shape, [], [], [], dtype)

    @property
    def nnz(self):
        return int(self.data.size)

    def rows(self):
        """The row of each stored value."""
        return np.repeat(np.arange(self.shape[0], dtype=np.int64), np.diff(self.indptr))

    def coo(self):
        return self.rows(), self.indices, self.data

    def astype(self, dtype):
        return Csr(self.shape, self.indptr, self.indices, self.data.astype(dtype))

    def to_dense(self):
        a = np.zeros(self.shape, self.data.dtype)
        r, c, v = self.coo()
        a[r, c] = v
        return a

    def scaled(self, s):
        return Csr(self.shape, self.indptr, self.indices, (self.data * s).astype(self.data.dtype))

    def plus(self, other, sign=1.0):
        r0, c0, v0 = self.coo()
        r1, c1, v1 = other.coo()
        return Csr.from_coo(self.shape, np.concatenate([r0, r1]), np.concatenate([c0, c1]),
                            np.concatenate([v0, sign * v1]), self.data.dtype)

    def times(self, other):
        """Element-wise product: the entries stored in both."""
        m = self.shape[1]
        r0, c0, v0 = self.coo()
        r1, c1, v1 = other.coo()
        _, i0, i1 = np.intersect1d(r0 * m + c0, r1 * m + c1, assume_unique=True,
                                   return_indices=True)
        return Csr.from_coo(self.shape, r0[i0], c0[i0], v0[i0] * v1[i1], self.data.dtype)

    def transpose(self):
        r, c, v = self.coo()
        return Csr.from_coo(self.shape[::-1], c, r, v, self.data.dtype)

    def matmul(self, other):
        """self @ other for another Csr: each stored a_ik meets row k of other."""
        r, k, a = self.coo()
        start, count = other.indptr[k], np.diff(other.indptr)[k]
        rows = np.repeat(r, count)
        vals_a = np.repeat(a, count)
        pos = np.repeat(start - np.concatenate([[0], np.cumsum(count)[:-1]]), count) + \
            np.arange(int(count.sum()), dtype=np.int64)
        return Csr.from_coo((self.shape[0], other.shape[1]), rows, other.indices[pos],
                            vals_a * other.data[pos], self.data.dtype)

    def matvec(self, x):
        """self @ x in float64, for a 1-D x."""
        r, c, v = self.coo()
        out = np.zeros(self.shape[0], np.float64)
        np.add.at(out, r, v.astype(np.float64) * np.asarray(x, np.float64)[c])
        return out

    def find(self, i, j):
        """Position of entry (i, j) in data, or -1."""
        lo, hi = self.indptr[i], self.indptr[i + 1]
        p = lo + np.searchsorted(self.indices[lo:hi], j)
        return int(p) if p < hi and self.indices[p] == j else -1
