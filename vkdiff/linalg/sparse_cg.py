"""API layer (face floor): `ti.linalg.SparseCG(A, b, x0=None, max_iter=50, atol=1e-6)`, Taichi
1.7.4's conjugate-gradient solver for a SparseMatrix, run on the device.

The matrix goes to the device once, as compressed sparse rows in three ndarrays (row starts,
columns, values); each step is a kernel: the product A p (one invocation per row), the dot
products (kernel returns, read on the host), the vector updates. Like Taichi's CPU solver
(Eigen's ConjugateGradient) it is preconditioned with A's diagonal (Jacobi) and stops when
|r| <= atol * |b| (a tolerance relative to b, as Eigen's) or after max_iter steps; x0 is the
initial guess (zero if None). solve() returns (x, converged): x an ndarray when b is one (as
Taichi on CUDA), else a numpy array (as Taichi on the CPU). f32 or f64 (f64 needs a device with
shaderFloat64). A must be symmetric positive definite; that is not checked (CG then just does
not converge).
"""
from math import isfinite, sqrt

import numpy as np

from .. import types as T
from ..errors import TaichiRuntimeError, TaichiTypeError
from ..lang.field import Field
from ..lang.ndarray import Ndarray, ndarray
from ..lang.types_api import ndarray as nd_arg
from ..launch.kernel import kernel
from .sparse import SparseMatrix, _np_dtype

__all__ = ['SparseCG']

_cache = {}


def _kernels(dtype):
    if str(dtype) in _cache:
        return _cache[str(dtype)]

    @kernel
    def spmv(indptr: nd_arg(), indices: nd_arg(), data: nd_arg(), x: nd_arg(), y: nd_arg(),
             n: T.i32):
        for i in range(n):
            s = dtype(0.0)
            for q in range(indptr[i], indptr[i + 1]):
                s += data[q] * x[indices[q]]
            y[i] = s

    @kernel
    def dot(a: nd_arg(), b: nd_arg(), n: T.i32) -> dtype:
        s = dtype(0.0)
        for i in range(n):
            s += a[i] * b[i]
        return s

    @kernel
    def residual(b: nd_arg(), ax: nd_arg(), r: nd_arg(), dinv: nd_arg(), z: nd_arg(),
                 p: nd_arg(), n: T.i32):
        for i in range(n):
            r[i] = b[i] - ax[i]
            z[i] = dinv[i] * r[i]
            p[i] = z[i]

    @kernel
    def step(x: nd_arg(), r: nd_arg(), p: nd_arg(), ap: nd_arg(), dinv: nd_arg(), z: nd_arg(),
             alpha: dtype, n: T.i32):
        for i in range(n):
            x[i] += alpha * p[i]
            r[i] -= alpha * ap[i]
            z[i] = dinv[i] * r[i]

    @kernel
    def update_p(p: nd_arg(), z: nd_arg(), beta: dtype, n: T.i32):
        for i in range(n):
            p[i] = z[i] + beta * p[i]

    _cache[str(dtype)] = (spmv, dot, residual, step, update_p)
    return _cache[str(dtype)]


def _host_vector(v, n, what):
    a = np.asarray(v.to_numpy() if isinstance(v, (Ndarray, Field)) else v, np.float64)
    if a.shape != (n,):
        raise TaichiRuntimeError(f"SparseCG: {what} has shape {a.shape}, the matrix needs ({n},)")
    return a


class SparseCG:
    """Conjugate gradients for A x = b, A a symmetric positive definite SparseMatrix."""

    def __init__(self, A, b, x0=None, max_iter=50, atol=1e-6):
        if not isinstance(A, SparseMatrix):
            raise TaichiRuntimeError(f"SparseCG needs a SparseMatrix, got {type(A).__name__}")
        if A.n != A.m:
            raise TaichiRuntimeError(f"SparseCG: the matrix is not square: {A.shape}")
        self.dtype = T.resolve(A.dtype)
        if self.dtype not in (T.f32, T.f64):
            raise TaichiTypeError(f"Unsupported CG dtype: {A.dtype}")
        self.matrix, self.b, self.max_iter, self.atol = A, b, int(max_iter), float(atol)
        self._b = _host_vector(b, A.n, 'b')
        self._x0 = np.zeros(A.n) if x0 is None else _host_vector(x0, A.n, 'x0')

    def _device(self, values, dtype):
        a = ndarray(dtype, shape=(max(len(values), 1),))
        a.from_numpy(np.resize(np.asarray(values, _np_dtype(dtype) if dtype in (T.f32, T.f64)
                                          else np.int32), a.shape))
        return a

    def solve(self):
        """(x, converged): the solution and whether |A x - b| <= atol * |b| was reached."""
        n, dt, csr = self.matrix.n, self.dtype, self.matrix.csr
        if csr.nnz >= 2 ** 31:
            raise TaichiRuntimeError(f"SparseCG: {csr.nnz} stored entries; at most 2**31 - 1")
        spmv, dot, residual, step, update_p = _kernels(dt)
        diag = np.zeros(n)
        r_, c_, v_ = csr.coo()
        on = r_ == c_
        diag[r_[on]] = v_[on]
        dinv = np.where(diag != 0, 1.0 / np.where(diag != 0, diag, 1.0), 1.0)
        indptr = self._device(csr.indptr, T.i32)
        indices, data = self._device(csr.indices, T.i32), self._device(csr.data, dt)
        b, x, d = self._device(self._b, dt), self._device(self._x0, dt), self._device(dinv, dt)
        r, z, p, ap = (ndarray(dt, shape=(n,)) for _ in range(4))
        spmv(indptr, indices, data, x, ap, n)
        residual(b, ap, r, d, z, p, n)
        b_norm2 = float(np.dot(self._b, self._b))
        threshold = self.atol * self.atol * b_norm2
        rr = dot(r, r, n)
        converged = b_norm2 == 0.0 or rr <= threshold
        if b_norm2 == 0.0:
            x.fill(0)
        rz = dot(r, z, n)
        for _ in range(self.max_iter if not converged else 0):
            spmv(indptr, indices, data, p, ap, n)
            pap = dot(p, ap, n)
            if pap == 0 or not isfinite(pap) or rz == 0:  # a breakdown (Eigen goes on where
                break  # p.Ap < 0: a symmetric indefinite system may still converge)
            step(x, r, p, ap, d, z, rz / pap, n)
            rr = dot(r, r, n)
            if rr <= threshold:
                converged = True
                break
            rz_new = dot(r, z, n)
            update_p(p, z, rz_new / rz, n)
            rz = rz_new
        self.residual_norm = sqrt(rr / b_norm2) if b_norm2 else 0.0
        if isinstance(self.b, Ndarray):
            return x, bool(converged)
        return x.to_numpy(), bool(converged)
