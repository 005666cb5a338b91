#!/usr/bin/env python3
"""Benchmark: sparse SNodes whose memory follows the active blocks (issue 24, lang/blockpool.py),
vkdiff beside Taichi 1.7.4 CPU (Taichi's Vulkan backend has no sparse SNodes).

1. grid2d: a pointer-over-dense grid over a 4096^2 virtual domain (vec3 f32: 192 MiB dense),
   with 1% and 4% of its blocks active: a struct-for's time, which should follow the active
   cells, and the pool's memory.
2. mpm3d: a 3-D MLS-MPM in taichi_elements' style: a pointer grid over a 1024^3 virtual domain
   (pointer 128^3 over dense 8^3: grid_v vec3 + grid_m f32), dense particles, the grid's
   deactivate_all each step; time per step over 50 steps and the pool's memory.

    PYTHONPATH=. python tools/bench_sparse_mpm.py            # vkdiff (default driver) and Taichi CPU
    PYTHONPATH=. python tools/bench_sparse_mpm.py --only vkdiff --particles 100000 --steps 50

Each implementation runs in its own process (`--impl`); Taichi's is /work/venvs/taichi/bin/python
(TAICHI_PYTHON overrides). Times are wall-clock with a sync at the end of each timed region;
the first step (compilation) is reported apart. The runs also print the particles' mean position
after the last step, so the two implementations can be compared."""
import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

TAICHI_PYTHON = os.environ.get('TAICHI_PYTHON', '/work/venvs/taichi/bin/python')


def grid2d(ti, fractions=(0.01, 0.04), repeats=5):
    v = ti.Vector.field(3, ti.f32)
    ptr = ti.root.pointer(ti.ij, 256)
    ptr.dense(ti.ij, 16).place(v)
    cells = ti.field(ti.i32, shape=(256 * 256,))
    out = {}

    @ti.kernel
    def touch(n: ti.i32):
        for b in range(n):
            c = cells[b]
            for k in range(256):
                v[c // 256 * 16 + k // 16, c % 256 * 16 + k % 16] = ti.Vector([1.0, 2.0, 3.0])

    @ti.kernel
    def scale():
        for i, j in v:
            v[i, j] = v[i, j] * 0.5 + 1.0

    rng = np.random.default_rng(0)
    order = rng.permutation(256 * 256).astype(np.int32)
    cells.from_numpy(order)
    for frac in fractions:
        ptr.deactivate_all()
        n = int(256 * 256 * frac)
        touch(n)
        scale()
        ti.sync()
        t0 = time.perf_counter()
        for _ in range(repeats):
            scale()
        ti.sync()
        out[f'struct_for_ms_{frac:g}'] = (time.perf_counter() - t0) / repeats * 1e3
        out[f'active_blocks_{frac:g}'] = n
        out.update(_memory(ti, f'grid2d_{frac:g}'))
    return out


def mpm3d(ti, n_particles, steps):
    dim, n_grid = 3, 1024
    dx = 1.0 / n_grid
    inv_dx = float(n_grid)
    dt = 2e-5
    p_vol = (dx * 0.5) ** 3
    p_rho = 1.0
    p_mass = p_vol * p_rho
    E = 400.0
    x = ti.Vector.field(dim, ti.f32, shape=n_particles)
    v = ti.Vector.field(dim, ti.f32, shape=n_particles)
    C = ti.Matrix.field(dim, dim, ti.f32, shape=n_particles)
    J = ti.field(ti.f32, shape=n_particles)
    grid_v = ti.Vector.field(dim, ti.f32)
    grid_m = ti.field(ti.f32)
    grid = ti.root.pointer(ti.ijk, n_grid // 8)
    grid.dense(ti.ijk, 8).place(grid_v, grid_m)

    @ti.kernel
    def init(side: ti.f32):
        for p in x:
            x[p] = ti.Vector([ti.random() * side + 0.5 - side / 2 for _ in ti.static(range(3))])
            v[p] = ti.Vector([0.0, -1.0, 0.0])
            J[p] = 1.0
            C[p] = ti.Matrix.zero(ti.f32, 3, 3)

    @ti.kernel
    def p2g():
        for p in x:
            Xp = x[p] * inv_dx
            base = int(Xp - 0.5)
            fx = Xp - base
            w = [0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1) ** 2, 0.5 * (fx - 0.5) ** 2]
            stress = -dt * 4 * E * p_vol * (J[p] - 1) * inv_dx * inv_dx
            affine = ti.Matrix.identity(ti.f32, 3) * stress + p_mass * C[p]
            for i, j, k in ti.static(ti.ndrange(3, 3, 3)):
                offset = ti.Vector([i, j, k])
                dpos = (offset - fx) * dx
                weight = w[i][0] * w[j][1] * w[k][2]
                grid_v[base + offset] += weight * (p_mass * v[p] + affine @ dpos)
                grid_m[base + offset] += weight * p_mass

    @ti.kernel
    def grid_op():
        for I in ti.grouped(grid_m):
            if grid_m[I] > 0:
                gv = grid_v[I] / grid_m[I]
                gv[1] -= dt * 9.8
                grid_v[I] = gv

    @ti.kernel
    def g2p():
        for p in x:
            Xp = x[p] * inv_dx
            base = int(Xp - 0.5)
            fx = Xp - base
            w = [0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1) ** 2, 0.5 * (fx - 0.5) ** 2]
            new_v = ti.Vector.zero(ti.f32, 3)
            new_C = ti.Matrix.zero(ti.f32, 3, 3)
            for i, j, k in ti.static(ti.ndrange(3, 3, 3)):
                offset = ti.Vector([i, j, k])
                dpos = (offset - fx) * dx
                weight = w[i][0] * w[j][1] * w[k][2]
                g_v = grid_v[base + offset]
                new_v += weight * g_v
                new_C += 4 * weight * g_v.outer_product(dpos) * inv_dx * inv_dx
            v[p] = new_v
            x[p] += dt * v[p]
            J[p] *= 1 + dt * new_C.trace()
            C[p] = new_C

    def step():
        grid.deactivate_all()
        p2g()
        grid_op()
        g2p()

    side = (n_particles / 4.0) ** (1 / 3) * dx  # about 4 particles per cell
    init(side)
    t0 = time.perf_counter()
    step()
    ti.sync()
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(steps - 1):
        step()
    ti.sync()
    per = (time.perf_counter() - t0) / max(1, steps - 1)
    xs = x.to_numpy()
    out = {'first_step_s': first, 'step_ms': per * 1e3, 'particles': n_particles,
           'steps': steps, 'mean_x': xs.mean(0).tolist(), 'finite': bool(np.isfinite(xs).all())}
    out.update(_memory(ti, 'mpm3d'))
    return out


def _memory(ti, tag):
    info = getattr(ti.profiler, 'memory_profiler_info', None)
    if info is None:
        return {}
    return {f'{tag}_{k}': v for k, v in
            zip(('reserved_MiB', 'in_use_MiB'), (sum(r for r, _ in info().values()) / 2**20,
                                                 sum(u for _, u in info().values()) / 2**20))}


def run_impl(impl, a):
    if impl == 'vkdiff':
        import vkdiff as ti
        ti.init(arch=ti.vulkan)
    else:
        import taichi as ti
        ti.init(arch=ti.cpu, device_memory_GB=2)
    out = {'impl': impl}
    if 'grid2d' in a.cases:
        out.update(grid2d(ti))
    if 'mpm3d' in a.cases:
        ti.reset() if impl == 'taichi-cpu' else ti.init(arch=ti.vulkan)
        if impl == 'taichi-cpu':
            ti.init(arch=ti.cpu, device_memory_GB=2)
        out.update(mpm3d(ti, a.particles, a.steps))
    print('RESULT ' + json.dumps(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--impl', choices=['vkdiff', 'taichi-cpu'])
    ap.add_argument('--only', choices=['vkdiff', 'taichi-cpu'])
    ap.add_argument('--particles', type=int, default=100000)
    ap.add_argument('--steps', type=int, default=50)
    ap.add_argument('--cases', default='grid2d,mpm3d')
    a = ap.parse_args()
    a.cases = a.cases.split(',')
    if a.impl:
        return run_impl(a.impl, a)
    impls = [a.only] if a.only else ['vkdiff', 'taichi-cpu']
    for impl in impls:
        py = sys.executable if impl == 'vkdiff' else TAICHI_PYTHON
        cmd = [py, os.path.abspath(__file__), '--impl', impl, '--particles', str(a.particles),
               '--steps', str(a.steps), '--cases', ','.join(a.cases)]
        r = subprocess.run(cmd, capture_output=True, text=True)
        line = [l for l in r.stdout.splitlines() if l.startswith('RESULT ')]
        if r.returncode or not line:
            print(f'{impl}: failed\n{r.stderr[-3000:]}')
            continue
        res = json.loads(line[-1][7:])
        print(f'{impl}:')
        for k, v in res.items():
            print(f'  {k}: {v:.4g}' if isinstance(v, float) else f'  {k}: {v}')


if __name__ == '__main__':
    main()
