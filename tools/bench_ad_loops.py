"""Benchmark: reverse mode of inner accumulation loops (`s += f(x, k)`), with vkdiff's stack-free
adjoint and with the detection turned off (every carried local stored per iteration, as a
generic AD stack would). Prints per-thread storage and adjoint time side by side.

    .venv/bin/python tools/bench_ad_loops.py [--n 65536] [--trips 64 256 1024]
"""
import argparse
import json
import os
import subprocess
import sys

CHILD = r'''
import json, sys, time
import numpy as np
import vkdiff as ti
n, trips = int(sys.argv[1]), int(sys.argv[2])
ti.init()
x = ti.field(ti.f32, shape=n, needs_grad=True)
loss = ti.field(ti.f32, shape=(), needs_grad=True)

@ti.kernel
def f():
    for i in x:
        s = 0.0
        for k in range(trips):
            s += ti.sin(x[i] * k * 0.01)
        loss[None] += s

x.from_numpy(np.linspace(0, 1, n).astype(np.float32))
with ti.Tape(loss):
    f()
k = np.arange(trips) * 0.01
ref = (np.cos(x.to_numpy()[:, None].astype(np.float64) * k) * k).sum(1)
err = float(np.abs(x.grad.to_numpy() - ref).max() / np.abs(ref).max())
reps = 5
t = time.perf_counter()
for _ in range(reps):
    f.grad()
ti.sync()
dt = (time.perf_counter() - t) / reps
ir = f.grad.ir()
stack = sum(int(l.split("size=")[1].split("]")[0].split()[0]) * 4
            for l in ir.splitlines() if "size=" in l)
print(json.dumps({"ms": dt * 1e3, "stack_bytes": stack, "err": err}))
'''


def run(n, trips, accumulators):
    env = dict(os.environ, VKDIFF_AD_ACCUMULATORS='1' if accumulators else '0')
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.py', delete=False) as fh:
        fh.write(CHILD)  # kernels need a source file
    out = subprocess.run([sys.executable, fh.name, str(n), str(trips)], env=env,
                         capture_output=True, text=True)
    os.unlink(fh.name)
    if out.returncode != 0:
        print(out.stderr.strip().splitlines()[-1], file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--n', type=int, default=65536)
    ap.add_argument('--trips', type=int, nargs='+', default=[64, 256, 1024])
    a = ap.parse_args()
    print(f'adjoint of `for k in range(trips): s += sin(x[i]*k*0.01)` over n = {a.n} threads')
    print(f'{"trips":>6} | {"stack-free: ms":>15} {"bytes/thread":>13} | '
          f'{"stored: ms":>11} {"bytes/thread":>13} | {"speed-up":>8} {"max rel err":>11}')
    for trips in a.trips:
        fast, slow = run(a.n, trips, True), run(a.n, trips, False)
        s_ms = f'{slow["ms"]:11.2f}' if slow else '     failed'
        s_b = f'{slow["stack_bytes"]:13d}' if slow else ' ' * 13
        speed = f'{slow["ms"] / fast["ms"]:7.1f}x' if slow else '       -'
        print(f'{trips:6d} | {fast["ms"]:15.2f} {fast["stack_bytes"]:13d} | {s_ms} {s_b} | '
              f'{speed} {fast["err"]:11.1e}')


if __name__ == '__main__':
    main()
