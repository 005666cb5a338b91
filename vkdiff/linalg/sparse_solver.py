"""API layer (face floor): `ti.linalg.SparseSolver`, the direct solver of Taichi 1.7.4, on the
host through scipy.sparse.linalg (SuperLU), in float64; the solution comes back in the solver's
dtype.

solver_type 'LU': SuperLU with partial pivoting; ordering 'COLAMD' -> SuperLU's COLAMD column
order, 'AMD' -> its minimum degree order on A^T + A. 'LLT' and 'LDLT' (symmetric matrices):
SuperLU with the symmetric minimum degree order and no row pivoting (diag_pivot_thresh=0), so
U's diagonal is LDLT's D; LLT also needs every pivot positive (A positive definite), as a
Cholesky factorisation does. A matrix that does not qualify (not symmetric, singular, not
positive definite for LLT) makes info() False, as Eigen's solvers report it, and solve() then
returns NaNs. scipy is an optional dependency (`pip install vkdiff[sparse]`, tools/setup.sh
installs it): without it SparseSolver() raises an ImportError that says so.
"""
import numpy as np

from .. import types as T
from ..errors import TaichiRuntimeError
from ..lang.field import Field
from ..lang.ndarray import Ndarray
from .sparse import SparseMatrix, _as_ndarray, _np_dtype

__all__ = ['SparseSolver']

ORDERINGS = {'AMD': 'MMD_AT_PLUS_A', 'COLAMD': 'COLAMD'}


def _scipy():
    try:
        import scipy.sparse
        import scipy.sparse.linalg
    except ImportError as e:
        raise ImportError("ti.linalg.SparseSolver factorises with scipy, which is not installed: "
                          "pip install scipy (or vkdiff[sparse])") from e
    return scipy.sparse, scipy.sparse.linalg


class SparseSolver:
    """Direct solver: solver_type 'LLT' (Cholesky), 'LDLT' or 'LU'; ordering 'AMD' or 'COLAMD'."""

    def __init__(self, dtype=T.f32, solver_type="LLT", ordering="AMD"):
        if solver_type not in ("LLT", "LDLT", "LU"):
            raise TaichiRuntimeError(f"SparseSolver: solver_type must be LLT, LDLT or LU, got "
                                     f"{solver_type!r}")
        if ordering not in ORDERINGS:
            raise TaichiRuntimeError(f"SparseSolver: ordering must be AMD or COLAMD, got "
                                     f"{ordering!r}")
        self._sp, self._spla = _scipy()
        self.dtype, self.solver_type, self.ordering = dtype, solver_type, ordering
        self.matrix, self._lu, self._ok = None, None, False

    def _check(self, sparse_matrix):
        if not isinstance(sparse_matrix, SparseMatrix):
            raise TaichiRuntimeError(f"The parameter type: {type(sparse_matrix)} is not "
                                     f"supported in linear solvers for now.")
        if sparse_matrix.n != sparse_matrix.m:
            raise TaichiRuntimeError(f"SparseSolver: the matrix is not square: "
                                     f"{sparse_matrix.shape}")

    def analyze_pattern(self, sparse_matrix):
        self._check(sparse_matrix)
        self.matrix, self._lu, self._ok = sparse_matrix, None, False

    def factorize(self, sparse_matrix):
        self._check(sparse_matrix)
        self.matrix, self._lu, self._ok = sparse_matrix, None, False
        c = sparse_matrix.csr
        a = self._sp.csc_matrix(self._sp.csr_matrix(
            (c.data.astype(np.float64), c.indices, c.indptr), shape=c.shape))
        if not np.isfinite(a.data).all():
            return
        symmetric = self.solver_type in ("LLT", "LDLT")
        if symmetric:
            d = abs(a - a.T)
            scale = abs(a).max() if a.nnz else 0.0
            if d.nnz and d.max() > 1e-6 * scale:
                return  # LLT / LDLT of a matrix that is not symmetric
        try:
            if symmetric:
                lu = self._spla.splu(a, permc_spec='MMD_AT_PLUS_A', diag_pivot_thresh=0.0,
                                     options={'SymmetricMode': True})
            else:
                lu = self._spla.splu(a, permc_spec=ORDERINGS[self.ordering])
        except RuntimeError:  # SuperLU: "Factor is exactly singular"
            return
        pivots = lu.U.diagonal()
        if not np.isfinite(pivots).all() or (pivots == 0).any():
            return
        if self.solver_type == "LLT" and (pivots <= 0).any():
            return  # not positive definite: no Cholesky factor
        self._lu, self._ok = lu, True

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
        rhs = np.asarray(b.to_numpy() if nd or isinstance(b, Field) else b, np.float64)
        if rhs.shape != (self.matrix.n,):
            raise TaichiRuntimeError(f"SparseSolver.solve: b has shape {rhs.shape}, the matrix "
                                     f"{self.matrix.shape}")
        if self._lu is None:
            x = np.full(self.matrix.m, np.nan)
        else:
            x = self._lu.solve(rhs)
            self._ok = self._ok and bool(np.isfinite(x).all())
        if nd:
            return _as_ndarray(x, self.dtype)
        return x.astype(_np_dtype(self.dtype))

    def info(self):
        """True if the last factorisation and solve succeeded."""
        return self._ok
