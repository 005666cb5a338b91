"""A diffmpm-style time step (DiffTaichi's MLS-MPM: P2G scatter, grid update, G2P gather) for
tools/bench_checkpoint.py and examples/diffmpm_checkpointed.py, in two memory layouts over the
same kernels:

* 'full': every state has its own time slice, x[t], v[t], C[t], F[t] for t = 0 .. T; a full Tape;
  the grid is recomputed in each substep's adjoint (grad_replaced / grad_for, as DiffTaichi's
  diffmpm_checkpointing.py does);
* 'window': two slices; a substep advances slice 0 to slice 1 and `carry` copies slice 1 back;
  `ti.ad.checkpointed` records the T substeps (field memory independent of T, plus its
  snapshots and undo copies, O(sqrt T)).

Both run the same compiled substep kernels on the same values: the gradients agree bit for bit
where the forward pass is deterministic (lavapipe: LP_NUM_THREADS=0)."""
import numpy as np

import vkdiff as ti


def build(T, layout, n_side=16, n_grid=32, fp=None, dt=2e-4, E=100.0, target=(0.6, 0.5)):
    """Set up fields and kernels (after ti.init); returns an object with .forward_backward(every)
    -> (loss, d loss / d init_v) and .init_v, .x."""
    real = fp or ti.f32
    dim = 2
    n_particles = n_side * n_side
    dx = 1 / n_grid
    inv_dx = float(n_grid)
    p_vol, p_mass = 1.0, 1.0
    W = T + 1 if layout == 'full' else 2
    x = ti.Vector.field(dim, real, shape=(W, n_particles), needs_grad=True)
    v = ti.Vector.field(dim, real, shape=(W, n_particles), needs_grad=True)
    C = ti.Matrix.field(dim, dim, real, shape=(W, n_particles), needs_grad=True)
    F = ti.Matrix.field(dim, dim, real, shape=(W, n_particles), needs_grad=True)
    x0 = ti.Vector.field(dim, real, shape=n_particles)
    grid_v_in = ti.Vector.field(dim, real, shape=(n_grid, n_grid), needs_grad=True)
    grid_m_in = ti.field(real, shape=(n_grid, n_grid), needs_grad=True)
    grid_v_out = ti.Vector.field(dim, real, shape=(n_grid, n_grid), needs_grad=True)
    loss = ti.field(real, shape=(), needs_grad=True)
    init_v = ti.Vector.field(dim, real, shape=(), needs_grad=True)

    @ti.kernel
    def set_v():
        for i in range(n_particles):
            x[0, i] = x0[i]
            v[0, i] = init_v[None]
            F[0, i] = [[1.0, 0.0], [0.0, 1.0]]
            C[0, i] = [[0.0, 0.0], [0.0, 0.0]]

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
        for p in range(n_particles):
            base = ti.cast(x[f, p] * inv_dx - 0.5, ti.i32)
            fx = x[f, p] * inv_dx - ti.cast(base, real)
            w = [0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1) ** 2, 0.5 * (fx - 0.5) ** 2]
            new_F = (ti.Matrix([[1.0, 0.0], [0.0, 1.0]]) + dt * C[f, p]) @ F[f, p]
            F[f + 1, p] = new_F
            J = new_F.determinant()
            stress = -dt * p_vol * (J - 1) * 4 * inv_dx * inv_dx * E
            affine = ti.Matrix([[stress, 0.0], [0.0, stress]]) + p_mass * C[f, p]
            for i in ti.static(range(3)):
                for j in ti.static(range(3)):
                    offset = ti.Vector([i, j])
                    dpos = (ti.cast(offset, real) - fx) * dx
                    weight = w[i][0] * w[j][1]
                    grid_v_in[base + offset] += weight * (p_mass * v[f, p] + affine @ dpos)
                    grid_m_in[base + offset] += weight * p_mass

    @ti.kernel
    def grid_op():
        for i, j in grid_m_in:
            inv_m = 1 / (grid_m_in[i, j] + 1e-10)
            v_out = inv_m * grid_v_in[i, j]
            v_out[1] -= dt * 9.8
            if i < 3 and v_out[0] < 0:
                v_out[0] = 0.0
            if i > n_grid - 3 and v_out[0] > 0:
                v_out[0] = 0.0
            if j < 3 and v_out[1] < 0:
                v_out[1] = 0.0
            if j > n_grid - 3 and v_out[1] > 0:
                v_out[1] = 0.0
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
        for p in range(n_particles):
            x[0, p] = x[1, p]
            v[0, p] = v[1, p]
            C[0, p] = C[1, p]
            F[0, p] = F[1, p]

    @ti.kernel
    def compute_loss(f: ti.i32):
        for i in range(n_particles):
            d = x[f, i] - ti.Vector(target)
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

    def window_step(t):
        substep(0)
        carry()

    g = (np.arange(n_side) + 0.5) / n_side * 0.2
    x0.from_numpy(np.stack(np.meshgrid(g + 0.3, g + 0.4, indexing='ij'), -1).reshape(-1, 2))
    init_v[None] = [1.0, 0.5]

    class Program:
        pass
    prog = Program()
    prog.x, prog.init_v, prog.loss = x, init_v, loss
    prog.fields = [x, v, C, F, x0, grid_v_in, grid_m_in, grid_v_out, loss, init_v]

    def forward_backward(every=None, budget_bytes=None):
        with ti.ad.Tape(loss):
            set_v()
            if layout == 'full':
                for s in range(T):
                    substep(s)
                compute_loss(T)
            else:
                prog.block = ti.ad.checkpointed(window_step, steps=T, every=every,
                                                budget_bytes=budget_bytes)
                compute_loss(0)
        return loss[None], init_v.grad.to_numpy()
    prog.forward_backward = forward_backward
    return prog


def field_bytes(fields):
    """Device bytes of these fields and their gradients (allocated on first use)."""
    out = 0
    for f in fields:
        for g in (f, getattr(f, '_grad', None)):
            if g is not None and g._storage is not None:
                out += g._storage.nbytes
    return out
