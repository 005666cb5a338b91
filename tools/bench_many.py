"""Benchmark: many simulations at once (issue 25). Two tables, measured in one run:

1. Batched environments on one device: environment-steps per second (forward + backward, one
   Tape) against B, beside B separate runs of the same simulation with B = 1 (examples/
   batched_billiards.py).
2. A sweep through vkdiff.distributed.Pool: configurations per second against the number of
   workers, beside the serial loop in this process.

Each figure is the median of --repeat runs, with the min-max spread. It prints the machine's load
average at the start (a quiet machine: below 1.0).

    .venv/bin/python tools/bench_many.py [--steps 60] [--repeat 3] [--batches 1,4,16,64]
"""
import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / 'tests' / 'distributed'))

import vkdiff as ti  # noqa: E402


def _load_example():
    spec = importlib.util.spec_from_file_location('batched_billiards',
                                                  ROOT / 'examples' / 'batched_billiards.py')
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _median(xs):
    return statistics.median(xs), min(xs), max(xs)


def batched_table(bb, batches, steps, repeat):
    print(f'\n1. batched environments, {steps} steps, forward + backward (one Tape)')
    print(f'{"B":>5} {"env-steps/s batched":>26} {"env-steps/s, B runs of B=1":>30} {"ratio":>7}')
    single = bb.BatchedBilliards(1, steps)
    single.forward_backward()  # compiled
    for B in batches:
        sim = bb.BatchedBilliards(B, steps)
        sim.forward_backward()
        tb, ts = [], []
        for _ in range(repeat):  # interleaved: batched, then B separate runs
            t0 = time.perf_counter()
            sim.forward_backward()
            tb.append(B * steps / (time.perf_counter() - t0))
            t0 = time.perf_counter()
            for _ in range(B):
                single.forward_backward()
            ts.append(B * steps / (time.perf_counter() - t0))
        (mb, lb, hb), (ms, ls, hs) = _median(tb), _median(ts)
        print(f'{B:>5} {mb:>12.0f} ({lb:.0f}-{hb:.0f}) {ms:>16.0f} ({ls:.0f}-{hs:.0f}) '
              f'{mb / ms:>7.2f}')


def sweep_table(worker_counts, configs, repeat):
    import sweep_tasks  # noqa: PLC0415
    from vkdiff.distributed import Pool  # noqa: PLC0415
    print(f'\n2. a sweep of {len(configs)} configurations (tests/distributed/sweep_tasks.projectile)')
    print(f'{"workers":>8} {"configs/s":>22}   (start-up, s)')
    ts = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for c in configs:
            sweep_tasks.projectile(c)
        ts.append(len(configs) / (time.perf_counter() - t0))
    m, lo, hi = _median(ts)
    print(f'{"serial":>8} {m:>10.2f} ({lo:.2f}-{hi:.2f})')
    for w in worker_counts:
        t0 = time.perf_counter()
        with Pool(workers=w) as pool:
            pool.map(sweep_tasks.projectile, configs[:w])  # every worker up and compiled
            start = time.perf_counter() - t0
            ts = []
            for _ in range(repeat):
                t0 = time.perf_counter()
                pool.map(sweep_tasks.projectile, configs)
                ts.append(len(configs) / (time.perf_counter() - t0))
        m, lo, hi = _median(ts)
        print(f'{w:>8} {m:>10.2f} ({lo:.2f}-{hi:.2f})   ({start:.1f})')


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--steps', type=int, default=60)
    p.add_argument('--repeat', type=int, default=3)
    p.add_argument('--batches', default='1,4,16,64')
    p.add_argument('--workers', default='1,2')
    p.add_argument('--configs', type=int, default=8)
    args = p.parse_args()
    print(f'load average at start: {os.getloadavg()[0]:.2f} (quiet: below 1.0); '
          f'{os.cpu_count()} cores; LP_NUM_THREADS={os.environ.get("LP_NUM_THREADS", "unset")}')
    ti.init()
    print(f'device: {ti.device_name()}')
    batched_table(_load_example(), [int(b) for b in args.batches.split(',')], args.steps,
                  args.repeat)
    configs = [(3.0 + 0.25 * k, 0.6 + 0.05 * k, 0.02 * (k % 3)) for k in range(args.configs)]
    sweep_table([int(w) for w in args.workers.split(',')], configs, args.repeat)


if __name__ == '__main__':
    main()
