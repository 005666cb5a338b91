"""Differentiable billiards: learn the cue shot that sends a chosen ball to a target, by gradient
descent through the whole simulation (DiffTaichi's billiards, in the style of its examples).

Every time step lives in its own slice of the state fields (`x[t, i]`, `v[t, i]`), so one
`ti.Tape(loss)` around the `--steps` launches of `step(t)` gives d loss / d (cue velocity) exactly,
collisions included (soft, penalty-force contacts). The loss is the squared distance between the
target ball's final position and the goal; gradient descent (with heavy-ball momentum, the step
clipped near grazing contacts) on the cue ball's initial velocity brings it down by orders of
magnitude.

    python examples/diff_billiards.py                       # 60 iterations, 150 steps
    python examples/diff_billiards.py --iters 100 --steps 200 --out out/billiards200/

It prints the loss while it learns and writes before.png / after.png (trajectories, balls, goal)
and loss.png (the loss curve, log scale) to --out.
"""
import argparse
import math
import os
import time

import numpy as np

import vkdiff as ti


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--iters', type=int, default=60, help='gradient descent iterations')
    p.add_argument('--steps', type=int, default=150, help='time steps per simulation')
    p.add_argument('--lr', type=float, default=0.02, help='learning rate')
    p.add_argument('--momentum', type=float, default=0.8,
                   help='heavy-ball momentum (0: plain gradient descent)')
    p.add_argument('--max-step', type=float, default=0.03,
                   help='gradient clipping: largest change of the cue velocity per iteration')
    p.add_argument('--out', default='out/billiards', help='folder for before/after/loss PNGs')
    p.add_argument('--no-images', action='store_true', help='write no PNGs')
    p.add_argument('--every', type=int, default=5, help='print the loss every k iterations')
    p.add_argument('--quiet', action='store_true', help='print only the summary')
    return p.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    ti.init()

    steps = args.steps
    T_total = 1.5                  # seconds of simulated time, whatever --steps is
    dt = T_total / steps
    radius = 0.025
    # contact force stiffness * overlap^2 (unit masses): quadratic, so that it starts smoothly and
    # the loss stays smooth in the cue velocity (a linear spring makes the gradient jump whenever
    # a contact begins one time step earlier or later)
    stiffness = 1e5
    drag = 0.8                     # rolling friction: balls slow down as on a cloth

    # the cue ball (0), and a few object balls; ball `target` should end at `goal`
    start = [[0.15, 0.35],
             [0.50, 0.45],
             [0.75, 0.22],
             [0.30, 0.75],
             [0.85, 0.45]]
    n = len(start)
    target = 1
    goal = [0.75, 0.72]

    x = ti.Vector.field(2, ti.f32, shape=(steps, n), needs_grad=True)   # positions per step
    v = ti.Vector.field(2, ti.f32, shape=(steps, n), needs_grad=True)   # velocities per step
    x0 = ti.Vector.field(2, ti.f32, shape=n)
    v_cue = ti.Vector.field(2, ti.f32, shape=(), needs_grad=True)       # what we learn
    goal_f = ti.Vector.field(2, ti.f32, shape=())
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def initialize():
        for i in range(n):
            x[0, i] = x0[i]
            # only the cue ball moves. A mask rather than `if i == 0: v[0, i] = v_cue[None]`
            # `else: v[0, i] = ...`: vkdiff's access-rule checker counts the two exclusive
            # stores as two writes of v[0, i]
            v[0, i] = ti.select(i == 0, 1.0, 0.0) * v_cue[None]

    @ti.func
    def contact_force(t, i):
        f = ti.Vector([0.0, 0.0])
        for j in range(n):
            if j != i:
                d = x[t, i] - x[t, j]
                dist = d.norm(1e-8)
                overlap = 2 * radius - dist
                if overlap > 0:
                    f += stiffness * overlap * overlap / dist * d
        return f

    @ti.kernel
    def step(t: ti.i32):
        for i in range(n):
            f = contact_force(t, i)
            vn = (v[t, i] + dt * f) * ti.exp(-drag * dt)
            v[t + 1, i] = vn
            x[t + 1, i] = x[t, i] + dt * vn

    @ti.kernel
    def compute_loss():
        loss[None] = (x[steps - 1, target] - goal_f[None]).norm_sqr()

    def forward():
        initialize()
        for t in range(steps - 1):
            step(t)
        compute_loss()

    x0.from_numpy(np.array(start, np.float32))
    goal_f[None] = goal
    # first guess: aim straight at the target ball's centre, at a speed that reaches it
    aim = np.array(start[target]) - np.array(start[0])
    v_cue[None] = (1.0 * aim / np.linalg.norm(aim)).tolist()
    v_start = v_cue.to_numpy().tolist()
    lr = args.lr
    max_step = args.max_step

    print(f'vkdiff on {ti.device_name()}: {n} balls, {steps} steps (dt = {dt:.4g}), '
          f'{args.iters} iterations of gradient descent on the cue velocity', flush=True)
    losses, trajectories = [], {}
    momentum = np.zeros(2)
    t0 = time.perf_counter()
    for it in range(args.iters + 1):
        with ti.Tape(loss):
            forward()
        L = loss[None]
        losses.append(L)
        if it == 0:
            trajectories['before'] = x.to_numpy()
        if it == args.iters:
            trajectories['after'] = x.to_numpy()
            break
        g = np.array(v_cue.grad.to_numpy(), np.float64)
        vc = np.array(v_cue.to_numpy(), np.float64)
        if not args.quiet and (it % args.every == 0):
            print(f'iter {it:4d}  loss {L:.4e}  v_cue ({vc[0]: .4f}, {vc[1]: .4f})  '
                  f'|grad| {np.linalg.norm(g):.3e}  {time.perf_counter() - t0:6.1f} s', flush=True)
        momentum = args.momentum * momentum + g
        delta = -lr * momentum
        norm = np.linalg.norm(delta)
        if norm > max_step:        # clipped: near a grazing contact the gradient spikes
            delta *= max_step / norm
        v_cue.from_numpy((vc + delta).astype(np.float32))
    el = time.perf_counter() - t0
    vc = v_cue.to_numpy()
    print(f'iter {args.iters:4d}  loss {losses[-1]:.4e}  v_cue ({vc[0]: .4f}, {vc[1]: .4f})  '
          f'{el:6.1f} s', flush=True)
    print(f'loss {losses[0]:.4e} -> {losses[-1]:.4e} (x{losses[0] / max(losses[-1], 1e-30):.3g} '
          f'smaller) in {args.iters} iterations, {el:.1f} s '
          f'({el / (args.iters + 1) * 1e3:.0f} ms per forward+backward of {steps} steps)')

    if not args.no_images:
        os.makedirs(args.out, exist_ok=True)
        for name in ('before', 'after'):
            path = os.path.join(args.out, f'{name}.png')
            render(trajectories[name], radius, target, goal, path,
                   f'{name}: loss {losses[0 if name == "before" else -1]:.2e}')
        plot_losses(losses, os.path.join(args.out, 'loss.png'))
        print(f'wrote before.png, after.png, loss.png to {os.path.abspath(args.out)}/')
    config = dict(dt=dt, radius=radius, stiffness=stiffness, drag=drag, start=start,
                  target=target, goal=goal)
    return {'losses': losses, 'v_cue_start': v_start, 'v_cue': vc.tolist(),
            'trajectories': trajectories, 'config': config}


COLORS = [0xFFFFFF, 0xFFB000, 0x4FA3E8, 0xD4504F, 0x6FCF70, 0xB070E0, 0xE0E070]


def render(traj, radius, target, goal, path, title):
    """Trajectories as polylines, balls at the start (dim) and the end, the goal as a ring."""
    gui = ti.GUI('Differentiable billiards', res=512, background_color=0x0E5A32, show_gui=False)
    n = traj.shape[1]
    px = radius * 512
    for i in range(n):
        c = COLORS[i % len(COLORS)]
        gui.lines(traj[:-1, i], traj[1:, i], radius=1.5 if i in (0, target) else 1, color=c)
    gui.circle(goal, color=0xFF3050, radius=px + 4)
    gui.circle(goal, color=0x0E5A32, radius=px + 1)
    gui.circles(traj[0], radius=px, color=0x2A7A50)
    gui.circles(traj[-1], radius=px, color=[COLORS[i % len(COLORS)] for i in range(n)])
    gui.text(title, (0.02, 0.98), font_size=18, color=0xFFFFFF)
    gui.show(path)


def plot_losses(losses, path):
    """The loss curve on a log scale, drawn with ti.GUI lines."""
    gui = ti.GUI('loss', res=(512, 320), background_color=0xFFFFFF, show_gui=False)
    lg = np.log10(np.maximum(np.asarray(losses, np.float64), 1e-30))
    lo, hi = math.floor(lg.min()), math.ceil(lg.max())
    hi = max(hi, lo + 1)
    xs = 0.1 + 0.85 * np.arange(len(lg)) / max(len(lg) - 1, 1)
    ys = 0.1 + 0.8 * (lg - lo) / (hi - lo)
    pts = np.stack([xs, ys], 1)
    for e in range(lo, hi + 1):
        y = 0.1 + 0.8 * (e - lo) / (hi - lo)
        gui.line((0.1, y), (0.95, y), radius=1, color=0xDDDDDD)
        gui.text(f'1e{e}', (0.0, y + 0.03), font_size=14, color=0x333333)
    gui.line((0.1, 0.1), (0.1, 0.9), radius=1, color=0x333333)
    gui.line((0.1, 0.1), (0.95, 0.1), radius=1, color=0x333333)
    gui.lines(pts[:-1], pts[1:], radius=2, color=0x2060D0)
    gui.text('loss (log scale) per iteration', (0.3, 0.99), font_size=16, color=0x333333)
    gui.show(path)


if __name__ == '__main__':
    main()
