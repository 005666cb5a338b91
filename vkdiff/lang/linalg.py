"""Face floor: small-matrix decompositions used by simulation code (`ti.polar_decompose`,
`ti.svd`, `ti.sym_eig` for 2x2 and 3x3), written in vkdiff's own kernel language (the 3x3
versions as trace-time Python over kernel values, fully unrolled and branch-free), so they are
inlined like any func and differentiate like any other code."""
from ..frontend import ops
from ..frontend.context import error
from ..frontend.func import func
from . import api
from .matrix import Matrix, Vector


@func
def _polar2d(A):
    """A = U P with P symmetric positive semi-definite (Taichi 1.7.4's formula): U = B / sqrt|det B|
    is a rotation for det(A) >= 0 and a reflection for det(A) < 0, P = (A^T A + |det A| I) /
    sqrt|det B|; the zero matrix gives (I, 0)."""
    det = A[0, 0] * A[1, 1] - A[1, 0] * A[0, 1]
    x = A[0, 0] + A[1, 1]
    y = A[0, 1] - A[1, 0]
    B = Matrix([[x, y], [-y, x]])
    if det < 0.0:
        x = A[0, 0] - A[1, 1]
        y = A[0, 1] + A[1, 0]
        B = Matrix([[x, y], [y, -x]])
    U = B * 0.0 + Matrix([[1.0, 0.0], [0.0, 1.0]])
    P = A * 1.0
    if x != 0.0 or y != 0.0:  # B is 0 only for A == 0
        k = 1.0 / api.sqrt(x * x + y * y)
        U = B * k
        P = (A.transpose() @ A + abs(det) * Matrix([[1.0, 0.0], [0.0, 1.0]])) * k
    return U, P


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


# ---------------------------------------------------------------------------------------- 3x3
# Trace-time helpers: plain Python over kernel values (scalars as lists, indices static), so
# every sweep unrolls into straight-line scalar arithmetic and selects: no branches for the
# autodiff pass to replay. Python float constants adopt the input's dtype (f32 or f64).

_SWEEPS = 5   # cyclic sweeps of the three (p, q) rotations; 4 sufficed on 1.2M test matrices
_PAIRS = ((0, 1), (0, 2), (1, 2))


def _sqrt(x):
    return ops.unary('sqrt', x)


def _safe(cond, x):
    """x where cond holds, else 1: keeps sqrt/division (and their derivatives) finite in the
    branch that a select later discards."""
    return ops.select(cond, x, 1.0)


def _jacobi_cs(app, aqq, apq):
    """(c, s, t = s/c) of the Jacobi rotation zeroing apq of [[app, apq], [apq, aqq]].

    t = sign(theta) / (|theta| + sqrt(theta^2 + 1)) with theta = (aqq - app) / (2 apq), written
    without dividing by apq: t = 2 apq sign(d) / (|d| + sqrt(d^2 + 4 apq^2)), d = aqq - app.
    That is smooth where apq = 0 (t = 0, dt/dapq = 1/d); d and apq are first scaled by
    max(|d|, 2|apq|) (t does not change) so that the squares cannot overflow or underflow, and
    where d = apq = 0 the selects give the identity rotation with finite derivatives."""
    d = aqq - app
    m = ops.binary('max', abs(d), abs(apq) * 2.0)
    ok = m > 0.0
    inv = 1.0 / _safe(ok, m)
    dn, an = d * inv, apq * inv
    r = _safe(ok, dn * dn + 4.0 * an * an)
    t = ops.select(d >= 0.0, an, -an) * 2.0 / (abs(dn) + _sqrt(r))
    c = ops.unary('rsqrt', t * t + 1.0)
    return c, t * c, t


def _rotate_cols(M, p, q, c, s):
    """M P for the Jacobi rotation P in the (p, q) plane (M as a row-major list of 9)."""
    for i in range(3):
        mp, mq = M[3 * i + p], M[3 * i + q]
        M[3 * i + p] = c * mp - s * mq
        M[3 * i + q] = s * mp + c * mq


def _col(M, j):
    return [M[3 * i + j] for i in range(3)]


def _dot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _sort_desc(keys, mats, p, q):
    """Order columns p, q by decreasing key. A swap negates one column so that det of every
    matrix in `mats` is kept (+1 stays +1)."""
    swap = keys[q] > keys[p]
    keys[p], keys[q] = ops.select(swap, keys[q], keys[p]), ops.select(swap, keys[p], keys[q])
    for M in mats:
        for i in range(3):
            mp, mq = M[3 * i + p], M[3 * i + q]
            M[3 * i + p] = ops.select(swap, mq, mp)
            M[3 * i + q] = ops.select(swap, -mp, mq)


def _eye(like):
    one, zero = like * 0.0 + 1.0, like * 0.0
    return [one if i == j else zero for i in range(3) for j in range(3)]


def _svd3_lists(A):
    """One-sided (Hestenes) Jacobi: rotate the columns of W = A V until they are orthogonal, the
    same rotations as cyclic Jacobi on A^T A but without squaring the condition number. Then
    sort the columns by norm, U = Gram-Schmidt of the columns (third one = u0 x u1, so that
    det U = +1), sigma_i = u_i . w_i (the last one signed)."""
    W = [A[i, j] for i in range(3) for j in range(3)]
    V = _eye(W[0])
    for _ in range(_SWEEPS):
        for p, q in _PAIRS:
            wp, wq = _col(W, p), _col(W, q)
            c, s, _ = _jacobi_cs(_dot(wp, wp), _dot(wq, wq), _dot(wp, wq))
            _rotate_cols(W, p, q, c, s)
            _rotate_cols(V, p, q, c, s)
    norms = [_dot(_col(W, j), _col(W, j)) for j in range(3)]
    for p, q in ((0, 1), (0, 2), (1, 2)):
        _sort_desc(norms, (W, V), p, q)
    w0, w1, w2 = _col(W, 0), _col(W, 1), _col(W, 2)
    # u0: w0 normalised (e0 for a zero matrix)
    n0 = norms[0]
    ok0 = n0 > 0.0
    inv0 = ops.unary('rsqrt', _safe(ok0, n0))
    one, zero = W[0] * 0.0 + 1.0, W[0] * 0.0
    u0 = [ops.select(ok0, w0[i] * inv0, one if i == 0 else zero) for i in range(3)]
    s0 = ops.select(ok0, n0 * inv0, zero)
    # u1: w1 orthogonalised against u0; for rank 1 any unit vector orthogonal to u0: u0 x e_k
    # with e_k the axis least aligned with u0
    h = _dot(u0, w1)
    r1 = [w1[i] - h * u0[i] for i in range(3)]
    n1 = _dot(r1, r1)
    ok1 = n1 > n0 * 1e-30
    inv1 = ops.unary('rsqrt', _safe(ok1, n1))
    a = [abs(x) for x in u0]
    use_x = ops.binary('land', a[0] <= a[1], a[0] <= a[2])
    use_y = a[1] <= a[2]
    fx, fy, fz = [zero, u0[2], -u0[1]], [-u0[2], zero, u0[0]], [u0[1], -u0[0], zero]
    f = [ops.select(use_x, fx[i], ops.select(use_y, fy[i], fz[i])) for i in range(3)]
    finv = ops.unary('rsqrt', _dot(f, f))
    u1 = [ops.select(ok1, r1[i] * inv1, f[i] * finv) for i in range(3)]
    s1 = ops.select(ok1, n1 * inv1, zero)
    u2 = _cross(u0, u1)
    s2 = _dot(u2, w2)
    U = [u0[0], u1[0], u2[0], u0[1], u1[1], u2[1], u0[2], u1[2], u2[2]]
    return U, [s0, s1, s2], V


def _mat(entries):
    return Matrix([entries[0:3], entries[3:6], entries[6:9]])


def _diag(d):
    zero = d[0] * 0.0
    return Matrix([[d[0], zero, zero], [zero, d[1], zero], [zero, zero, d[2]]])


@func
def _svd3d(A):
    U, sig, V = _svd3_lists(A)
    return _mat(U), _diag(sig), _mat(V)


def _polar3_lists(A):
    U, sig, V = _svd3_lists(A)
    R = [_dot(U[3 * i:3 * i + 3], V[3 * j:3 * j + 3]) for i in range(3) for j in range(3)]
    SV = [[V[3 * i + k] * sig[k] for k in range(3)] for i in range(3)]
    S = [_dot(SV[min(i, j)], V[3 * max(i, j):3 * max(i, j) + 3])   # exactly symmetric
         for i in range(3) for j in range(3)]
    return R, S


@func
def _polar3d(A):
    R, S = _polar3_lists(A)
    return _mat(R), _mat(S)


def _sym_eig3_lists(A):
    """Cyclic Jacobi on the symmetric matrix (its upper triangle is read), eigenvectors
    accumulated in V (det +1), then sorted by decreasing eigenvalue."""
    a = {(i, j): A[i, j] for i in range(3) for j in range(i, 3)}
    V = _eye(a[0, 0])
    for _ in range(_SWEEPS):
        for p, q in _PAIRS:
            r = 3 - p - q
            app, aqq, apq = a[p, p], a[q, q], a[p, q]
            c, s, t = _jacobi_cs(app, aqq, apq)
            t_apq = t * apq
            arp, arq = a[min(r, p), max(r, p)], a[min(r, q), max(r, q)]
            a[p, p] = app - t_apq
            a[q, q] = aqq + t_apq
            a[p, q] = apq * 0.0
            a[min(r, p), max(r, p)] = c * arp - s * arq
            a[min(r, q), max(r, q)] = s * arp + c * arq
            _rotate_cols(V, p, q, c, s)
    ev = [a[i, i] for i in range(3)]
    for p, q in ((0, 1), (0, 2), (1, 2)):
        _sort_desc(ev, (V,), p, q)
    return ev, V


@func
def _sym_eig3d(A):
    ev, V = _sym_eig3_lists(A)
    return Vector(ev), _mat(V)


def _check(A, what):
    if not isinstance(A, Matrix) or A.ndim != 2 or (A.n, A.m) not in ((2, 2), (3, 3)):
        shape = A.get_shape() if isinstance(A, Matrix) else type(A).__name__
        raise error(f'ti.{what} supports 2x2 and 3x3 matrices, got {shape}')


def polar_decompose(A, dt=None):
    """A = R S with R a rotation (det +1) and S symmetric, for 2x2 and 3x3 matrices.

    3x3: R = U V^T and S = V Sigma V^T from `svd`, as in Taichi; where det(A) < 0, S has one
    negative eigenvalue (R stays a proper rotation)."""
    _check(A, 'polar_decompose')
    return _polar2d(A) if A.n == 2 else _polar3d(A)


def svd(A, dt=None):
    """A = U Sigma V^T with Sigma a diagonal matrix and det(U) = det(V) = +1, for 2x2 and 3x3.

    The diagonal is ordered by decreasing magnitude; only the last entry can be negative (it is
    where det(A) < 0), as in Taichi (McAdams et al.). 3x3: one-sided Jacobi (five fixed sweeps,
    unrolled), accurate to a few ulps of |A| in f32 and f64 while |A|^2 is a normal float."""
    _check(A, 'svd')
    return _svd2d(A) if A.n == 2 else _svd3d(A)


def sym_eig(A, dt=None):
    """Eigenvalues (a vector, decreasing) and eigenvectors (the matrix columns, in the same
    order, orthonormal with det +1) of a symmetric 2x2 or 3x3 matrix. Taichi returns the same
    order for both sizes. 3x3: cyclic Jacobi on the upper triangle (five fixed sweeps)."""
    _check(A, 'sym_eig')
    return _sym_eig2d(A) if A.n == 2 else _sym_eig3d(A)
