"""Benchmark program (tools/bench_programs.py): DiffTaichi-style billiards. A cue ball hits a
triangle of 15 balls through `steps` time steps of soft collisions; gradient descent on the cue
ball's initial position and velocity moves a target ball toward a goal.

Per iteration: one Tape over `steps` x (collide, advance) small kernels, then an update.
Written for `import taichi as ti`; vkdiff runs it unchanged through an alias."""
import numpy as np
import taichi as ti

steps = 512
dt = 0.003
n_balls = 16
radius = 0.03
elasticity = 0.8
learning_rate = 0.01
target_ball = n_balls - 1
goal = [0.9, 0.75]

x = ti.Vector.field(2, dtype=float, shape=(steps, n_balls), needs_grad=True)
v = ti.Vector.field(2, dtype=float, shape=(steps, n_balls), needs_grad=True)
impulse = ti.Vector.field(2, dtype=float, shape=(steps, n_balls), needs_grad=True)
init_x = ti.Vector.field(2, dtype=float, shape=(), needs_grad=True)
init_v = ti.Vector.field(2, dtype=float, shape=(), needs_grad=True)
loss = ti.field(dtype=float, shape=(), needs_grad=True)


@ti.kernel
def collide(t: ti.i32):
    for i in range(n_balls):
        for j in range(n_balls):
            if i != j:
                dist = (x[t, i] + dt * v[t, i]) - (x[t, j] + dt * v[t, j])
                dist_norm = dist.norm()
                rela_v = v[t, i] - v[t, j]
                if dist_norm < 2 * radius:
                    dir = ti.Vector.normalized(dist, 1e-6)
                    projected_v = dir.dot(rela_v)
                    if projected_v < 0:
                        imp = -(1 + elasticity) * 0.5 * projected_v * dir
                        impulse[t + 1, i] += imp


@ti.kernel
def advance(t: ti.i32):
    for i in range(n_balls):
        v[t, i] = v[t - 1, i] + impulse[t, i]
        x[t, i] = x[t - 1, i] + dt * v[t, i]


@ti.kernel
def initialize():
    x[0, 0] = init_x[None]
    v[0, 0] = init_v[None]


@ti.kernel
def compute_loss(t: ti.i32):
    loss[None] = (x[t, target_ball][0] - goal[0]) ** 2 + (x[t, target_ball][1] - goal[1]) ** 2


@ti.kernel
def clear():
    for t, i in ti.ndrange(steps, n_balls):
        impulse[t, i] = ti.Vector([0.0, 0.0])


x0 = np.zeros((steps, n_balls, 2), np.float32)
count = 0
for row in range(5):
    for k in range(row + 1):
        if count + 1 < n_balls:
            count += 1
            x0[0, count] = [0.5 + row * 2 * radius * 0.9, 0.5 + (k - row / 2) * 2 * radius * 1.05]
init_x[None] = [0.1, 0.5]
init_v[None] = [0.3, 0.0]


def iteration():
    x.from_numpy(x0)
    v.from_numpy(np.zeros_like(x0))
    clear()
    with ti.ad.Tape(loss):
        initialize()
        for t in range(1, steps):
            collide(t - 1)
            advance(t)
        compute_loss(steps - 1)
    for f in (init_x, init_v):
        g = f.grad.to_numpy()
        f.from_numpy(f.to_numpy() - learning_rate * g)
    return loss[None]
