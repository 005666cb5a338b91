#!/usr/bin/env python3
"""Benchmark of `ti.ad.checkpointed` on a diffmpm-style step (tools/programs/diffmpm_step.py):
field memory against the number of steps T, and the time of one forward + backward pass against
the full Tape's. Not a test: it prints.

    PYTHONPATH=. python tools/bench_checkpoint.py [--memory 64,1024,16384] [--time-steps 1024]
        [--repeats 3] [--side 16] [--grid 32]

Memory: the device bytes of the fields (with their gradients) plus the peak of the block's
snapshot and undo buffers (`ti.ad.checkpoint_memory()`), for the window layout under
ti.ad.checkpointed (every = ceil(sqrt T)), and for the full layout (every state kept; its
bytes are computed from the field shapes where T is too long to run). Time: full Tape and
checkpointed, interleaved, `--repeats` runs each after a warm-up: median, min and max. Also
prints the largest gradient difference between the two (0 where the forward pass is
deterministic, e.g. LP_NUM_THREADS=0 on lavapipe)."""
import argparse
import math
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), 'programs'))
import vkdiff as ti  # noqa: E402
from diffmpm_step import build, field_bytes  # noqa: E402


def memory(T, args):
    ti.init()
    prog = build(T, 'window', args.side, args.grid)
    ti.ad.checkpoint.reset_peak()
    t0 = time.perf_counter()
    loss, g = prog.forward_backward()
    el = time.perf_counter() - t0
    fb = field_bytes(prog.fields)
    ck = ti.ad.checkpoint_memory()['peak']
    # the full layout's fields: T + 1 states of x, v, C, F (with gradients) instead of 2
    n = args.side ** 2
    state = n * (2 + 2 + 4 + 4) * 4 * 2   # x, v, C, F, f32, and their gradients
    full = fb + (T + 1 - 2) * state
    return dict(T=T, every=prog.block.every, fields=fb, checkpoint=ck, total=fb + ck,
                full=full, seconds=el, loss=loss)


def timing(T, args):
    out = {'full': [], 'checkpointed': []}
    grads = {}
    # each layout needs its own ti.init (and build): whole runs alternate, each after a warm-up
    for r in range(args.repeats):
        for name, layout in (('full', 'full'), ('checkpointed', 'window')):
            ti.init()
            prog = build(T, layout, args.side, args.grid)
            prog.forward_backward()       # compile, warm up
            t0 = time.perf_counter()
            loss, g = prog.forward_backward()
            out[name].append(time.perf_counter() - t0)
            grads[name] = (loss, g)
    return out, grads


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--memory', default='64,1024,16384')
    p.add_argument('--time-steps', type=int, default=1024)
    p.add_argument('--repeats', type=int, default=3)
    p.add_argument('--side', type=int, default=16, help='particles per side (side^2 particles)')
    p.add_argument('--grid', type=int, default=32)
    args = p.parse_args(argv)
    ti.init()
    print(f'vkdiff on {ti.device_name()}: diffmpm-style step, {args.side ** 2} particles, '
          f'{args.grid}^2 grid; LP_NUM_THREADS={os.environ.get("LP_NUM_THREADS", "unset")}; '
          f'load {os.getloadavg()[0]:.1f}', flush=True)
    rows = []
    if args.memory:
        print(f'{"T":>6} {"every":>5} {"fields B":>10} {"ckpt peak B":>12} {"total B":>10} '
              f'{"full Tape B":>12} {"total/sqrt(T)":>13} {"s":>7}')
        for T in map(int, args.memory.split(',')):
            r = memory(T, args)
            rows.append(r)
            print(f'{T:>6} {r["every"]:>5} {r["fields"]:>10} {r["checkpoint"]:>12} '
                  f'{r["total"]:>10} {r["full"]:>12} {r["total"] / math.sqrt(T):>13.0f} '
                  f'{r["seconds"]:>7.2f}', flush=True)
    if args.time_steps:
        T = args.time_steps
        out, grads = timing(T, args)
        for name, ts in out.items():
            print(f'T={T} {name:>12}: median {statistics.median(ts):.3f} s  '
                  f'(min {min(ts):.3f}, max {max(ts):.3f}, {len(ts)} runs)')
        ratio = statistics.median(out['checkpointed']) / statistics.median(out['full'])
        lo = min(out['checkpointed']) / max(out['full'])
        hi = max(out['checkpointed']) / min(out['full'])
        (la, ga), (lb, gb) = grads['full'], grads['checkpointed']
        diff = np.abs(ga - gb).max() / max(np.abs(ga).max(), 1e-30)
        print(f'checkpointed / full: {ratio:.2f}x (range {lo:.2f}-{hi:.2f}); loss {la!r} vs '
              f'{lb!r}; largest relative gradient difference {diff:.1e}')
    return rows


if __name__ == '__main__':
    main()
