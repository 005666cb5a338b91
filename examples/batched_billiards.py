"""Many simulations at once on one device: B billiard shots, each with its own cue velocity and
goal, learned together by gradient descent through one set of kernels and one Tape.

The pattern (README, "Many simulations at once"): a leading batch axis on every field
(`x[b, t, i]`), `ti.ndrange(B, n)` loops, and a loss per environment (`env_loss[b]`). The Tape's
loss is their sum, taken in a serial loop; since environment b's loss and its gradient involve
only environment b's values, each in a fixed order, they are bit-identical whatever B is (tests/
distributed/test_batched_isolation.py checks B = 1, 7 and 64).

    python examples/batched_billiards.py --batch 64 --iters 40
"""
import argparse
import time

import numpy as np

import vkdiff as ti

START = [[0.15, 0.35], [0.50, 0.45], [0.75, 0.22], [0.30, 0.75], [0.85, 0.45]]
TARGET = 1
RADIUS, STIFFNESS, DRAG, T_TOTAL = 0.025, 1e5, 0.8, 1.5


def goals(B):
    """Environment b's goal for the target ball: spread along an arc, the same for b whatever B."""
    b = np.arange(B)
    ang = 0.9 + 0.35 * np.sin(1.7 * b)
    return np.stack([0.5 + 0.27 * np.cos(ang), 0.45 + 0.27 * np.sin(ang)], 1).astype(np.float32)


def first_guess(B):
    aim = np.array(START[TARGET]) - np.array(START[0])
    aim = aim / np.linalg.norm(aim)
    b = np.arange(B)
    rot = 0.05 * np.sin(2.3 * b)  # a slightly different first shot per environment
    c, s = np.cos(rot), np.sin(rot)
    return np.stack([c * aim[0] - s * aim[1], s * aim[0] + c * aim[1]], 1).astype(np.float32)


class BatchedBilliards:
    """B independent billiard tables, `steps` time steps, in one set of fields and kernels."""

    def __init__(self, B, steps=100):
        self.B, self.steps, n = B, steps, len(START)
        dt = T_TOTAL / steps
        self.x = x = ti.Vector.field(2, ti.f32, shape=(B, steps, n), needs_grad=True)
        self.v = v = ti.Vector.field(2, ti.f32, shape=(B, steps, n), needs_grad=True)
        self.x0 = x0 = ti.Vector.field(2, ti.f32, shape=n)
        self.v_cue = v_cue = ti.Vector.field(2, ti.f32, shape=B, needs_grad=True)
        self.goal = goal = ti.Vector.field(2, ti.f32, shape=B)
        self.env_loss = env_loss = ti.field(ti.f32, shape=B, needs_grad=True)
        self.loss = loss = ti.field(ti.f32, shape=(), needs_grad=True)

        @ti.kernel
        def initialize():
            for b, i in ti.ndrange(B, n):
                x[b, 0, i] = x0[i]
                v[b, 0, i] = ti.select(i == 0, 1.0, 0.0) * v_cue[b]

        @ti.kernel
        def step(t: ti.i32):
            for b, i in ti.ndrange(B, n):
                f = ti.Vector([0.0, 0.0])
                for j in range(n):  # environment b's balls only, in a fixed order
                    if j != i:
                        d = x[b, t, i] - x[b, t, j]
                        dist = d.norm(1e-8)
                        overlap = 2 * RADIUS - dist
                        if overlap > 0:
                            f += STIFFNESS * overlap * overlap / dist * d
                vn = (v[b, t, i] + dt * f) * ti.exp(-DRAG * dt)
                v[b, t + 1, i] = vn
                x[b, t + 1, i] = x[b, t, i] + dt * vn

        @ti.kernel
        def compute_loss():
            for b in range(B):
                env_loss[b] = (x[b, steps - 1, TARGET] - goal[b]).norm_sqr()
            ti.loop_config(serialize=True)  # the Tape's scalar, in one order: loss.grad -> 1 each
            for b in range(B):
                loss[None] += env_loss[b]

        self._initialize, self._step, self._compute_loss = initialize, step, compute_loss
        x0.from_numpy(np.array(START, np.float32))
        goal.from_numpy(goals(B))
        v_cue.from_numpy(first_guess(B))

    def forward_backward(self):
        """One Tape over all B environments: returns (env losses, d env_loss[b] / d v_cue[b])."""
        with ti.ad.Tape(self.loss):
            self._initialize()
            for t in range(self.steps - 1):
                self._step(t)
            self._compute_loss()
        return self.env_loss.to_numpy(), self.v_cue.grad.to_numpy()

    def descend(self, lr=0.02, max_step=0.03):
        """Gradient descent on every environment's cue velocity (clipped, per environment)."""
        _, g = self.forward_backward()
        delta = -lr * g.astype(np.float64)
        norm = np.linalg.norm(delta, axis=1, keepdims=True)
        delta *= np.minimum(1.0, max_step / np.maximum(norm, 1e-30))
        self.v_cue.from_numpy((self.v_cue.to_numpy() + delta).astype(np.float32))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--batch', type=int, default=16, help='environments (B)')
    p.add_argument('--steps', type=int, default=100)
    p.add_argument('--iters', type=int, default=30)
    args = p.parse_args(argv)
    ti.init()
    sim = BatchedBilliards(args.batch, args.steps)
    t0 = time.perf_counter()
    first = None
    for it in range(args.iters + 1):
        if it == args.iters:
            losses, _ = sim.forward_backward()
            break
        losses, _ = sim.forward_backward()
        first = losses.copy() if first is None else first
        sim.descend()
    el = time.perf_counter() - t0
    print(f'{args.batch} environments, {args.steps} steps, {args.iters} iterations in {el:.1f} s '
          f'({args.batch * args.steps * (args.iters + 1) / el:.0f} environment-steps/s, '
          'forward + backward)')
    print(f'mean loss {first.mean():.4e} -> {losses.mean():.4e}; '
          f'{int((losses < first).sum())} of {args.batch} environments improved')
    return first, losses


if __name__ == '__main__':
    main()
