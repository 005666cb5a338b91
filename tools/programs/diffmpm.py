"""Benchmark program (tools/bench_programs.py): DiffTaichi-style differentiable MLS-MPM. A block
of elastic material is thrown; gradient descent on its initial velocity moves its centre toward
a target. The grid is not stored per time step: each substep's adjoint recomputes it
(`ti.ad.grad_replaced` / `grad_for`, as DiffTaichi's diffmpm does).

Per iteration: one Tape over `steps` substeps (clear grid, P2G, grid update, G2P), then an
update. Written for `import taichi as ti`; vkdiff runs it unchanged through an alias."""
import numpy as np
import taichi as ti

dim = 2
n_side = 40
n_particles = n_side * n_side
n_grid = 64
steps = 64
dx = 1 / n_grid
inv_dx = float(n_grid)
dt = 2e-4
p_vol, E = 1.0, 100.0
p_mass = 1.0
target = [0.65, 0.4]
learning_rate = 1.0

x = ti.Vector.field(dim, dtype=float, shape=(steps, n_particles), needs_grad=True)
v = ti.Vector.field(dim, dtype=float, shape=(steps, n_particles), needs_grad=True)
C = ti.Matrix.field(dim, dim, dtype=float, shape=(steps, n_particles), needs_grad=True)
F = ti.Matrix.field(dim, dim, dtype=float, shape=(steps, n_particles), needs_grad=True)
grid_v_in = ti.Vector.field(dim, dtype=float, shape=(n_grid, n_grid), needs_grad=True)
grid_m_in = ti.field(dtype=float, shape=(n_grid, n_grid), needs_grad=True)
grid_v_out = ti.Vector.field(dim, dtype=float, shape=(n_grid, n_grid), needs_grad=True)
loss = ti.field(dtype=float, shape=(), needs_grad=True)
init_v = ti.Vector.field(dim, dtype=float, shape=(), needs_grad=True)


@ti.kernel
def clear_grid():
    for i, j in grid_m_in:
        grid_v_in[i, j] = [0, 0]
        grid_m_in[i, j] = 0
        grid_v_in.grad[i, j] = [0, 0]
        grid_m_in.grad[i, j] = 0
        grid_v_out.grad[i, j] = [0, 0]


@ti.kernel
def set_v():
    for i in range(n_particles):
        v[0, i] = init_v[None]
        F[0, i] = [[1.0, 0.0], [0.0, 1.0]]


@ti.kernel
def p2g(f: ti.i32):
    for p in range(n_particles):
        base = ti.cast(x[f, p] * inv_dx - 0.5, ti.i32)
        fx = x[f, p] * inv_dx - ti.cast(base, float)
        w = [0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1) ** 2, 0.5 * (fx - 0.5) ** 2]
        new_F = (ti.Matrix([[1.0, 0.0], [0.0, 1.0]]) + dt * C[f, p]) @ F[f, p]
        F[f + 1, p] = new_F
        J = new_F.determinant()
        stress = -dt * p_vol * (J - 1) * 4 * inv_dx * inv_dx * E
        affine = ti.Matrix([[stress, 0.0], [0.0, stress]]) + p_mass * C[f, p]
        for i in ti.static(range(3)):
            for j in ti.static(range(3)):
                offset = ti.Vector([i, j])
                dpos = (ti.cast(offset, float) - fx) * dx
                weight = w[i][0] * w[j][1]
                grid_v_in[base + offset] += weight * (p_mass * v[f, p] + affine @ dpos)
                grid_m_in[base + offset] += weight * p_mass


bound = 3


@ti.kernel
def grid_op():
    for i, j in grid_m_in:
        inv_m = 1 / (grid_m_in[i, j] + 1e-10)
        v_out = inv_m * grid_v_in[i, j]
        v_out[1] -= dt * 9.8
        if i < bound and v_out[0] < 0:
            v_out[0] = 0.0
        if i > n_grid - bound and v_out[0] > 0:
            v_out[0] = 0.0
        if j < bound and v_out[1] < 0:
            v_out[1] = 0.0
        if j > n_grid - bound and v_out[1] > 0:
            v_out[1] = 0.0
        grid_v_out[i, j] = v_out


@ti.kernel
def g2p(f: ti.i32):
    for p in range(n_particles):
        base = ti.cast(x[f, p] * inv_dx - 0.5, ti.i32)
        fx = x[f, p] * inv_dx - ti.cast(base, float)
        w = [0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1.0) ** 2, 0.5 * (fx - 0.5) ** 2]
        new_v = ti.Vector([0.0, 0.0])
        new_C = ti.Matrix([[0.0, 0.0], [0.0, 0.0]])
        for i in ti.static(range(3)):
            for j in ti.static(range(3)):
                dpos = ti.cast(ti.Vector([i, j]), float) - fx
                g_v = grid_v_out[base[0] + i, base[1] + j]
                weight = w[i][0] * w[j][1]
                new_v += weight * g_v
                new_C += 4 * weight * g_v.outer_product(dpos) * inv_dx
        v[f + 1, p] = new_v
        x[f + 1, p] = x[f, p] + dt * v[f + 1, p]
        C[f + 1, p] = new_C


@ti.kernel
def compute_loss():
    for i in range(n_particles):
        d = x[steps - 1, i] - ti.Vector(target)
        loss[None] += 0.5 * d.dot(d) / n_particles


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


xs = np.zeros((steps, n_particles, dim), np.float32)
g = (np.arange(n_side) + 0.5) / n_side * 0.2
xs[0] = np.stack(np.meshgrid(g + 0.2, g + 0.3, indexing='ij'), -1).reshape(-1, 2)
x.from_numpy(xs)
init_v[None] = [1.0, 0.5]


def iteration():
    with ti.ad.Tape(loss):
        set_v()
        for s in range(steps - 1):
            substep(s)
        compute_loss()
    gv = init_v.grad.to_numpy()
    init_v.from_numpy(init_v.to_numpy() - learning_rate * gv)
    return loss[None]
