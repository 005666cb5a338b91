#!/usr/bin/env python3
"""Field memory and host access, unified memory against a staging copy (issue 13 item 3), side by
side in one run: the same program with ti.init() (one mapped device-local buffer per field where
the device has unified memory) and ti.init(disable_features=['unified_memory']) (a device buffer
plus a staging copy: the path every device took before). Rounds alternate the two so machine
load drifts alike; each figure is the median over rounds of the median per call.

    PYTHONPATH=. .venv/bin/python tools/bench_field_memory.py [--n 1048576] [--rounds 5] [--reps 20]

Figures: device memory of an n-element f32 field; from_numpy; to_numpy of a field a kernel
wrote (the launch already synced: the cost of getting the data to the host); x[i] read right after
a kernel wrote x (the launch not yet synced: the read's sync included) and x[i] read again
(host copy current); x[i] write; a kernel launch + to_numpy round trip.
"""
import argparse
import statistics
import time

import numpy as np

import vkdiff as ti

MODES = {'unified': [], 'staged': ['unified_memory']}


def measure(mode, n, reps):
    ti.init(disable_features=MODES[mode])
    from vkdiff.lang import state
    rt = state.runtime()
    if mode == 'unified' and not rt.features.get('unified_memory'):
        raise SystemExit(f'{rt.name} has no unified memory: nothing to compare')
    x = ti.field(ti.f32, shape=n)

    @ti.kernel
    def bump():
        for i in x:
            x[i] += 1.0

    a = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    x.from_numpy(a)
    bump()
    x.to_numpy()  # compiled, allocated, synced
    out = {'device MiB per field': x.storage.buf.allocated_bytes / 2**20}
    t = {k: [] for k in ('from_numpy ms', 'to_numpy after a launch ms', 'x[i] read, launch '
                         'pending us', 'x[i] read again us', 'x[i] write us',
                         'launch + sync ms', 'launch + to_numpy ms')}
    pc = time.perf_counter
    for _ in range(reps):
        t0 = pc(); x.from_numpy(a); t1 = pc()
        t['from_numpy ms'].append((t1 - t0) * 1e3)
        bump(); ti.sync()
        t0 = pc(); x.to_numpy(); t1 = pc()
        t['to_numpy after a launch ms'].append((t1 - t0) * 1e3)
        bump()
        t0 = pc(); x[5]; t1 = pc(); x[6]; t2 = pc()
        t['x[i] read, launch pending us'].append((t1 - t0) * 1e6)
        t['x[i] read again us'].append((t2 - t1) * 1e6)
        t0 = pc(); x[7] = 1.0; t1 = pc()
        t['x[i] write us'].append((t1 - t0) * 1e6)
        t0 = pc(); bump(); ti.sync(); t1 = pc()
        t['launch + sync ms'].append((t1 - t0) * 1e3)
        t0 = pc(); bump(); x.to_numpy(); t1 = pc()
        t['launch + to_numpy ms'].append((t1 - t0) * 1e3)
    out.update({k: statistics.median(v) for k, v in t.items()})
    name = rt.name
    ti.reset()
    return name, out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--n', type=int, default=1 << 20)
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--reps', type=int, default=20)
    args = ap.parse_args()
    runs = {m: [] for m in MODES}
    for _ in range(args.rounds):
        for m in MODES:
            device, r = measure(m, args.n, args.reps)
            runs[m].append(r)
    print(f'{device}, f32 field of {args.n} elements, {args.rounds} rounds x {args.reps} reps '
          '(median)')
    print(f'{"":32} {"unified":>10} {"staged":>10} {"staged/unified":>15}')
    for k in runs['unified'][0]:
        u = statistics.median(r[k] for r in runs['unified'])
        s = statistics.median(r[k] for r in runs['staged'])
        print(f'{k:32} {u:10.3f} {s:10.3f} {s / u if u else float("inf"):15.2f}')


if __name__ == '__main__':
    main()
