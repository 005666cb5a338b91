"""Training through the PyTorch bridge: a torch model's parameters drive a vkdiff simulation.

A projectile with quadratic air drag is simulated by vkdiff kernels over ndarrays (one launch per
time step, semi-implicit Euler). `ti.ad.torch_function` turns the whole simulation into a
torch.autograd.Function: torch's Adam learns the launch velocity and the drag coefficient so that
the trajectory passes through a few observed points (made by a reference run with hidden true
parameters). The gradient flows from torch into vkdiff's generated adjoint kernels and back.

    python examples/torch_projectile.py [--iters 100] [--steps 120] [--quiet]
"""
import argparse

import numpy as np
import torch

import vkdiff as ti

DT = 0.01
G = 9.81


@ti.kernel
def step(pos: ti.types.ndarray(dtype=ti.math.vec2, ndim=1),
         vel: ti.types.ndarray(dtype=ti.math.vec2, ndim=1),
         params: ti.types.ndarray(ndim=1), t: ti.i32):
    for _ in range(1):   # one thread: a step of one body
        v = vel[t - 1]
        drag = ti.exp(params[2])                   # log-parametrised: stays positive
        a = ti.Vector([0.0, -G]) - drag * v.norm() * v
        v_new = v + DT * a
        vel[t] = v_new
        pos[t] = pos[t - 1] + DT * v_new


@ti.kernel
def launch(pos: ti.types.ndarray(dtype=ti.math.vec2, ndim=1),
           vel: ti.types.ndarray(dtype=ti.math.vec2, ndim=1),
           params: ti.types.ndarray(ndim=1)):
    for _ in range(1):
        pos[0] = ti.Vector([0.0, 0.0])
        vel[0] = ti.Vector([params[0], params[1]])


@ti.kernel
def misfit(pos: ti.types.ndarray(dtype=ti.math.vec2, ndim=1),
           obs_t: ti.types.ndarray(dtype=ti.i32, ndim=1),
           obs: ti.types.ndarray(ndim=2),
           loss: ti.types.ndarray(ndim=0)):
    for k in range(obs.shape[0]):    # (the bridge passes tensors as arrays of scalars)
        d = pos[obs_t[k]] - ti.Vector([obs[k, 0], obs[k, 1]])
        loss[None] += d.dot(d)


def simulate(params, obs_t, obs, steps, loss):
    """The vkdiff computation: the inputs (ndarrays made from the torch tensors), then the
    output (the 0-D loss)."""
    pos = ti.Vector.ndarray(2, params.dtype, steps, needs_grad=True)
    vel = ti.Vector.ndarray(2, params.dtype, steps, needs_grad=True)
    launch(pos, vel, params)
    for t in range(1, steps):
        step(pos, vel, params, t)
    misfit(pos, obs_t, obs, loss)


def reference(params, steps):
    """The same simulation in numpy (float64): the observations, and a check of the kernels."""
    vx, vy, log_drag = params
    p, v = np.zeros(2), np.array([vx, vy])
    out = [p.copy()]
    for _ in range(1, steps):
        a = np.array([0.0, -G]) - np.exp(log_drag) * np.linalg.norm(v) * v
        v = v + DT * a
        p = p + DT * v
        out.append(p.copy())
    return np.array(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--iters', type=int, default=100)
    ap.add_argument('--steps', type=int, default=120)
    ap.add_argument('--quiet', action='store_true')
    args = ap.parse_args(argv)
    ti.init(default_fp=ti.f64)
    steps = args.steps
    true = np.array([6.0, 5.0, np.log(0.15)])
    obs_t = np.linspace(steps // 6, steps - 1, 5).astype(np.int32)
    obs = reference(true, steps)[obs_t]

    op = ti.ad.torch_function(lambda p, ot, o, loss: simulate(p, ot, o, steps, loss),
                              outputs=[()])
    params = torch.nn.Parameter(torch.tensor([3.0, 3.0, np.log(0.5)], dtype=torch.float64))
    opt = torch.optim.Adam([params], lr=0.2)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=40, gamma=0.5)
    obs_t_t, obs_tt = torch.from_numpy(obs_t), torch.from_numpy(obs)
    losses = []
    for it in range(args.iters):
        opt.zero_grad()
        loss = op(params, obs_t_t, obs_tt)
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
        if not args.quiet and (it % 25 == 0 or it == args.iters - 1):
            print(f'iter {it:4d}  loss {losses[-1]:.3e}  v0 = ({params[0].item():.3f}, '
                  f'{params[1].item():.3f})  drag = {np.exp(params[2].item()):.4f}')
    if not args.quiet:
        print(f'true: v0 = ({true[0]}, {true[1]})  drag = {np.exp(true[2]):.4f}')
    return {'losses': losses, 'params': params.detach().numpy().copy(), 'true': true}


if __name__ == '__main__':
    main()
