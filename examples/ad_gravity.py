"""Autodiff gravity: Taichi's examples/simulation/ad_gravity.py with `import vkdiff as ti` as the
only change to the simulation code. Forces are -dU/dx, computed by the Tape from the potential
energy kernel. Around it: command-line options, FPS/energy readout and headless output.

    python examples/ad_gravity.py                 # window if a display is present, else PNGs
    python examples/ad_gravity.py -n 1024 --frames 200 --out frames/
    python examples/ad_gravity.py --gif gravity.gif --frames 120
"""
import argparse
import os
import time

import vkdiff as ti

parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
parser.add_argument('-n', '--particles', type=int, default=8, help='number of particles (N)')
parser.add_argument('--frames', type=int, default=0,
                    help='frames to run (0: until the window closes; 300 when headless)')
parser.add_argument('--substeps', type=int, default=50, help='substeps per frame (as in Taichi)')
parser.add_argument('--out', default=None, help='headless: folder to write one PNG per frame')
parser.add_argument('--gif', default=None, help='headless: write an animated GIF (needs pillow)')
parser.add_argument('--headless', action='store_true', help='never open a window')
parser.add_argument('--every', type=int, default=1, help='write every k-th frame')
args = parser.parse_args()

ti.init()

N = args.particles
dt = 1e-5

x = ti.Vector.field(2, dtype=ti.f32, shape=N, needs_grad=True)  # particle positions
v = ti.Vector.field(2, dtype=ti.f32, shape=N)  # particle velocities
U = ti.field(dtype=ti.f32, shape=(), needs_grad=True)  # potential energy


@ti.kernel
def compute_U():
    for i, j in ti.ndrange(N, N):
        r = x[i] - x[j]
        # r.norm(1e-3) is equivalent to ti.sqrt(r.norm()**2 + 1e-3)
        # This is to prevent 1/0 error which can cause wrong derivative
        U[None] += -1 / r.norm(1e-3)  # U += -1 / |r|


@ti.kernel
def advance():
    for i in x:
        v[i] += dt * -x.grad[i]  # dv/dt = -dU/dx
    for i in x:
        x[i] += dt * v[i]  # dx/dt = v


def substep():
    with ti.Tape(loss=U):
        # Kernel invocations in this scope will later contribute to partial derivatives of
        # U with respect to input variables such as x.
        compute_U(
        )  # The tape will automatically compute dU/dx and save the results in x.grad
    advance()


@ti.kernel
def init():
    for i in x:
        x[i] = [ti.random(), ti.random()]


def kinetic_energy():
    vs = v.to_numpy().astype('float64')
    return 0.5 * float((vs ** 2).sum())


init()
headless = args.headless or args.out is not None or args.gif is not None or not os.environ.get('DISPLAY')
gui = ti.GUI('Autodiff gravity', show_gui=not headless)
frames = args.frames or (0 if not headless else 300)
out_dir = args.out
if headless and out_dir is None and args.gif is None:
    out_dir = 'ad_gravity_frames'
if out_dir:
    os.makedirs(out_dir, exist_ok=True)
images = []
print(f'vkdiff on {ti.device_name()}: N = {N}, {args.substeps} substeps per frame, '
      + ('headless' if headless else 'window'))
frame, t0, t_last = 0, time.perf_counter(), time.perf_counter()
while gui.running and (frames == 0 or frame < frames):
    for i in range(args.substeps):
        substep()
    gui.circles(x.to_numpy(), radius=3)
    path = None
    if out_dir and frame % args.every == 0:
        path = os.path.join(out_dir, f'frame_{frame:05d}.png')
    if args.gif and frame % args.every == 0:  # before show(), which clears the frame
        rgba = gui.get_image()  # (w, h, 4) in [0, 1], indexed [x, y] with y up
        images.append((rgba[:, ::-1, :3].transpose(1, 0, 2) * 255 + 0.5).astype('uint8'))
    gui.show(path)
    frame += 1
    if time.perf_counter() - t_last > 1.0 or frame == frames:
        t_last = time.perf_counter()
        el = t_last - t0
        print(f'frame {frame:5d}  {frame / el:7.1f} FPS  {frame * args.substeps / el:8.1f} substeps/s  '
              f'U = {U[None]: .6e}  K = {kinetic_energy(): .6e}  U+K = {U[None] + kinetic_energy(): .6e}',
              flush=True)
if args.gif and images:
    from PIL import Image
    ims = [Image.fromarray(im) for im in images]
    ims[0].save(args.gif, save_all=True, append_images=ims[1:], duration=33, loop=0)
    print(f'wrote {args.gif} ({len(ims)} frames)')
if out_dir:
    print(f'wrote {len(os.listdir(out_dir))} frames to {os.path.abspath(out_dir)}/')
