#!/usr/bin/env python3
"""The cost of vkdiff's own accurate f32 math (ti.init(fast_math=False)) against the driver's
(fast_math=True, the default) on the elementwise workload y[i] = sin(x[i]) * x[i] (and, with
--ops, other ops in its place): milliseconds per launch (best of R rounds of N launches, synced
once per round) and the slowdown, plus the first launch (compilation included, SPIR-V cache
off). Each mode runs in its own process (ti.init resets); run it once per driver:

    PYTHONPATH=. .venv/bin/python tools/bench_fast_math.py [--n 1048576] [--launches 20]
        [--rounds 5] [--ops sin,exp,log,div,sqrt,pow]
    VK_ICD_FILENAMES=.../vk_swiftshader_icd.json PYTHONPATH=. .venv/bin/python tools/bench_fast_math.py
"""
import argparse
import json
import os
import subprocess
import sys
import time

EXPR = {'sin': 'ti.sin(v) * v', 'cos': 'ti.cos(v) * v', 'tan': 'ti.tan(v) * v',
        'exp': 'ti.exp(v) * v', 'log': 'ti.log(v) * v', 'div': '1.0 / v * v',
        'sqrt': 'ti.sqrt(v) * v', 'pow': 'ti.pow(v, 1.5) * v', 'atan2': 'ti.atan2(v, 2.0) * v',
        'tanh': 'ti.tanh(v) * v'}


def child(op, fast, n, launches, rounds):
    import numpy as np
    import vkdiff as ti
    ti.init(fast_math=fast)
    x = ti.field(ti.f32, n)
    y = ti.field(ti.f32, n)
    x.from_numpy(np.random.default_rng(0).uniform(0.01, 10, n).astype(np.float32))

    @ti.kernel
    def k():
        for i in x:
            v = x[i]
            if ti.static(op == 'sin'):
                y[i] = ti.sin(v) * v
            elif ti.static(op == 'cos'):
                y[i] = ti.cos(v) * v
            elif ti.static(op == 'tan'):
                y[i] = ti.tan(v) * v
            elif ti.static(op == 'exp'):
                y[i] = ti.exp(v) * v
            elif ti.static(op == 'log'):
                y[i] = ti.log(v) * v
            elif ti.static(op == 'div'):
                y[i] = 1.0 / v * v
            elif ti.static(op == 'sqrt'):
                y[i] = ti.sqrt(v) * v
            elif ti.static(op == 'pow'):
                y[i] = ti.pow(v, 1.5) * v
            elif ti.static(op == 'atan2'):
                y[i] = ti.atan2(v, 2.0) * v
            else:
                y[i] = ti.tanh(v) * v
    t = time.perf_counter()
    k()
    ti.sync()
    first = time.perf_counter() - t
    best = float('inf')
    for _ in range(rounds):
        t = time.perf_counter()
        for _ in range(launches):
            k()
        ti.sync()
        best = min(best, (time.perf_counter() - t) / launches)
    return {'first_s': first, 'ms': best * 1e3}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--n', type=int, default=1 << 20)
    ap.add_argument('--launches', type=int, default=20)
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--ops', default='sin')
    ap.add_argument('--child', help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        op, fast = a.child.split(':')
        print(json.dumps(child(op, fast == 'fast', a.n, a.launches, a.rounds)))
        return
    os.environ['VKDIFF_PRECISION_WARNING'] = '0'
    env = dict(os.environ, VKDIFF_CACHE='0')
    import vkdiff as ti
    ti.init()
    print(f'device: {ti.device_name()}; n = {a.n}, '
          f'best of {a.rounds} rounds of {a.launches} launches')
    print(f'{"workload":22s} {"driver ms":>10s} {"accurate ms":>12s} {"slowdown":>9s} '
          f'{"first launch (driver / accurate)":>34s}')
    for op in a.ops.split(','):
        r = {}
        for mode in ('fast', 'accurate'):
            out = subprocess.run([sys.executable, __file__, '--child', f'{op}:{mode}', '--n',
                                  str(a.n), '--launches', str(a.launches), '--rounds',
                                  str(a.rounds)], env=env, capture_output=True, text=True,
                                 timeout=600)
            if out.returncode:
                sys.exit(out.stderr)
            r[mode] = json.loads(out.stdout.strip().splitlines()[-1])
        print(f'{"y = " + EXPR[op].replace("v", "x"):22s} {r["fast"]["ms"]:10.2f} '
              f'{r["accurate"]["ms"]:12.2f} {r["accurate"]["ms"] / r["fast"]["ms"]:8.2f}x '
              f'{r["fast"]["first_s"]:16.2f} s / {r["accurate"]["first_s"]:.2f} s')


if __name__ == '__main__':
    main()
