"""Checkpointing: recompute instead of storing every time step (DiffTaichi's diffmpm trick).

A rope of masses and springs swings under gravity for --steps time steps; the loss is the
squared distance between its free end and a target at the last step, and we want its gradient
with respect to the initial velocities and the spring stiffness. Two ways, same kernels:

* stored: every time step has its own slice, x[t, i], v[t, i] for t = 0 .. steps; one Tape
  around all the launches (steps + 1 states in memory).
* checkpointed: `ti.ad.checkpointed(one_step, steps=steps, every=k)` inside the Tape. The state
  lives in a two-state window (the same step kernel advances slot 0 to slot 1, a carry kernel
  copies slot 1 back); the block snapshots what the steps overwrite every k steps and, in the
  backward pass, recomputes each segment from its snapshot before running its adjoints (memory:
  the window, steps/k snapshots and k steps' undo copies, ~sqrt(steps) states for k ~ sqrt(steps)).
  It replaces the hand-written `grad_replaced` / `grad_for` segments of earlier versions.

The two gradients must agree; the example prints both, their largest difference, the memory and
the time of each.

    python examples/checkpointing.py                    # 1024 steps, a checkpoint every 32
    python examples/checkpointing.py --steps 4096 --every 64
"""
import argparse
import time

import numpy as np

import vkdiff as ti


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--steps', type=int, default=1024, help='time steps')
    p.add_argument('--every', type=int, default=32, help='keep a checkpoint every k steps '
                   '(sqrt(steps) needs about the least memory)')
    p.add_argument('-n', '--masses', type=int, default=16, help='masses in the rope')
    p.add_argument('--check-fd', action='store_true',
                   help='also check two gradient entries against central finite differences')
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    steps, k, n = args.steps, args.every, args.masses
    segments = -(-steps // k)
    ti.init()

    dt = 1e-3                          # --steps 1024: about a second of swinging
    rest = 0.5 / n                     # rest length of a spring: the rope is 0.5 long
    damping = float(np.exp(-2.0 * dt))  # air drag per step
    gravity = ti.Vector([0.0, -9.8])
    target = [0.55, 0.40]

    # ----------------------------------------------------------------- parameters and the loss
    x_init = ti.Vector.field(2, ti.f32, shape=n)                      # rope along +x from the pin
    v_init = ti.Vector.field(2, ti.f32, shape=n, needs_grad=True)     # d loss / d v_init wanted
    stiffness = ti.field(ti.f32, shape=(), needs_grad=True)           # and d loss / d stiffness
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    # ----------------------------------------------------------------- the physics, shared
    @ti.func
    def spring_force(xi, xj):
        d = xj - xi
        length = d.norm(1e-12)
        return stiffness[None] * (length - rest) / length * d

    @ti.kernel
    def step(x: ti.template(), v: ti.template(), t: ti.i32):
        """Symplectic Euler from slice t to slice t + 1 of (x, v); mass 0 is pinned."""
        for i in range(n):
            f = gravity
            if i > 0:
                f += spring_force(x[t, i], x[t, i - 1])
            if i < n - 1:
                f += spring_force(x[t, i], x[t, i + 1])
            # the pin as a factor: `if i == 0: vn = ti.Vector([0.0, 0.0])` would be the natural
            # way, but vkdiff's adjoint still flows through a local overwritten inside an `if`
            free = ti.select(i == 0, 0.0, 1.0)
            vn = free * (v[t, i] + dt * f) * damping
            v[t + 1, i] = vn
            x[t + 1, i] = x[t, i] + dt * vn

    @ti.kernel
    def set_initial(x: ti.template(), v: ti.template()):
        for i in range(n):
            x[0, i] = x_init[i]
            v[0, i] = v_init[i]

    @ti.kernel
    def compute_loss(x: ti.template(), t: ti.i32):
        loss[None] = (x[t, n - 1] - ti.Vector(target)).norm_sqr()

    # ----------------------------------------------------------------- 1. store every step
    xs = ti.Vector.field(2, ti.f32, shape=(steps + 1, n), needs_grad=True)
    vs = ti.Vector.field(2, ti.f32, shape=(steps + 1, n), needs_grad=True)

    def run_stored():
        with ti.Tape(loss):
            set_initial(xs, vs)
            for t in range(steps):
                step(xs, vs, t)
            compute_loss(xs, steps)
        return loss[None], v_init.grad.to_numpy(), stiffness.grad[None]

    # ----------------------------------------------------------------- 2. ti.ad.checkpointed
    # a two-state window: step() advances slot 0 to slot 1 (the same compiled step as above),
    # carry() moves slot 1 back to slot 0. The block keeps a snapshot of what the steps
    # overwrite every k steps and recomputes each segment during the backward pass.
    win_x = ti.Vector.field(2, ti.f32, shape=(2, n), needs_grad=True)
    win_v = ti.Vector.field(2, ti.f32, shape=(2, n), needs_grad=True)

    @ti.kernel
    def carry():
        for i in range(n):
            win_x[0, i] = win_x[1, i]
            win_v[0, i] = win_v[1, i]

    def one_step(t):
        step(win_x, win_v, 0)
        carry()

    def run_checkpointed():
        with ti.Tape(loss):
            set_initial(win_x, win_v)
            ti.ad.checkpointed(one_step, steps=steps, every=k)
            compute_loss(win_x, 0)
        return loss[None], v_init.grad.to_numpy(), stiffness.grad[None]

    # ----------------------------------------------------------------- run both, compare
    rng = np.random.default_rng(1)
    x_init.from_numpy(np.stack([0.3 + rest * np.arange(n), np.full(n, 0.8)], 1).astype(np.float32))
    v_init.from_numpy((0.5 * rng.standard_normal((n, 2))).astype(np.float32))
    stiffness[None] = 3e4

    print(f'vkdiff on {ti.device_name()}: rope of {n} masses, {steps} steps, '
          f'a checkpoint every {k} steps ({segments} segments)', flush=True)
    results = {}
    # (the stored run's time also counts the Tape's global-data-access-rule check of its
    # steps + 2 launches; the checkpointed block's launches need none: each adjoint gets back
    # exactly the fields its launch left)
    for name, run in (('stored', run_stored), ('checkpointed', run_checkpointed)):
        run()                                      # compile, warm up
        ti.ad.checkpoint.reset_peak()
        t0 = time.perf_counter()
        L, gv, gk = run()
        el = time.perf_counter() - t0
        results[name] = dict(loss=L, grad_v_init=gv, grad_stiffness=gk, seconds=el)

    # field memory, measured: the bytes of the fields each way allocated (with their gradients)
    # and, checkpointed, the peak of the block's snapshot and undo buffers
    def field_bytes(*fields):
        return sum(f.storage.nbytes + f.grad.storage.nbytes for f in fields)
    results['stored']['bytes'] = field_bytes(xs, vs)
    results['checkpointed']['bytes'] = field_bytes(win_x, win_v) + \
        ti.ad.checkpoint_memory()['peak']
    for name in ('stored', 'checkpointed'):
        r = results[name]
        r['states'] = r['bytes'] / (n * 2 * 2 * 4)   # in units of one state (x and v, f32)
        print(f'{name:>13}: loss {r["loss"]:.6e}  dL/dstiffness {r["grad_stiffness"]: .6e}  '
              f'|dL/dv_init| {np.linalg.norm(r["grad_v_init"]):.6e}  '
              f'field memory {r["bytes"] / 1024:.1f} KiB ({r["states"]:.0f} states)  '
              f'{r["seconds"] * 1e3:.0f} ms forward+backward')
    a, b = results['stored'], results['checkpointed']
    dv = np.abs(a['grad_v_init'] - b['grad_v_init']).max()
    rel = dv / max(np.abs(a['grad_v_init']).max(), 1e-30)
    dk = abs(a['grad_stiffness'] - b['grad_stiffness']) / max(abs(a['grad_stiffness']), 1e-30)
    print(f'dL/dv_init[{n - 1}]  stored {a["grad_v_init"][-1]}  checkpointed {b["grad_v_init"][-1]}')
    print(f'largest difference: dL/dv_init {dv:.3e} ({rel:.1e} relative), dL/dstiffness '
          f'{dk:.1e} relative; field memory {a["bytes"] / b["bytes"]:.1f}x less')
    if args.check_fd:
        def loss_at():
            set_initial(win_x, win_v)
            ti.ad.checkpointed(one_step, steps=steps, every=k)  # (no Tape: a plain loop)
            compute_loss(win_x, 0)
            return loss[None]
        checks = []
        for what, fld, idx, h in (('dL/dstiffness', stiffness, None, 100.0),
                                  (f'dL/dv_init[{n - 1}].x', v_init, (n - 1, 0), 1e-3),
                                  (f'dL/dv_init[{n - 1}].y', v_init, (n - 1, 1), 1e-3)):
            arr = fld.to_numpy().astype(np.float64)
            key = () if idx is None else idx
            vals = []
            for sgn in (1, -1):
                a = arr.copy()
                a[key] += sgn * h
                fld.from_numpy(a.astype(np.float32))
                vals.append(loss_at())
            fld.from_numpy(arr.astype(np.float32))
            fd = (vals[0] - vals[1]) / (2 * h)
            ad = b['grad_stiffness'] if idx is None else b['grad_v_init'][idx]
            checks.append((what, ad, fd))
            print(f'finite differences: {what}  autodiff {ad: .5e}  central difference {fd: .5e}')
        results['fd'] = checks
    return results


if __name__ == '__main__':
    main()
