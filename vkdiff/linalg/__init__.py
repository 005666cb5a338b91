"""API layer: `ti.linalg`, as Taichi's package of the same name: the matrix-free Krylov solvers
(matrixfree.py: LinearOperator, MatrixFreeCG, MatrixFreeBICGSTAB) and sparse matrices
(sparse.py: SparseMatrixBuilder, SparseMatrix, SparseSolver). The small-matrix helpers
(svd, polar_decompose, sym_eig) are in lang/linalg.py."""
from .matrixfree import LinearOperator, MatrixFreeBICGSTAB, MatrixFreeCG  # noqa: F401
from .sparse import *  # noqa: F401,F403
from .sparse import SparseMatrix, SparseMatrixBuilder, SparseSolver  # noqa: F401
