"""Test helper (not a test module): small programs that several test files run under their own
conditions (batching, submissions without waiting, launch geometries)."""
import numpy as np

import vkdiff as ti


def dependent_chain(n):
    """Fields a, b of n i32 and kernels step_a (a[i] = b[i] + 1) and step_b (b[i] = a[i + 1],
    wrapping: elements other invocations wrote). After k rounds of step_a, step_b both hold k
    everywhere, if each dispatch sees the one before it."""
    a = ti.field(ti.i32, shape=n)
    b = ti.field(ti.i32, shape=n)

    @ti.kernel
    def step_a():
        for i in a:
            a[i] = b[i] + 1

    @ti.kernel
    def step_b():
        for i in b:
            b[i] = a[(i + 1) % n]

    return a, b, step_a, step_b


def accumulate(n):
    """Fields x, y of n f32 and the kernel acc: y[i] += x[i]."""
    x = ti.field(ti.f32, shape=n)
    y = ti.field(ti.f32, shape=n)

    @ti.kernel
    def acc():
        for i in x:
            y[i] += x[i]

    return x, y, acc


def scaled_steps(steps, width, factor):
    """A Tape's time steps: x of (steps + 1, width) f32, step(t): x[t + 1] = x[t] * factor,
    total(): loss += sum of x[steps]; d loss / d x[0, i] = factor ** steps."""
    x = ti.field(ti.f32, shape=(steps + 1, width), needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def step(t: ti.i32):
        for i in range(width):
            x[t + 1, i] = x[t, i] * factor

    @ti.kernel
    def total():
        for i in range(width):
            loss[None] += x[steps, i]

    return x, loss, step, total


class TimeSteps:
    """Per-time-step kernels on a Tape: pos[t + 1, i] = pos[t, i] + w * sin(pos[t, i]) for t
    below `steps` (one launch each, n particles, f64), loss = sum_i pos[steps, i]^2."""

    def __init__(self, n, steps):
        self.n, self.steps = n, steps
        self.pos = pos = ti.field(ti.f64, shape=(steps + 1, n), needs_grad=True)
        self.w = w = ti.field(ti.f64, shape=(), needs_grad=True)
        self.loss = loss = ti.field(ti.f64, shape=(), needs_grad=True)

        @ti.kernel
        def step(t: ti.i32):
            for i in range(n):
                pos[t + 1, i] = pos[t, i] + w[None] * ti.sin(pos[t, i])

        @ti.kernel
        def compute_loss():
            for i in range(n):
                loss[None] += pos[steps, i] ** 2

        self.step, self.compute_loss = step, compute_loss
        self.p0 = np.linspace(0.1, 1.0, n)

    def run(self, w):
        """(loss, d loss / d w) from the kernels, starting at p0."""
        self.pos.from_numpy(np.concatenate([self.p0[None], np.zeros((self.steps, self.n))]))
        self.w[None] = w
        self.loss[None] = 0.0
        with ti.ad.Tape(self.loss):
            for t in range(self.steps):
                self.step(t)
            self.compute_loss()
        return self.loss[None], self.w.grad[None]

    def expected(self, w):
        """(loss, d loss / d w) in numpy: the recurrence and its derivative."""
        p, dp = self.p0.copy(), np.zeros(self.n)
        for _ in range(self.steps):
            dp = dp + np.sin(p) + w * np.cos(p) * dp
            p = p + w * np.sin(p)
        return (p ** 2).sum(), (2 * p * dp).sum()


def gravity(N, dtype=ti.f32):
    """examples/ad_gravity.py's energy: x, N 2-D positions; U = -sum_{i,j} 1 / |x_i - x_j|
    (norm eps 1e-3) added by the kernel compute_U."""
    x = ti.Vector.field(2, dtype=dtype, shape=N, needs_grad=True)
    U = ti.field(dtype=dtype, shape=(), needs_grad=True)

    @ti.kernel
    def compute_U():
        for i, j in ti.ndrange(N, N):
            r = x[i] - x[j]
            U[None] += -1 / r.norm(1e-3)

    return x, U, compute_U


GRAVITY_EPS = float(np.float32(1e-3))  # the kernel's literal 1e-3: an f32 constant (default_fp)


def gravity_expected(xs, eps=GRAVITY_EPS):
    """(U, dU/dx) of positions xs (N x 2) in f64: dU/dx_k = 2 sum_j (x_k - x_j)
    (|x_k - x_j|^2 + eps)^-3/2. eps is the kernel's 1e-3 as Taichi 1.7.4 types it under
    default_fp=f32 (0.0010000000474974513, also next to f64 values)."""
    X = np.asarray(xs, np.float64)
    d = X[:, None, :] - X[None, :, :]
    r2 = (d ** 2).sum(-1) + eps
    return -(r2 ** -0.5).sum(), 2 * (d * r2[..., None] ** -1.5).sum(1)
