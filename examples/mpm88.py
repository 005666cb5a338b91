"""Taichi's classic 88-line MLS-MPM example (python/taichi/examples/simulation/mpm88.py) with
`import vkdiff as ti` as the only change to the simulation code; command-line options for
headless runs around it.

    python examples/mpm88.py                  # window if a display is present, else PNG frames
    python examples/mpm88.py --frames 100 --out mpm_frames
"""
import argparse
import os
import time

import vkdiff as ti

ap = argparse.ArgumentParser(description='MLS-MPM (Taichi mpm88) on vkdiff')
ap.add_argument('--frames', type=int, default=0, help='0: until the window closes (200 headless)')
ap.add_argument('--out', default=None, help='write PNG frames to this folder')
ap.add_argument('--headless', action='store_true')
args = ap.parse_args()

ti.init(arch=ti.gpu)

n_particles = 8192
n_grid = 128
dx = 1 / n_grid
dt = 2e-4

p_rho = 1
p_vol = (dx * 0.5)**2
p_mass = p_vol * p_rho
gravity = 9.8
bound = 3
E = 400

x = ti.Vector.field(2, float, n_particles)
v = ti.Vector.field(2, float, n_particles)
C = ti.Matrix.field(2, 2, float, n_particles)
J = ti.field(float, n_particles)

grid_v = ti.Vector.field(2, float, (n_grid, n_grid))
grid_m = ti.field(float, (n_grid, n_grid))


@ti.kernel
def substep():
    for i, j in grid_m:
        grid_v[i, j] = [0, 0]
        grid_m[i, j] = 0
    for p in x:
        Xp = x[p] / dx
        base = int(Xp - 0.5)
        fx = Xp - base
        w = [0.5 * (1.5 - fx)**2, 0.75 - (fx - 1)**2, 0.5 * (fx - 0.5)**2]
        stress = -dt * 4 * E * p_vol * (J[p] - 1) / dx**2
        affine = ti.Matrix([[stress, 0], [0, stress]]) + p_mass * C[p]
        for i, j in ti.static(ti.ndrange(3, 3)):
            offset = ti.Vector([i, j])
            dpos = (offset - fx) * dx
            weight = w[i].x * w[j].y
            grid_v[base + offset] += weight * (p_mass * v[p] + affine @ dpos)
            grid_m[base + offset] += weight * p_mass
    for i, j in grid_m:
        if grid_m[i, j] > 0:
            grid_v[i, j] /= grid_m[i, j]
        grid_v[i, j].y -= dt * gravity
        if i < bound and grid_v[i, j].x < 0:
            grid_v[i, j].x = 0
        if i > n_grid - bound and grid_v[i, j].x > 0:
            grid_v[i, j].x = 0
        if j < bound and grid_v[i, j].y < 0:
            grid_v[i, j].y = 0
        if j > n_grid - bound and grid_v[i, j].y > 0:
            grid_v[i, j].y = 0
    for p in x:
        Xp = x[p] / dx
        base = int(Xp - 0.5)
        fx = Xp - base
        w = [0.5 * (1.5 - fx)**2, 0.75 - (fx - 1.0)**2, 0.5 * (fx - 0.5)**2]
        new_v = ti.Vector.zero(float, 2)
        new_C = ti.Matrix.zero(float, 2, 2)
        for i, j in ti.static(ti.ndrange(3, 3)):
            offset = ti.Vector([i, j])
            dpos = (offset - fx) * dx
            weight = w[i].x * w[j].y
            g_v = grid_v[base + offset]
            new_v += weight * g_v
            new_C += 4 * weight * g_v.outer_product(dpos) / dx**2
        v[p] = new_v
        x[p] += dt * v[p]
        J[p] *= 1 + dt * new_C.trace()
        C[p] = new_C


@ti.kernel
def init():
    for i in range(n_particles):
        x[i] = [ti.random() * 0.4 + 0.2, ti.random() * 0.4 + 0.2]
        v[i] = [0, -1]
        J[i] = 1


init()
headless = args.headless or args.out is not None or not os.environ.get('DISPLAY')
gui = ti.GUI('MPM88', show_gui=not headless)
frames = args.frames or (200 if headless else 0)
out = args.out or ('mpm88_frames' if headless else None)
if out:
    os.makedirs(out, exist_ok=True)
t0, frame = time.perf_counter(), 0
while gui.running and not gui.get_event(gui.ESCAPE) and (frames == 0 or frame < frames):
    for s in range(50):
        substep()
    gui.clear(0x112F41)
    gui.circles(x.to_numpy(), radius=1.5, color=0x068587)
    gui.show(os.path.join(out, f'frame_{frame:05d}.png') if out else None)
    frame += 1
    if frame % 20 == 0 or frame == frames:
        print(f'frame {frame:4d}  {frame / (time.perf_counter() - t0):6.1f} FPS', flush=True)
if out:
    print(f'wrote {frame} frames to {os.path.abspath(out)}/')
