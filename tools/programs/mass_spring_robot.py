"""Benchmark program (tools/bench_programs.py): a DiffTaichi-style mass-spring robot with a
neural-network controller, trained by gradient descent through its whole trajectory.

Per iteration: one Tape over `steps` time steps of five small kernels (centre of mass, two
network layers, spring forces, integration with ground contact), then an update of the weights.
Written for `import taichi as ti`; vkdiff runs it unchanged through an alias."""
import math

import numpy as np
import taichi as ti

steps = 256
dt = 0.004
n_sin_waves = 10
n_hidden = 32
spring_omega = 10.0
damping = 15.0
ground_height = 0.1
gravity = -4.8
learning_rate = 25.0

# a quadruped-like body: a 6 x 3 grid of masses, springs between neighbours and diagonals
objects, springs = [], []
W, H = 6, 3
for i in range(W):
    for j in range(H):
        objects.append([0.1 + 0.05 * i, ground_height + 0.02 + 0.05 * j])
idx = lambda i, j: i * H + j
for i in range(W):
    for j in range(H):
        for di, dj in ((1, 0), (0, 1), (1, 1), (1, -1)):
            a, b = i + di, j + dj
            if 0 <= a < W and 0 <= b < H:
                act = 1 if (dj == 0 and j == 0) else 0
                springs.append([idx(i, j), idx(a, b), act])
n_objects, n_springs = len(objects), len(springs)
n_input = n_sin_waves + 4 * n_objects + 2

scalar = lambda: ti.field(dtype=float)
vec = lambda: ti.Vector.field(2, dtype=float)

loss = scalar()
x, v, v_inc = vec(), vec(), vec()
center = vec()
goal = vec()
spring_anchor_a = ti.field(ti.i32)
spring_anchor_b = ti.field(ti.i32)
spring_length = scalar()
spring_stiffness = scalar()
spring_actuation = scalar()
weights1, bias1 = scalar(), scalar()
weights2, bias2 = scalar(), scalar()
hidden = scalar()
act = scalar()

ti.root.dense(ti.ij, (steps, n_objects)).place(x, v, v_inc)
ti.root.dense(ti.i, n_springs).place(spring_anchor_a, spring_anchor_b, spring_length,
                                     spring_stiffness, spring_actuation)
ti.root.dense(ti.ij, (n_hidden, n_input)).place(weights1)
ti.root.dense(ti.i, n_hidden).place(bias1)
ti.root.dense(ti.ij, (n_springs, n_hidden)).place(weights2)
ti.root.dense(ti.i, n_springs).place(bias2)
ti.root.dense(ti.ij, (steps, n_hidden)).place(hidden)
ti.root.dense(ti.ij, (steps, n_springs)).place(act)
ti.root.dense(ti.i, steps).place(center)
ti.root.place(loss, goal)
ti.root.lazy_grad()


@ti.kernel
def compute_center(t: ti.i32):
    for _ in range(1):
        c = ti.Vector([0.0, 0.0])
        for i in ti.static(range(n_objects)):
            c += x[t, i] / n_objects
        center[t] = c


@ti.kernel
def nn1(t: ti.i32):
    for i in range(n_hidden):
        actuation = 0.0
        for j in ti.static(range(n_sin_waves)):
            actuation += weights1[i, j] * ti.sin(spring_omega * t * dt + 2 * math.pi / n_sin_waves * j)
        for j in ti.static(range(n_objects)):
            offset = x[t, j] - center[t]
            actuation += weights1[i, j * 4 + n_sin_waves] * offset[0] * 0.05
            actuation += weights1[i, j * 4 + n_sin_waves + 1] * offset[1] * 0.05
            actuation += weights1[i, j * 4 + n_sin_waves + 2] * v[t, j][0] * 0.05
            actuation += weights1[i, j * 4 + n_sin_waves + 3] * v[t, j][1] * 0.05
        actuation += weights1[i, n_objects * 4 + n_sin_waves] * (goal[None][0] - center[t][0])
        actuation += weights1[i, n_objects * 4 + n_sin_waves + 1] * (goal[None][1] - center[t][1])
        actuation += bias1[i]
        hidden[t, i] = ti.tanh(actuation)


@ti.kernel
def nn2(t: ti.i32):
    for i in range(n_springs):
        actuation = 0.0
        for j in ti.static(range(n_hidden)):
            actuation += weights2[i, j] * hidden[t, j]
        actuation += bias2[i]
        act[t, i] = ti.tanh(actuation)


@ti.kernel
def apply_spring_force(t: ti.i32):
    for i in range(n_springs):
        a = spring_anchor_a[i]
        b = spring_anchor_b[i]
        pos_a = x[t, a]
        pos_b = x[t, b]
        dist = pos_a - pos_b
        length = dist.norm() + 1e-4
        target_length = spring_length[i] * (1.0 + spring_actuation[i] * act[t, i])
        impulse = dt * (length - target_length) * spring_stiffness[i] / length * dist
        ti.atomic_add(v_inc[t + 1, a], -impulse)
        ti.atomic_add(v_inc[t + 1, b], impulse)


@ti.kernel
def advance(t: ti.i32):
    for i in range(n_objects):
        s = ti.exp(-dt * damping)
        old_v = s * v[t - 1, i] + dt * gravity * ti.Vector([0.0, 1.0]) + v_inc[t, i]
        old_x = x[t - 1, i]
        new_x = old_x + dt * old_v
        toi = 0.0
        new_v = old_v
        if new_x[1] < ground_height and old_v[1] < -1e-4:
            toi = -(old_x[1] - ground_height) / old_v[1]
            new_v = ti.Vector([0.0, 0.0])
        new_x = old_x + toi * old_v + (dt - toi) * new_v
        v[t, i] = new_v
        x[t, i] = new_x


@ti.kernel
def compute_loss(t: ti.i32):
    loss[None] = -x[t, 0][0]


@ti.kernel
def clear_v_inc():
    for t, i in ti.ndrange(steps, n_objects):
        v_inc[t, i] = ti.Vector([0.0, 0.0])


def forward():
    for t in range(1, steps):
        compute_center(t - 1)
        nn1(t - 1)
        nn2(t - 1)
        apply_spring_force(t - 1)
        advance(t)
    compute_loss(steps - 1)


rng = np.random.default_rng(0)
x0 = np.zeros((steps, n_objects, 2), np.float32)
x0[0] = objects
sp = np.array(springs)
spring_anchor_a.from_numpy(sp[:, 0].astype(np.int32))
spring_anchor_b.from_numpy(sp[:, 1].astype(np.int32))
rest = np.linalg.norm(x0[0][sp[:, 0]] - x0[0][sp[:, 1]], axis=1)
spring_length.from_numpy(rest.astype(np.float32))
spring_stiffness.from_numpy(np.full(n_springs, 3e4, np.float32))
spring_actuation.from_numpy((0.15 * sp[:, 2]).astype(np.float32))
weights1.from_numpy((rng.standard_normal((n_hidden, n_input)) * math.sqrt(2 / (n_hidden + n_input)) * 2).astype(np.float32))
weights2.from_numpy((rng.standard_normal((n_springs, n_hidden)) * math.sqrt(2 / (n_hidden + n_springs)) * 3).astype(np.float32))
goal[None] = [0.9, 0.2]


def iteration():
    x.from_numpy(x0)
    v.from_numpy(np.zeros_like(x0))
    clear_v_inc()
    with ti.ad.Tape(loss):
        forward()
    for w in (weights1, bias1, weights2, bias2):
        w.from_numpy(w.to_numpy() - learning_rate * w.grad.to_numpy() / 100.0)
    return loss[None]
