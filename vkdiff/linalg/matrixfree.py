"""API stage: `ti.linalg`'s matrix-free Krylov solvers (Taichi 1.7.4, python/taichi/linalg/
matrixfree_cg.py, Apache-2.0): `LinearOperator(matvec_kernel)` wraps a kernel computing A @ x
from one field into another; `MatrixFreeCG` (A symmetric positive definite) and
`MatrixFreeBICGSTAB` (any non-singular A) solve A x = b in place of `x` (its initial guess) and
return whether the residual fell below `tol` within `maxiter` iterations. Same iterations as
Taichi's: element-wise kernels over 1-3-D dense work fields laid out with a FieldsBuilder (freed
afterwards), dot products as reduction kernels read back each step.
(The small-matrix helpers polar_decompose/svd/sym_eig are in lang/linalg.py.)"""
from math import sqrt

from .. import types as _T
from ..errors import TaichiRuntimeError, TaichiTypeError
from ..lang.fields_builder import FieldsBuilder
from ..lang.field import field, i as _i, ij as _ij, ijk as _ijk
from ..lang.kernel import data_oriented, kernel, template
from ..lang.api import grouped

__all__ = ['LinearOperator', 'MatrixFreeCG', 'MatrixFreeBICGSTAB']


@data_oriented
class LinearOperator:
    """A matrix given by its product: `matvec_kernel(x, Ax)` writes A @ x into Ax."""

    def __init__(self, matvec_kernel):
        self._matvec = matvec_kernel

    def matvec(self, x, Ax):
        if x.shape != Ax.shape:
            raise TaichiRuntimeError(f'Dimension mismatch x.shape{x.shape} != Ax.shape{Ax.shape}.')
        self._matvec(x, Ax)


def _check(name, b, x):
    """The solver's dtype (b's and x's, f32 or f64), after Taichi's checks."""
    if b.dtype != x.dtype:
        raise TaichiTypeError(f'Dtype mismatch b.dtype({b.dtype}) != x.dtype({x.dtype}).')
    if str(b.dtype) not in ('f32', 'f64'):
        raise TaichiTypeError(f'Not supported dtype: {b.dtype}')
    if b.shape != x.shape:
        raise TaichiRuntimeError(f'Dimension mismatch b.shape{b.shape} != x.shape{x.shape}.')
    if not 1 <= len(b.shape) <= 3:
        raise TaichiRuntimeError(f'{name} only support 1D, 2D, 3D inputs; your inputs is '
                                 f'{len(b.shape)}-D.')
    return _T.f32 if str(b.dtype) == 'f32' else _T.f64


class _Work:
    """Work fields shaped like b (`vectors`) and 0-D ones (`scalars`), freed by `destroy`."""

    def __init__(self, dt, shape, vectors, scalars):
        vb, sb = FieldsBuilder(), FieldsBuilder()
        self.v = [field(dt) for _ in range(vectors)]
        self.s = [field(dt) for _ in range(scalars)]
        vb.dense((_i, _ij, _ijk)[len(shape) - 1], shape).place(*self.v)
        sb.place(*self.s)
        self._trees = [vb.finalize(), sb.finalize()]

    def destroy(self):
        for t in self._trees:
            t.destroy()


def _reducer(dt):
    @kernel
    def reduce(p: template(), q: template()) -> dt:
        result = dt(0.0)
        for I in grouped(p):
            result += p[I] * q[I]
        return result
    return reduce


def MatrixFreeCG(A, b, x, tol=1e-6, maxiter=5000, quiet=True):
    """Conjugate gradients for A x = b (A a symmetric positive definite LinearOperator)."""
    dt = _check('MatrixFreeCG', b, x)
    w = _Work(dt, b.shape, 4, 2)
    p, r, Ap, Ax = w.v
    alpha, beta = w.s
    reduce = _reducer(dt)

    @kernel
    def init():
        for I in grouped(x):
            r[I] = b[I] - Ax[I]
            p[I] = 0.0
            Ap[I] = 0.0

    @kernel
    def update_x():
        for I in grouped(x):
            x[I] += alpha[None] * p[I]

    @kernel
    def update_r():
        for I in grouped(r):
            r[I] -= alpha[None] * Ap[I]

    @kernel
    def update_p():
        for I in grouped(p):
            p[I] = r[I] + beta[None] * p[I]

    A._matvec(x, Ax)
    init()
    old_rTr = new_rTr = initial_rTr = reduce(r, r)
    _log(quiet, f'>>> Initial residual = {initial_rTr:e}')
    update_p()
    if sqrt(initial_rTr) >= tol:  # nothing to do if the initial residual is small enough
        for it in range(maxiter):
            A._matvec(p, Ap)
            alpha[None] = old_rTr / reduce(p, Ap)
            update_x()
            update_r()
            new_rTr = reduce(r, r)
            if sqrt(new_rTr) < tol:
                _log(quiet, f'>>> Conjugate Gradient method converged.\n>>> #iterations {it}')
                break
            beta[None] = new_rTr / old_rTr
            update_p()
            old_rTr = new_rTr
            _log(quiet, f'>>> Iter = {it + 1:4}, Residual = {sqrt(new_rTr):e}')
    succeeded = new_rTr < tol
    if not succeeded:
        _log(quiet, f'>>> Conjugate Gradient method failed to converge in {maxiter} iterations: '
                    f'Residual = {sqrt(new_rTr):e}')
    w.destroy()
    return succeeded


def MatrixFreeBICGSTAB(A, b, x, tol=1e-6, maxiter=5000, quiet=True):
    """Biconjugate gradients stabilized for A x = b (A any non-singular LinearOperator)."""
    dt = _check('MatrixFreeBICGSTAB', b, x)
    w = _Work(dt, b.shape, 10, 5)
    p, p_hat, r, r_tld, s, s_hat, t, Ap, Ax, Ashat = w.v
    alpha, beta, omega, rho, rho_1 = w.s
    reduce = _reducer(dt)

    @kernel
    def init():
        for I in grouped(x):
            r[I] = b[I] - Ax[I]
            r_tld[I] = b[I]
            p[I] = 0.0
            Ap[I] = 0.0
            Ashat[I] = 0.0
        rho[None] = 0.0
        rho_1[None] = 1.0
        alpha[None] = 1.0
        beta[None] = 1.0
        omega[None] = 1.0

    @kernel
    def copy(orig: template(), dest: template()):
        for I in grouped(orig):
            dest[I] = orig[I]

    @kernel
    def update_p():
        for I in grouped(p):
            p[I] = r[I] + beta[None] * (p[I] - omega[None] * Ap[I])

    @kernel
    def update_s():
        for I in grouped(s):
            s[I] = r[I] - alpha[None] * Ap[I]

    @kernel
    def update_x():
        for I in grouped(x):
            x[I] += alpha[None] * p_hat[I] + omega[None] * s_hat[I]

    @kernel
    def update_r():
        for I in grouped(r):
            r[I] = s[I] - omega[None] * t[I]

    succeeded = True
    A._matvec(x, Ax)
    init()
    rTr = initial_rTr = reduce(r, r)
    _log(quiet, f'>>> Initial residual = {initial_rTr:e}')
    if sqrt(initial_rTr) >= tol:  # nothing to do if the initial residual is small enough
        for it in range(maxiter):
            rho[None] = reduce(r, r_tld)
            if rho[None] == 0.0:
                _log(quiet, '>>> BICGSTAB failed because r@r_tld = 0.')
                succeeded = False
                break
            if it == 0:
                copy(r, p)
            else:
                beta[None] = (rho[None] / rho_1[None]) * (alpha[None] / omega[None])
                update_p()
            copy(p, p_hat)
            A._matvec(p, Ap)
            alpha[None] = rho[None] / reduce(r_tld, Ap)
            update_s()
            copy(s, s_hat)
            A._matvec(s_hat, Ashat)
            copy(Ashat, t)
            omega_upper, omega_lower = reduce(t, s), reduce(t, t)
            omega[None] = omega_upper / (omega_lower + 1e-16) if omega_lower == 0.0 else \
                omega_upper / omega_lower
            update_x()
            update_r()
            rTr = reduce(r, r)
            _log(quiet, f'>>> Iter = {it + 1:4}, Residual = {sqrt(rTr):e}')
            if sqrt(rTr) < tol:
                _log(quiet, f'>>> BICGSTAB method converged at #iterations {it}')
                break
            rho_1[None] = rho[None]
    if rTr >= tol:
        _log(quiet, f'>>> BICGSTAB failed to converge in {maxiter} iterations: '
                    f'Residual = {sqrt(rTr):e}')
        succeeded = False
    w.destroy()
    return succeeded


def _log(quiet, text):
    if not quiet:
        print(text)
