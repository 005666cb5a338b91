"""Tasks for the distributed tests: importable module-level functions that run a small
differentiable simulation in whatever vkdiff runtime the calling process has."""
import os

import numpy as np

import vkdiff as ti

INITS = {'count': 0}
N, STEPS, DT = 32, 60, 0.02


def setup(tag='x'):
    """A Pool's init(): counted, so tests can see it ran once per worker."""
    INITS['count'] += 1
    INITS['tag'] = tag


def init_count(_):
    return os.getpid(), INITS['count'], INITS.get('tag')


@ti.kernel
def _step(x: ti.template(), v: ti.template(), t: ti.i32, drag: ti.template()):
    for i in range(N):
        a = ti.Vector([0.0, -9.8]) - drag[None] * v[t - 1, i] * v[t - 1, i].norm()
        v[t, i] = v[t - 1, i] + DT * a
        x[t, i] = x[t - 1, i] + DT * v[t, i]


@ti.kernel
def _loss(x: ti.template(), target: ti.template(), loss: ti.template()):
    ti.loop_config(serialize=True)  # one fixed order: the same bits in every process
    for i in range(N):
        loss[None] += (x[STEPS - 1, i] - target[i]).norm_sqr() / N


def projectile(config):
    """config = (speed, angle, drag): N projectiles with quadratic drag; the loss is the mean
    squared miss of their targets. Returns (loss, dloss/dv0 as an (N, 2) array, dloss/ddrag)."""
    speed, angle, drag_c = config
    x = ti.Vector.field(2, ti.f32, shape=(STEPS, N), needs_grad=True)
    v = ti.Vector.field(2, ti.f32, shape=(STEPS, N), needs_grad=True)
    target = ti.Vector.field(2, ti.f32, shape=N)
    drag = ti.field(ti.f32, shape=(), needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)
    k = np.arange(N, dtype=np.float32)
    v0 = np.stack([speed * np.cos(angle + 0.01 * k), speed * np.sin(angle + 0.01 * k)], 1)
    vv = np.zeros((STEPS, N, 2), np.float32)
    vv[0] = v0
    v.from_numpy(vv)
    target.from_numpy(np.stack([2.0 + 0.05 * k, 0.5 + 0 * k], 1).astype(np.float32))
    drag[None] = drag_c
    with ti.ad.Tape(loss):
        for t in range(1, STEPS):
            _step(x, v, t, drag)
        _loss(x, target, loss)
    return float(loss[None]), v.grad.to_numpy()[0], float(drag.grad[None])


def fail_on_negative(value):
    if value < 0:
        raise ValueError(f'negative value {value} refused by the worker')
    return value * 2


def die_on(value):
    """Kill the worker process abruptly (as a segfault or the OOM killer would) for item 3."""
    if value == 3:
        os._exit(17)
    return value


def sine_kernels(n):
    """Compile and run n kernels (the same ones tests/distributed/test_cache_with_pool.py's child
    processes compile); True when every result matches numpy."""
    x = ti.field(ti.f32, shape=16)
    for j in range(n):
        @ti.kernel
        def k():
            for i in x:
                x[i] = ti.sin(i * 0.25 + j) * (j + 1)
        k()
        expect = np.sin(np.arange(16) * 0.25 + j) * (j + 1)
        # sin within the Vulkan bound (2^-11 absolute), scaled by (j + 1)
        if not np.allclose(x.to_numpy(), expect, atol=2 ** -11 * (j + 1) + 1e-6):
            return False
    return True
