#!/usr/bin/env python3
"""ti.algorithms against Taichi 1.7.4 on the CPU (arch=ti.cpu), in the same run: the scan
(PrefixSumExecutor.run, i32) and the sort (parallel_sort, i32 keys with i32 values).

Taichi's CPU backend has no PrefixSumExecutor (it raises "Arch.x64 is not supported for prefix
sum"), so its scan column is the serial Taichi CPU kernel `for i in range(1, n): a[i] += a[i-1]`
under ti.loop_config(serialize=True); numpy.cumsum / numpy.argsort(kind='stable') are printed
too. (Taichi's Vulkan scan is left out: on lavapipe it returns wrong sums.) Taichi runs in a
worker process (its own interpreter, --taichi-python); each repeat times vkdiff then Taichi for
every size, interleaved, each after an untimed warm-up; the data are refilled before each
timed call; timings are from the call to a synced result. Prints the median and the spread
(min..max) in milliseconds, and vkdiff's median over Taichi's.

    PYTHONPATH=. .venv/bin/python tools/bench_algorithms.py [--sizes 65536,1048576] [--repeats 5]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

TAICHI_PYTHON = '/work/venvs/taichi/bin/python'

WORKER = r'''
import sys, time, json
import numpy as np
import taichi as ti
ti.init(arch=ti.cpu, offline_cache=False)
made = {}

def setup(n):
    if n not in made:
        a, b = ti.field(ti.i32, n), ti.field(ti.i32, n)
        @ti.kernel
        def serial_scan(a: ti.template(), n: ti.i32):
            ti.loop_config(serialize=True)
            for i in range(1, n):
                a[i] += a[i - 1]
        made[n] = (a, b, serial_scan)
    return made[n]

for line in sys.stdin:
    op, n, seed = line.split()
    n, seed = int(n), int(seed)
    a, b, serial_scan = setup(n)
    x = np.random.default_rng(seed).integers(0, 1000, n).astype(np.int32)
    a.from_numpy(x); b.from_numpy(np.arange(n, dtype=np.int32)); ti.sync()
    t0 = time.perf_counter()
    if op == 'scan':
        serial_scan(a, n)
    else:
        ti.algorithms.parallel_sort(a, b)
    ti.sync()
    t = time.perf_counter() - t0
    got = a.to_numpy()
    ok = bool((got == (np.cumsum(x, dtype=np.int32) if op == 'scan' else np.sort(x))).all())
    print('RESULT', json.dumps([t, ok]), flush=True)
'''


class TaichiWorker:
    def __init__(self, python):
        # a file, not -c: Taichi reads its kernels' source back from the file
        self.dir = tempfile.TemporaryDirectory()
        path = os.path.join(self.dir.name, 'taichi_algorithms_worker.py')
        with open(path, 'w') as f:
            f.write(WORKER)
        self.p = subprocess.Popen([python, path], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True)

    def run(self, op, n, seed):
        self.p.stdin.write(f'{op} {n} {seed}\n')
        self.p.stdin.flush()
        line = ''
        while not line.startswith('RESULT '):  # (Taichi prints its banner on stdout)
            line = self.p.stdout.readline()
            if not line:
                raise RuntimeError('the Taichi worker stopped')
        t, ok = json.loads(line[len('RESULT '):])
        if not ok:
            raise RuntimeError(f'Taichi CPU {op} of {n} gave a wrong result')
        return t

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=60)
        self.dir.cleanup()


class Vkdiff:
    def __init__(self):
        import vkdiff as ti
        ti.init()
        self.ti, self.made = ti, {}

    def run(self, op, n, seed):
        ti = self.ti
        if n not in self.made:
            self.made[n] = (ti.field(ti.i32, n), ti.field(ti.i32, n),
                            ti.algorithms.PrefixSumExecutor(n))
        a, b, ex = self.made[n]
        x = np.random.default_rng(seed).integers(0, 1000, n).astype(np.int32)
        a.from_numpy(x)
        b.from_numpy(np.arange(n, dtype=np.int32))
        ti.sync()
        t0 = time.perf_counter()
        if op == 'scan':
            ex.run(a)
        else:
            ti.algorithms.parallel_sort(a, b)
        ti.sync()
        t = time.perf_counter() - t0
        want = np.cumsum(x, dtype=np.int32) if op == 'scan' else np.sort(x)
        if not (a.to_numpy() == want).all():
            raise RuntimeError(f'vkdiff {op} of {n} gave a wrong result')
        return t


def numpy_time(op, n, seed):
    x = np.random.default_rng(seed).integers(0, 1000, n).astype(np.int32)
    t0 = time.perf_counter()
    np.cumsum(x) if op == 'scan' else np.argsort(x, kind='stable')
    return time.perf_counter() - t0


def fmt(ts):
    ms = [t * 1e3 for t in ts]
    return f'{statistics.median(ms):9.2f} ({min(ms):.2f}..{max(ms):.2f})'


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--sizes', default='65536,1048576')
    ap.add_argument('--repeats', type=int, default=5)
    ap.add_argument('--taichi-python', default=TAICHI_PYTHON)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(',')]
    if not os.path.exists(args.taichi_python):
        sys.exit(f'no Taichi interpreter at {args.taichi_python} (--taichi-python)')
    vk, tc = Vkdiff(), TaichiWorker(args.taichi_python)
    times = {}
    try:
        for op in ('scan', 'sort'):
            for n in sizes:  # warm-up: compile both sides
                vk.run(op, n, 0), tc.run(op, n, 0)
        for r in range(args.repeats):
            for op in ('scan', 'sort'):
                for n in sizes:
                    for name, fn in (('vkdiff', vk.run), ('taichi_cpu', tc.run),
                                     ('numpy', numpy_time)):
                        times.setdefault((op, n, name), []).append(fn(op, n, r + 1))
    finally:
        tc.close()
    print(f'ti.algorithms, {args.repeats} repeats, ms: median (min..max); device: '
          f'{vk.ti.device_name()}; load {os.getloadavg()[0]:.1f}')
    print(f'{"op":5} {"n":>8}  {"vkdiff":>22}  {"taichi cpu":>22}  {"numpy":>22}  vk/taichi')
    for op in ('scan', 'sort'):
        for n in sizes:
            v, t, p = (times[(op, n, k)] for k in ('vkdiff', 'taichi_cpu', 'numpy'))
            print(f'{op:5} {n:8d}  {fmt(v):>22}  {fmt(t):>22}  {fmt(p):>22}  '
                  f'{statistics.median(v) / statistics.median(t):8.2f}')
    print('taichi cpu scan: a serial kernel (Taichi has no CPU PrefixSumExecutor); sort: '
          'parallel_sort on both sides, numpy: argsort(kind="stable")')


if __name__ == '__main__':
    main()
