#!/usr/bin/env python3
"""Benchmark ti.ui (GGUI) frames off-screen: vkdiff (device rasteriser, or numpy with VKDIFF_UI_DRAW=numpy) beside Taichi 1.7.4's
GGUI (Vulkan, lavapipe) in the same run.

Three scenes like Taichi's GGUI examples draw, inputs as numpy arrays (so only drawing is
timed): 8192 canvas circles of radius 0.003 at 512x512 (mpm128_ggui), 20000 scene particles of
radius 0.01 at 1080x720 (mpm3d_ggui), a 128x128 cloth mesh with per-vertex colours and two
point lights at 768x768 (mass_spring_3d_ggui), mpm3d_ggui.py's render() (65536 particles of
radius 0.02 with an RGBA colour field and two lights at 1080x720) and 1M particles of radius
0.003.  A frame is the drawing calls plus
``window.get_image_buffer_as_numpy()`` (which composes the frame).  Prints the median wall ms
per frame and the process CPU ms per frame (the machine may be shared).

    PYTHONPATH=. .venv/bin/python tools/bench_ggui.py [--frames 10]
        [--taichi-python /work/venvs/taichi/bin/python]
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def scenes(ti):
    rng = np.random.default_rng(0)
    circles = rng.random((8192, 2)).astype(np.float32)
    parts = (rng.random((20000, 3)) * 0.5 + 0.25).astype(np.float32)
    n = 128
    xs, zs = np.meshgrid(np.linspace(0, 1, n), np.linspace(0, 1, n), indexing="ij")
    verts = np.stack([xs, 0.6 + 0.05 * np.sin(6 * xs) * np.cos(6 * zs), zs], -1)
    verts = verts.reshape(-1, 3).astype(np.float32)
    q = (np.arange(n - 1)[:, None] * n + np.arange(n - 1)[None, :]).reshape(-1)
    idx = np.stack([q, q + n, q + 1, q + 1, q + n, q + n + 1], 1).reshape(-1).astype(np.int32)
    cols = rng.random((n * n, 3)).astype(np.float32)
    vf = ti.Vector.field(3, ti.f32, n * n)
    vf.from_numpy(verts)
    fi = ti.field(ti.i32, idx.size)
    fi.from_numpy(idx)
    cf = ti.Vector.field(3, ti.f32, n * n)
    cf.from_numpy(cols)
    pf = ti.Vector.field(3, ti.f32, parts.shape[0])
    pf.from_numpy(parts)
    cfld = ti.Vector.field(2, ti.f32, circles.shape[0])
    cfld.from_numpy(circles)
    # mpm3d_ggui.py's render(): 65536 particles (n_grid 64) in its three preset blocks, RGBA
    # colour field (alpha 1), radius 0.02, two point lights, 1080x720
    m = 65536
    blocks = np.array([[0.55, 0.05, 0.55], [0.05, 0.05, 0.05], [0.3, 0.4, 0.3]], np.float32)
    mx = (rng.random((m, 3)) * 0.4 + blocks[np.arange(m) % 3]).astype(np.float32)
    mf = ti.Vector.field(3, ti.f32, m)
    mf.from_numpy(mx)
    mc = np.concatenate([rng.random((m, 3)), np.ones((m, 1))], 1).astype(np.float32)
    mcf = ti.Vector.field(4, ti.f32, m)
    mcf.from_numpy(mc)
    big = 1 << 20
    bf = ti.Vector.field(3, ti.f32, big)
    bf.from_numpy((rng.random((big, 3)) * 0.8 + 0.1).astype(np.float32))

    def camera():
        cam = ti.ui.Camera()
        cam.position(0.5, 1.0, 1.95)
        cam.lookat(0.5, 0.3, 0.5)
        cam.fov(55)
        return cam

    def draw_circles(window):
        c = window.get_canvas()
        c.set_background_color((0.067, 0.184, 0.255))
        c.circles(cfld, radius=0.003, color=(0.93, 0.33, 0.23))

    def draw_particles(window, cam=camera()):
        s = window.get_scene()
        s.set_camera(cam)
        s.ambient_light((0, 0, 0))
        s.point_light(pos=(0.5, 1.5, 1.5), color=(1, 1, 1))
        s.particles(pf, radius=0.01, color=(0.1, 0.6, 0.9))
        window.get_canvas().scene(s)

    def draw_mesh(window, cam=camera()):
        s = window.get_scene()
        s.set_camera(cam)
        s.point_light(pos=(0, 1, 2), color=(1, 1, 1))
        s.ambient_light((0.5, 0.5, 0.5))
        s.mesh(vf, indices=fi, per_vertex_color=cf, two_sided=True)
        window.get_canvas().scene(s)
    def draw_mpm3d(window, cam=camera()):
        s = window.get_scene()
        s.set_camera(cam)
        s.ambient_light((0, 0, 0))
        s.particles(mf, per_vertex_color=mcf, radius=0.02)
        s.point_light(pos=(0.5, 1.5, 0.5), color=(0.5, 0.5, 0.5))
        s.point_light(pos=(0.5, 1.5, 1.5), color=(0.5, 0.5, 0.5))
        window.get_canvas().scene(s)

    def draw_million(window, cam=camera()):
        s = window.get_scene()
        s.set_camera(cam)
        s.point_light(pos=(0.5, 1.5, 1.5), color=(1, 1, 1))
        s.particles(bf, radius=0.003, color=(0.1, 0.6, 0.9))
        window.get_canvas().scene(s)
    return [("8192 circles 512x512", (512, 512), draw_circles),
            ("20000 particles 1080x720", (1080, 720), draw_particles),
            ("cloth mesh 128x128 768x768", (768, 768), draw_mesh),
            ("mpm3d_ggui render 65536 1080x720", (1080, 720), draw_mpm3d),
            ("1M particles r=0.003 1080x720", (1080, 720), draw_million)]


SCENE_NAMES = ["circles", "particles", "cloth", "mpm3d", "million"]


def measure(backend, frames, which):
    if backend == "vkdiff":
        sys.path.insert(0, os.path.dirname(HERE))
        import vkdiff as ti
    else:
        import taichi as ti
    ti.init(arch=ti.vulkan)
    out = {}
    for name, res, draw in scenes(ti)[which:which + 1]:  # one window per process (Taichi's
        window = ti.ui.Window(name, res, show_window=False)  # GGUI crashes on a second one)
        draw(window)
        window.get_image_buffer_as_numpy()  # warm-up (kernels, pipelines)
        wall = []
        c0 = os.times()
        for _ in range(frames):
            t = time.perf_counter()
            draw(window)
            window.get_image_buffer_as_numpy()
            wall.append(time.perf_counter() - t)
        c1 = os.times()
        cpu = (c1.user + c1.system - c0.user - c0.system) / frames
        out[name] = (float(np.median(wall)) * 1e3, cpu * 1e3)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=10)
    ap.add_argument("--taichi-python", default="/work/venvs/taichi/bin/python")
    ap.add_argument("--worker", default="", help=argparse.SUPPRESS)
    ap.add_argument("--scene", type=int, default=0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print("RESULT " + json.dumps(measure(args.worker, args.frames, args.scene)))
        return
    results = {"vkdiff": {}, "taichi": {}}
    for k in range(len(SCENE_NAMES)):
        for backend, python in (("vkdiff", sys.executable), ("taichi", args.taichi_python)):
            env = dict(os.environ, PYTHONPATH=os.path.dirname(HERE)) if backend == "vkdiff" else None
            p = subprocess.run([python, os.path.abspath(__file__), "--worker", backend,
                                "--frames", str(args.frames), "--scene", str(k)],
                               capture_output=True, text=True, env=env, timeout=1200)
            line = [x for x in p.stdout.splitlines() if x.startswith("RESULT ")]
            if line:
                results[backend].update(json.loads(line[-1][7:]))
            else:
                print(f"{backend} scene {k}: failed (exit {p.returncode})\n{p.stderr[-800:]}")
    print(f"ti.ui frames off-screen, {args.frames} frames each: median wall ms / CPU ms per frame")
    print(f"{'scene':34s} {'vkdiff':>18s} {'Taichi 1.7.4 Vulkan':>22s}")
    for name in dict.fromkeys(list(results["vkdiff"]) + list(results["taichi"])):
        cells = []
        for backend in ("vkdiff", "taichi"):
            r = results[backend].get(name)
            cells.append(f"{r[0]:7.1f} / {r[1]:7.1f}" if r else "-")
        print(f"{name:34s} {cells[0]:>18s} {cells[1]:>22s}")


if __name__ == "__main__":
    main()
