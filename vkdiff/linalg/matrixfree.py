"""API stage: `ti.linalg`'s matrix-free Krylov solvers (vkdiff/linalg/__init__.py re-exports them), as in
Taichi 1.7.4 (python/taichi/linalg/matrixfree_cg.py):
`LinearOperator(matvec_kernel)` wraps a kernel `matvec(v, Av)` over fields;
`MatrixFreeCG` (symmetric positive definite A) and `MatrixFreeBICGSTAB` (any nonsingular A) solve
A x = b for 1-3 dimensional f32/f64 fields, in place in x, and return whether the residual norm got
below `tol`. The vectors are fields of one FieldsBuilder tree, freed when the solve ends; each
step is a kernel, the dot products are kernel returns read on the host.
"""
from math import sqrt

from .. import types as T
from ..errors import TaichiRuntimeError, TaichiTypeError
from ..lang import api
from ..lang.field import field, i, ij, ijk
from ..lang.fields_builder import FieldsBuilder
from ..launch.kernel import data_oriented, kernel, template

__all__ = ['LinearOperator', 'MatrixFreeCG', 'MatrixFreeBICGSTAB']


@data_oriented
class LinearOperator:
    """A matrix given by its product: `matvec_kernel(x, Ax)` writes A x into the field Ax."""

    def __init__(self, matvec_kernel):
        self._matvec = matvec_kernel

    def matvec(self, x, Ax):
        if x.shape != Ax.shape:
            raise TaichiRuntimeError(f'Dimension mismatch x.shape{x.shape} != Ax.shape{Ax.shape}.')
        self._matvec(x, Ax)


def _check(name, b, x):
    if b.dtype != x.dtype:
        raise TaichiTypeError(f'Dtype mismatch b.dtype({b.dtype}) != x.dtype({x.dtype}).')
    if b.dtype not in (T.f32, T.f64):
        raise TaichiTypeError(f'Not supported dtype: {b.dtype}')
    if b.shape != x.shape:
        raise TaichiRuntimeError(f'Dimension mismatch b.shape{b.shape} != x.shape{x.shape}.')
    if not 1 <= len(b.shape) <= 3:
        raise TaichiRuntimeError(f'{name} only support 1D, 2D, 3D inputs; your inputs is '
                                 f'{len(b.shape)}-D.')
    return b.dtype


class _Workspace:
    """Solver vectors shaped like b, and 0-D scalars, in one FieldsBuilder tree each."""

    def __init__(self, dtype, shape, vectors, scalars):
        self._trees = []
        self._make(dtype, vectors, lambda fb: fb.dense((i, ij, ijk)[len(shape) - 1], shape))
        self._make(dtype, scalars, lambda fb: fb)

    def _make(self, dtype, names, node):
        fb = FieldsBuilder()
        fs = [field(dtype) for _ in names]
        node(fb).place(*fs)
        self._trees.append(fb.finalize())
        for n, f in zip(names, fs):
            setattr(self, n, f)

    def destroy(self):
        for t in self._trees:
            t.destroy()


def _vector_kernels(dtype):
    """dot(p, q) -> dtype; copy(src, dst); axpy(y, a, x): y += a[None] * x (a a 0-D field);
    xpay(y, x, a): y = x + a[None] * y."""

    @kernel
    def dot(p: template(), q: template()) -> dtype:
        s = dtype(0.0)
        for I in api.grouped(p):
            s += p[I] * q[I]
        return s

    @kernel
    def copy(src: template(), dst: template()):
        for I in api.grouped(src):
            dst[I] = src[I]

    @kernel
    def axpy(y: template(), a: template(), x: template(), sign: template()):
        for I in api.grouped(y):
            y[I] += sign * a[None] * x[I]

    return dot, copy, axpy


def MatrixFreeCG(A, b, x, tol=1e-6, maxiter=5000, quiet=True):
    """Solve A x = b by conjugate gradients (A symmetric positive definite, a LinearOperator);
    x holds the initial guess and receives the solution. Returns True when converged."""
    dtype = _check('MatrixFreeCG', b, x)
    w = _Workspace(dtype, b.shape, ('p', 'r', 'Ap', 'Ax'), ('alpha', 'beta'))
    dot, copy, axpy = _vector_kernels(dtype)

    @kernel
    def init():
        for I in api.grouped(x):
            w.r[I] = b[I] - w.Ax[I]
            w.p[I] = w.r[I]

    @kernel
    def update_p():
        for I in api.grouped(w.p):
            w.p[I] = w.r[I] + w.beta[None] * w.p[I]

    try:
        A._matvec(x, w.Ax)
        init()
        old = new = dot(w.r, w.r)
        if not quiet:
            print(f'>>> Initial residual = {old:e}')
        if sqrt(old) >= tol:
            for it in range(maxiter):
                A._matvec(w.p, w.Ap)
                w.alpha[None] = old / dot(w.p, w.Ap)
                axpy(x, w.alpha, w.p, 1)
                axpy(w.r, w.alpha, w.Ap, -1)
                new = dot(w.r, w.r)
                if sqrt(new) < tol:
                    if not quiet:
                        print(f'>>> Conjugate Gradient method converged.\n>>> #iterations {it}')
                    break
                w.beta[None] = new / old
                update_p()
                old = new
                if not quiet:
                    print(f'>>> Iter = {it + 1:4}, Residual = {sqrt(new):e}')
        ok = new < tol
        if not ok and not quiet:
            print(f'>>> Conjugate Gradient method failed to converge in {maxiter} iterations: '
                  f'Residual = {sqrt(new):e}')
        return ok
    finally:
        w.destroy()


def MatrixFreeBICGSTAB(A, b, x, tol=1e-6, maxiter=5000, quiet=True):
    """Solve A x = b by the biconjugate gradient stabilized method (A any nonsingular
    LinearOperator); x holds the initial guess and receives the solution. Returns True when
    converged."""
    dtype = _check('MatrixFreeBICGSTAB', b, x)
    w = _Workspace(dtype, b.shape, ('p', 'r', 'r_tld', 's', 't', 'Ap', 'Ax'),
                   ('alpha', 'beta', 'omega'))
    dot, copy, axpy = _vector_kernels(dtype)

    @kernel
    def init():
        for I in api.grouped(x):
            w.r[I] = b[I] - w.Ax[I]
            w.r_tld[I] = b[I]

    @kernel
    def update_p():
        for I in api.grouped(w.p):
            w.p[I] = w.r[I] + w.beta[None] * (w.p[I] - w.omega[None] * w.Ap[I])

    @kernel
    def update_s():
        for I in api.grouped(w.s):
            w.s[I] = w.r[I] - w.alpha[None] * w.Ap[I]

    @kernel
    def update_x_r():
        for I in api.grouped(x):
            x[I] += w.alpha[None] * w.p[I] + w.omega[None] * w.s[I]
            w.r[I] = w.s[I] - w.omega[None] * w.t[I]

    try:
        ok = True
        A._matvec(x, w.Ax)
        init()
        rr = dot(w.r, w.r)
        if not quiet:
            print(f'>>> Initial residual = {rr:e}')
        if sqrt(rr) >= tol:
            rho_old = alpha = omega = 1.0
            for it in range(maxiter):
                rho = dot(w.r, w.r_tld)
                if rho == 0.0:
                    if not quiet:
                        print('>>> BICGSTAB failed because r@r_tld = 0.')
                    ok = False
                    break
                if it == 0:
                    copy(w.r, w.p)
                else:
                    w.beta[None] = (rho / rho_old) * (alpha / omega)
                    update_p()
                A._matvec(w.p, w.Ap)
                alpha = rho / dot(w.r_tld, w.Ap)
                w.alpha[None] = alpha
                update_s()
                A._matvec(w.s, w.t)
                tt = dot(w.t, w.t)
                omega = dot(w.t, w.s) / (tt if tt != 0.0 else 1e-16)
                w.omega[None] = omega
                update_x_r()
                rr = dot(w.r, w.r)
                if not quiet:
                    print(f'>>> Iter = {it + 1:4}, Residual = {sqrt(rr):e}')
                if sqrt(rr) < tol:
                    if not quiet:
                        print(f'>>> BICGSTAB method converged at #iterations {it}')
                    break
                rho_old = rho
        if rr >= tol:
            if not quiet:
                print(f'>>> BICGSTAB failed to converge in {maxiter} iterations: '
                      f'Residual = {sqrt(rr):e}')
            ok = False
        return ok
    finally:
        w.destroy()
