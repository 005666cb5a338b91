#!/usr/bin/env python3
"""AoS against SoA on a particle update, vkdiff vs Taichi 1.7.4 Vulkan, same device, one run.

    .venv/bin/python tools/bench_layout.py [--n 1000000] [--steps 50] [--repeat 3]
                                           [--taichi-python /work/venvs/taichi/bin/python]

The particle update (`x += v * dt; v += g * dt`, then a bounce at the floor) on N particles with
vec3 x and v, declared as Taichi users choose their layout:
- AoS: `ti.root.dense(ti.i, N).place(x, v)`: x and v of a particle side by side in Taichi;
- SoA: `ti.root.dense(ti.i, N).place(x)` and `ti.root.dense(ti.i, N).place(v)`: two arrays;
- time-major: DiffTaichi's `ti.root.dense(ti.l, 2).dense(ti.i, N).place(x, v)`, the step
  reading slot t and writing slot 1 - t (the nesting order decides the element order).
Each layout runs in a fresh subprocess per backend; the time is the median of the timed steps
(each one launch plus a sync), after warm-up steps. vkdiff keeps each field in its own buffer
(lang/layout.py), so its AoS and SoA store the same bytes; Taichi interleaves AoS per cell.
On a shared machine the numbers are noisy: compare within one run.
"""
import argparse
import json
import os
import statistics
import sys
import tempfile

from taichi_harness import DEFAULT_TAICHI_PYTHON, ROOT, run_worker

WORKER = r'''
import json, sys, time
backend, layout, n, steps = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
if backend == 'vkdiff':
    import vkdiff as ti
    ti.init()
else:
    import taichi as ti
    ti.init(arch=ti.vulkan, offline_cache=False)
x = ti.Vector.field(3, ti.f32)
v = ti.Vector.field(3, ti.f32)
if layout == 'aos':
    ti.root.dense(ti.i, n).place(x, v)
elif layout == 'soa':
    ti.root.dense(ti.i, n).place(x)
    ti.root.dense(ti.i, n).place(v)
else:
    ti.root.dense(ti.l, 2).dense(ti.i, n).place(x, v)
dt, g = 1e-3, ti.Vector([0.0, -9.8, 0.0])

@ti.kernel
def init():
    for i in range(n):
        x[i] = ti.Vector([ti.random(), ti.random() + 1.0, ti.random()]) if ti.static(layout != 'time') else x[i]
        v[i] = ti.Vector([ti.random(), 0.0, ti.random()]) if ti.static(layout != 'time') else v[i]

@ti.kernel
def init_time():
    for i in range(n):
        x[i, 0] = ti.Vector([ti.random(), ti.random() + 1.0, ti.random()])
        v[i, 0] = ti.Vector([ti.random(), 0.0, ti.random()])

@ti.kernel
def step():
    for i in range(n):
        vi = v[i] + g * dt
        xi = x[i] + vi * dt
        if xi[1] < 0.0:
            xi[1] = -xi[1]
            vi[1] = -vi[1]
        x[i] = xi
        v[i] = vi

@ti.kernel
def step_time(t: ti.i32):
    for i in range(n):
        vi = v[i, t] + g * dt
        xi = x[i, t] + vi * dt
        if xi[1] < 0.0:
            xi[1] = -xi[1]
            vi[1] = -vi[1]
        x[i, 1 - t] = xi
        v[i, 1 - t] = vi

if layout == 'time':
    init_time()
else:
    init()
times = []
for s in range(steps + 5):
    ti.sync()
    t0 = time.perf_counter()
    if layout == 'time':
        step_time(s % 2)
    else:
        step()
    ti.sync()
    if s >= 5:
        times.append(time.perf_counter() - t0)
a = x.to_numpy()
print('RESULT', json.dumps({'times': times, 'check': float(abs(a).sum() / a.size)}))
'''


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--n', type=int, default=1_000_000)
    ap.add_argument('--steps', type=int, default=50)
    ap.add_argument('--repeat', type=int, default=1, help='subprocesses per cell (median)')
    ap.add_argument('--taichi-python', default=DEFAULT_TAICHI_PYTHON)
    args = ap.parse_args()
    have_taichi = os.path.exists(args.taichi_python)
    with tempfile.TemporaryDirectory() as tmp:
        script = os.path.join(tmp, 'worker.py')
        with open(script, 'w') as f:
            f.write(WORKER)
        print(f'particle update, N = {args.n}, vec3 x and v (f32), median step time in ms '
              f'({args.steps} steps, {args.repeat} process(es) each)')
        print(f'{"layout":<12}{"vkdiff":>10}{"Taichi Vulkan":>16}')
        for layout in ('aos', 'soa', 'time'):
            row = []
            for backend, py in (('vkdiff', sys.executable), ('taichi', args.taichi_python)):
                if backend == 'taichi' and not have_taichi:
                    row.append(None)
                    continue
                meds = []
                for _ in range(args.repeat):
                    r = run_worker(py, [script, backend, layout, str(args.n), str(args.steps)],
                                   backend, tmp, 600)
                    line = next((ln for ln in (r.stdout if r else '').splitlines()
                                 if ln.startswith('RESULT ')), None)
                    if line is None:
                        err = (r.stderr.strip().splitlines() or ['?'])[-1] if r else 'timeout'
                        print(f'  {backend} {layout}: failed: {err}')
                        break
                    meds.append(statistics.median(json.loads(line[7:])['times']) * 1e3)
                row.append(statistics.median(meds) if meds else None)
            cells = ''.join(f'{c:>10.2f}' if c is not None else f'{"-":>10}' for c in row[:1])
            cells += f'{row[1]:>16.2f}' if row[1] is not None else f'{"-":>16}'
            print(f'{layout:<12}{cells}', flush=True)


if __name__ == '__main__':
    sys.path.insert(0, ROOT)
    main()
