"""API stage: small-matrix decompositions used by simulation code (`ti.polar_decompose`,
`ti.svd`, `ti.sym_eig` for 2x2), written in vkdiff's own kernel language, so they are inlined
like any func and differentiate like any other code."""
from ..frontend.context import error
from .kernel import func
from . import api
from .matrix import Matrix, Vector


@func
def _polar2d(A):
    x = A[0, 0] + A[1, 1]
    y = A[1, 0] - A[0, 1]
    scale = 1.0 / api.sqrt(x * x + y * y)
    c = x * scale
    s = y * scale
    R = Matrix([[c, -s], [s, c]])
    return R, R.transpose() @ A


@func
def _svd2d(A):
    R, S = _polar2d(A)
    c = S[0, 0] * 0.0 + 1.0
    s = S[0, 0] * 0.0
    s1 = S[0, 0]
    s2 = S[1, 1]
    if abs(S[0, 1]) >= 1e-5:
        tao = 0.5 * (S[0, 0] - S[1, 1])
        w = api.sqrt(tao * tao + S[0, 1] * S[0, 1])
        t = S[0, 1] / (tao - w)
        if tao > 0:
            t = S[0, 1] / (tao + w)
        c = 1.0 / api.sqrt(t * t + 1.0)
        s = -t * c
        s1 = c * c * S[0, 0] - 2.0 * c * s * S[0, 1] + s * s * S[1, 1]
        s2 = s * s * S[0, 0] + 2.0 * c * s * S[0, 1] + c * c * S[1, 1]
    V = Matrix([[c, s], [-s, c]])
    if s1 < s2:
        tmp = s1
        s1 = s2
        s2 = tmp
        V = Matrix([[-s, c], [-c, -s]])
    U = R @ V
    return U, Matrix([[s1, 0.0], [0.0, s2]]), V


@func
def _sym_eig2d(A):
    tr = A[0, 0] + A[1, 1]
    det = A[0, 0] * A[1, 1] - A[0, 1] * A[1, 0]
    gap = api.sqrt(api.max(tr * tr - 4.0 * det, 0.0))
    l1 = 0.5 * (tr + gap)
    l2 = 0.5 * (tr - gap)
    v1 = Vector([A[0, 1], l1 - A[0, 0]])
    if abs(A[0, 1]) < 1e-12 * (abs(A[0, 0]) + abs(A[1, 1]) + 1e-30):
        v1 = Vector([1.0, 0.0])
        if A[1, 1] > A[0, 0]:
            v1 = Vector([0.0, 1.0])
    v1 = v1.normalized()
    v2 = Vector([-v1[1], v1[0]])
    return Vector([l1, l2]), Matrix([[v1[0], v2[0]], [v1[1], v2[1]]])


def _check2x2(A, what):
    if not isinstance(A, Matrix) or (A.n, A.m) != (2, 2):
        raise error(f'ti.{what} supports 2x2 matrices in vkdiff (3x3 is not implemented yet)')


def polar_decompose(A, dt=None):
    """A = R S with R a rotation and S symmetric (2x2)."""
    _check2x2(A, 'polar_decompose')
    return _polar2d(A)


def svd(A, dt=None):
    """A = U diag(sigma) V^T (2x2), singular values in decreasing order."""
    _check2x2(A, 'svd')
    return _svd2d(A)


def sym_eig(A, dt=None):
    """Eigenvalues (decreasing) and eigenvectors (columns) of a symmetric 2x2 matrix."""
    _check2x2(A, 'sym_eig')
    return _sym_eig2d(A)
