"""API layer: `ti.linalg`, as Taichi's package of the same name: the matrix-free Krylov solvers
(matrixfree.py: LinearOperator, MatrixFreeCG, MatrixFreeBICGSTAB), sparse matrices (sparse.py:
SparseMatrixBuilder, SparseMatrix, stored as compressed sparse rows by csr.py), the direct
solver (sparse_solver.py: SparseSolver, through scipy) and the device conjugate gradient
(sparse_cg.py: SparseCG). The small-matrix helpers (svd, polar_decompose, sym_eig) are in
lang/linalg.py."""
from .matrixfree import LinearOperator, MatrixFreeBICGSTAB, MatrixFreeCG  # noqa: F401
from .sparse import *  # noqa: F401,F403
from .sparse import SparseMatrix, SparseMatrixBuilder  # noqa: F401
from .sparse_cg import SparseCG  # noqa: F401
from .sparse_solver import SparseSolver  # noqa: F401
