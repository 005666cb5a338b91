#!/usr/bin/env python3
"""Launch cost of a tiny kernel taking an ndarray argument against the same kernel on a field
(issue 12): microseconds of CPU time (this process, lavapipe's threads included: steadier than
wall time on a shared machine) per launch over N launches (best of R rounds, no sync inside a
round), and the cost of the first launch with a new set of arrays (a fresh ndarray each time).

    PYTHONPATH=. .venv/bin/python tools/bench_ndarray_launch.py [--n 2000] [--rounds 5]
        [--profile]   # cProfile of the ndarray launches, top 25 by own time
        [--stub]      # Runtime.dispatch a no-op: the Python cost of a launch alone
                      # (lavapipe's recording and execution left out)
"""
import argparse
import time

import numpy as np

import vkdiff as ti


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--n', type=int, default=2000)
    ap.add_argument('--rounds', type=int, default=5)
    ap.add_argument('--fresh', type=int, default=50, help='launches with a new ndarray each')
    ap.add_argument('--profile', action='store_true')
    ap.add_argument('--stub', action='store_true')
    a = ap.parse_args()
    ti.init()
    f = ti.field(ti.f32, shape=16)

    @ti.kernel
    def on_field(c: ti.f32):
        for i in f:
            f[i] += c

    @ti.kernel
    def on_array(x: ti.types.ndarray(), c: ti.f32):
        for i in x:
            x[i] += c

    x = ti.ndarray(ti.f32, 16)
    h = np.zeros(16, np.float32)

    def run(fn, *args):
        best = float('inf')
        for _ in range(a.rounds):
            ti.sync()
            t0 = time.process_time()
            for _ in range(a.n):
                fn(*args)
            ti.sync()
            best = min(best, time.process_time() - t0)
        return best / a.n * 1e6

    on_field(1.0), on_array(x, 1.0), ti.sync()  # compile
    if a.stub:
        from vkdiff.lang import state
        state.runtime().dispatch = lambda algo, groups, push, reads, writes: None
    if a.profile:
        import cProfile
        import pstats
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(a.n):
            on_array(x, 1.0)
        ti.sync()
        pr.disable()
        pstats.Stats(pr).sort_stats('tottime').print_stats(25)
        return
    tf = run(on_field, 1.0)
    ta = run(on_array, x, 1.0)
    on_array(h, 1.0)
    th = run(on_array, h, 1.0)
    keep = [ti.ndarray(ti.f32, 16) for _ in range(a.fresh)]
    for y in keep:
        y.storage  # (allocated first: the launch's own cost is measured)
    ti.sync()
    t0 = time.process_time()
    for y in keep:
        on_array(y, 1.0)
    ti.sync()
    tn = (time.process_time() - t0) / a.fresh * 1e6
    assert a.stub or (f[3] > 0 and x[3] > 0 and h[3] > 0 and keep[0][3] == 1.0)
    print(f'CPU time: field {tf:.1f} us/launch; ndarray {ta:.1f} us ({ta / tf:.2f}x); numpy array '
          f'{th:.1f} us ({th / tf:.2f}x); a new ndarray each launch {tn:.0f} us '
          f'({a.n} launches, best of {a.rounds}; {a.fresh} new arrays'
          f'{"; dispatch stubbed" if a.stub else ""})')


if __name__ == '__main__':
    main()
