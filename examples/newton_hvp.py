"""Newton's method with Hessian-vector products from vkdiff (forward-over-reverse), against plain
gradient descent, on the n-dimensional Rosenbrock function

    f(x) = sum_i 100 (x[i+1] - x[i]^2)^2 + (1 - x[i])^2        (minimum 0 at x = 1)

Each Newton step solves H p = -g by conjugate gradients, where every H·v is one `ti.ad.hvp` call:
no Hessian is ever formed.

    python examples/newton_hvp.py [--n 64] [--gd-iters 20000]
"""
import argparse
import time

import numpy as np

import vkdiff as ti


def build(n):
    x = ti.field(ti.f64, shape=n, needs_grad=True)
    f = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def rosenbrock():
        for i in range(n - 1):
            f[None] += 100 * (x[i + 1] - x[i] ** 2) ** 2 + (1 - x[i]) ** 2

    def value_and_grad(xv):
        x.from_numpy(xv)
        with ti.Tape(f):
            rosenbrock()
        return f[None], x.grad.to_numpy()

    def hess_vec(xv, v):
        x.from_numpy(xv)
        return ti.ad.hvp(f, x, v, rosenbrock)

    return value_and_grad, hess_vec


def newton(value_and_grad, hess_vec, x0, tol=1e-10, max_iter=100, log=print):
    """Newton-CG with a backtracking line search. Returns (x, iterations, history)."""
    xv = x0.copy()
    hist = []
    for it in range(max_iter):
        fv, g = value_and_grad(xv)
        hist.append(fv)
        log(f'  newton {it:3d}  f = {fv:.3e}  |g| = {np.linalg.norm(g):.3e}')
        if np.linalg.norm(g) < tol:
            return xv, it, hist
        # CG on H p = -g (truncated when it meets negative curvature)
        p, r = np.zeros_like(g), -g
        d, rr = r.copy(), r @ r
        for _ in range(2 * len(g)):
            hd = hess_vec(xv, d)
            curv = d @ hd
            if curv <= 0:
                if not p.any():
                    p = -g
                break
            a = rr / curv
            p += a * d
            r -= a * hd
            rr_new = r @ r
            if np.sqrt(rr_new) < 1e-3 * min(1.0, np.linalg.norm(g)) * np.linalg.norm(g):
                break
            d = r + rr_new / rr * d
            rr = rr_new
        step = 1.0
        while value_and_grad(xv + step * p)[0] > fv + 1e-4 * step * (g @ p) and step > 1e-8:
            step *= 0.5
        xv = xv + step * p
    return xv, max_iter, hist


def gradient_descent(value_and_grad, x0, iters, tol=1e-10, log=print):
    xv = x0.copy()
    lr = 1.0 / (400 * 3 + 2)  # below 2/L near the minimum
    for it in range(iters):
        fv, g = value_and_grad(xv)
        if it % max(1, iters // 10) == 0:
            log(f'  gd {it:6d}  f = {fv:.3e}')
        if np.linalg.norm(g) < tol:
            return xv, it, fv
        xv -= lr * g
    return xv, iters, value_and_grad(xv)[0]


def main(argv=None):
    ap = argparse.ArgumentParser(description='Newton (HVP) vs gradient descent on Rosenbrock')
    ap.add_argument('--n', type=int, default=32)
    ap.add_argument('--gd-iters', type=int, default=5000)
    ap.add_argument('--quiet', action='store_true')
    args = ap.parse_args(argv)
    log = (lambda *a: None) if args.quiet else print
    ti.init()
    vg, hv = build(args.n)
    x0 = np.zeros(args.n)
    t = time.perf_counter()
    xn, it_n, hist = newton(vg, hv, x0, log=log)
    tn = time.perf_counter() - t
    t = time.perf_counter()
    xg, it_g, fg = gradient_descent(vg, x0, args.gd_iters, log=log)
    tg = time.perf_counter() - t
    print(f'Newton-CG with vkdiff HVPs: {it_n} iterations, f = {hist[-1]:.3e}, '
          f'|x - 1| = {np.abs(xn - 1).max():.2e}, {tn:.1f} s')
    print(f'gradient descent:           {it_g} iterations, f = {fg:.3e}, '
          f'|x - 1| = {np.abs(xg - 1).max():.2e}, {tg:.1f} s')
    return it_n, hist[-1], it_g, fg


if __name__ == '__main__':
    main()
