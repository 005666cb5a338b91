"""DiffTaichi's diffmpm_checkpointing.py (github.com/taichi-dev/difftaichi, MIT licence), rewritten
with `ti.ad.checkpointed`: an elastic block is thrown and gradient descent on its initial
velocity moves its centre of mass to a target.

The original keeps every time step's particle state (x, v, C, F shaped (steps, particles)) and
recomputes only the grid in each substep's adjoint (`grad_replaced` / `grad_for`). Here the
particle state is a two-slice window, x[0] -> x[1] by the same substep kernels, then `carry`
copies x[1] back to x[0]; `ti.ad.checkpointed(step, steps=...)` keeps a snapshot of what the steps
overwrite every ceil(sqrt(steps)) steps and recomputes each segment in the backward pass. The
field memory no longer grows with the number of steps (its snapshots grow as sqrt(steps)).

    python examples/diffmpm_checkpointed.py                 # 1024 steps, 30 iterations
    python examples/diffmpm_checkpointed.py --hand          # the original layout, to compare
    LP_NUM_THREADS=0 python examples/diffmpm_checkpointed.py --steps 128 --iters 5 [--hand]

Under LP_NUM_THREADS=0 (lavapipe running the float atomics of P2G in one order) both print the
same losses, digit for digit."""
import argparse

import numpy as np

import vkdiff as ti


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--iters', type=int, default=30)
    p.add_argument('--steps', type=int, default=1024)
    p.add_argument('--side', type=int, default=80, help='particles per side (80: 6400)')
    p.add_argument('--hand', action='store_true',
                   help="the original: every step's state kept, the grid recomputed by hand")
    p.add_argument('--every', type=int, default=None, help='steps between snapshots')
    args = p.parse_args(argv)

    real = ti.f32
    ti.init(default_fp=real)
    dim = 2
    N = args.side
    n_particles = N * N
    n_grid = 120
    dx = 1 / n_grid
    inv_dx = 1 / dx
    dt = 3e-4
    p_mass = 1
    p_vol = 1
    E = 100
    mu = E
    la = E
    steps = args.steps
    gravity = 9.8
    target = [0.3, 0.6]
    W = steps if args.hand else 2   # slices of the particle state

    x = ti.Vector.field(dim, dtype=real, shape=(W, n_particles), needs_grad=True)
    x_avg = ti.Vector.field(dim, dtype=real, shape=(), needs_grad=True)
    v = ti.Vector.field(dim, dtype=real, shape=(W, n_particles), needs_grad=True)
    grid_v_in = ti.Vector.field(dim, dtype=real, shape=(n_grid, n_grid), needs_grad=True)
    grid_v_out = ti.Vector.field(dim, dtype=real, shape=(n_grid, n_grid), needs_grad=True)
    grid_m_in = ti.field(dtype=real, shape=(n_grid, n_grid), needs_grad=True)
    C = ti.Matrix.field(dim, dim, dtype=real, shape=(W, n_particles), needs_grad=True)
    F = ti.Matrix.field(dim, dim, dtype=real, shape=(W, n_particles), needs_grad=True)
    init_v = ti.Vector.field(dim, dtype=real, shape=(), needs_grad=True)
    loss = ti.field(dtype=real, shape=(), needs_grad=True)

    @ti.kernel
    def set_v():
        for i in range(n_particles):
            v[0, i] = init_v[None]

    @ti.kernel
    def clear_grid():
        for i, j in grid_m_in:
            grid_v_in[i, j] = [0, 0]
            grid_m_in[i, j] = 0
            grid_v_in.grad[i, j] = [0, 0]
            grid_m_in.grad[i, j] = 0
            grid_v_out.grad[i, j] = [0, 0]

    @ti.kernel
    def p2g(f: ti.i32):
        for p in range(0, n_particles):
            base = ti.cast(x[f, p] * inv_dx - 0.5, ti.i32)
            fx = x[f, p] * inv_dx - ti.cast(base, ti.i32)
            w = [0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1) ** 2, 0.5 * (fx - 0.5) ** 2]
            new_F = (ti.Matrix.diag(dim=2, val=1) + dt * C[f, p]) @ F[f, p]
            F[f + 1, p] = new_F
            J = (new_F).determinant()
            r, s = ti.polar_decompose(new_F)
            cauchy = 2 * mu * (new_F - r) @ new_F.transpose() + \
                ti.Matrix.diag(2, la * (J - 1) * J)
            stress = -(dt * p_vol * 4 * inv_dx * inv_dx) * cauchy
            affine = stress + p_mass * C[f, p]
            for i in ti.static(range(3)):
                for j in ti.static(range(3)):
                    offset = ti.Vector([i, j])
                    dpos = (ti.cast(ti.Vector([i, j]), real) - fx) * dx
                    weight = w[i][0] * w[j][1]
                    grid_v_in[base + offset] += weight * (p_mass * v[f, p] + affine @ dpos)
                    grid_m_in[base + offset] += weight * p_mass

    bound = 3

    @ti.kernel
    def grid_op():
        for p in range(n_grid * n_grid):
            i = p // n_grid
            j = p - n_grid * i
            inv_m = 1 / (grid_m_in[i, j] + 1e-10)
            v_out = inv_m * grid_v_in[i, j]
            v_out[1] -= dt * gravity
            if i < bound and v_out[0] < 0:
                v_out[0] = 0
            if i > n_grid - bound and v_out[0] > 0:
                v_out[0] = 0
            if j < bound and v_out[1] < 0:
                v_out[1] = 0
            if j > n_grid - bound and v_out[1] > 0:
                v_out[1] = 0
            grid_v_out[i, j] = v_out

    @ti.kernel
    def g2p(f: ti.i32):
        for p in range(n_particles):
            base = ti.cast(x[f, p] * inv_dx - 0.5, ti.i32)
            fx = x[f, p] * inv_dx - ti.cast(base, real)
            w = [0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1.0) ** 2, 0.5 * (fx - 0.5) ** 2]
            new_v = ti.Vector([0.0, 0.0])
            new_C = ti.Matrix([[0.0, 0.0], [0.0, 0.0]])
            for i in ti.static(range(3)):
                for j in ti.static(range(3)):
                    dpos = ti.cast(ti.Vector([i, j]), real) - fx
                    g_v = grid_v_out[base[0] + i, base[1] + j]
                    weight = w[i][0] * w[j][1]
                    new_v += weight * g_v
                    new_C += 4 * weight * g_v.outer_product(dpos) * inv_dx
            v[f + 1, p] = new_v
            x[f + 1, p] = x[f, p] + dt * v[f + 1, p]
            C[f + 1, p] = new_C

    @ti.kernel
    def carry():
        """The window's slice 1 (the state after a substep) becomes slice 0."""
        for p in range(n_particles):
            x[0, p] = x[1, p]
            v[0, p] = v[1, p]
            C[0, p] = C[1, p]
            F[0, p] = F[1, p]

    @ti.kernel
    def compute_x_avg(f: ti.i32):
        for i in range(n_particles):
            ti.atomic_add(x_avg[None], (1 / n_particles) * x[f, i])

    @ti.kernel
    def compute_loss():
        dist = (x_avg[None] - ti.Vector(target)) ** 2
        loss[None] = 0.5 * (dist[0] + dist[1])

    @ti.ad.grad_replaced
    def substep(s):
        clear_grid()
        p2g(s)
        grid_op()
        g2p(s)

    @ti.ad.grad_for(substep)
    def substep_grad(s):
        clear_grid()
        p2g(s)
        grid_op()
        g2p.grad(s)
        grid_op.grad()
        p2g.grad(s)

    def window_step(t):
        substep(0)
        carry()

    @ti.kernel
    def init():
        init_v[None] = [0, 0]
        for i in range(n_particles):
            F[0, i] = [[1, 0], [0, 1]]
        for i, j in ti.ndrange(N, N):
            x[0, i * N + j] = [dx * (i * 0.5 + 10), dx * (j * 0.5 + 25)]

    init()
    set_v()
    start = [f.to_numpy() for f in (x, C, F)]

    losses = []
    for i in range(args.iters):
        if not args.hand:  # the window ends an iteration at the last state: back to the first
            for f, a in zip((x, C, F), start):
                f.from_numpy(a)
        with ti.ad.Tape(loss=loss):
            set_v()
            if args.hand:
                for s in range(steps - 1):
                    substep(s)
            else:
                ti.ad.checkpointed(window_step, steps=steps - 1, every=args.every)
            loss[None] = 0
            x_avg[None] = [0, 0]
            compute_x_avg(steps - 1 if args.hand else 0)
            compute_loss()
        l = loss[None]
        losses.append(l)
        grad = init_v.grad[None]
        print('loss=', l, '   grad=', (grad[0], grad[1]), flush=True)
        learning_rate = 10
        init_v[None][0] -= learning_rate * grad[0]
        init_v[None][1] -= learning_rate * grad[1]
    return losses


if __name__ == '__main__':
    main()
