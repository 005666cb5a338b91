#!/usr/bin/env python3
"""Replay benchmark: time per optimisation iteration of the launch-bound programs with and
without replaying the recorded Tape (launch/replay.py), beside Taichi 1.7.4 Vulkan, one run.

    .venv/bin/python tools/bench_replay.py [--only NAME,...] [--frames N] [--repeat R]
                                           [--lp-threads unset,0,1] [--taichi-python PY]

Each program (tools/programs/: mass_spring_robot, billiards) runs in a fresh process per
column: vkdiff with VKDIFF_REPLAY=0 (plain launches), vkdiff as it is (a repeating Tape
replays), and Taichi Vulkan; the columns alternate in each of --repeat rounds (default 3), and
each cell is the median [min-max] of the runs' medians (each run: --frames timed iterations
after 2 untimed). --lp-threads repeats the table per LP_NUM_THREADS setting (lavapipe's worker
threads; 'unset' leaves the default). The machine, the device and the load average at the
start are printed first (tools/bench_programs.py): timings on a loaded machine are noisy. The
losses column compares every iteration's loss of every run with and without replay ('same
bits': a replay computes what plain launches compute)."""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_programs import (PROGRAMS, print_machine, run_program, spread)  # noqa: E402
from taichi_harness import DEFAULT_TAICHI_PYTHON  # noqa: E402

NAMES = ['mass_spring_robot', 'billiards']  # (and --only diffmpm: fewer, larger launches)
COLUMNS = [('vkdiff plain', 'vkdiff', {'VKDIFF_REPLAY': '0'}),
           ('vkdiff replay', 'vkdiff', {'VKDIFF_REPLAY': '1'}),
           ('Taichi vulkan', 'taichi', {})]


def same_losses(plain, replay):
    """'same bits' where every run's losses (all iterations, f32) are the same with and
    without replay, else 'DIFFER'."""
    if not plain or not replay:
        return '-'
    return 'same bits' if len(plain | replay) == 1 else 'DIFFER'


def table(names, frames, repeat, lp, taichi_python):
    env_lp = {} if lp == 'unset' else {'LP_NUM_THREADS': lp}
    saved = os.environ.get('LP_NUM_THREADS')
    if lp == 'unset':
        os.environ.pop('LP_NUM_THREADS', None)  # (the workers inherit this process's)
    cols = [c for c in COLUMNS if c[1] == 'vkdiff' or taichi_python]
    rows = []
    try:
        for name in names:
            path = os.path.join(PROGRAMS, name + '.py')
            meds = {c[0]: [] for c in cols}
            losses = {c[0]: set() for c in cols}
            errors = {}
            for _ in range(repeat):
                for label, backend, env in cols:
                    py = sys.executable if backend == 'vkdiff' else taichi_python
                    r = run_program(py, backend, 'own', path, frames, 2,
                                    extra_env={**env, **env_lp})
                    if 'error' in r:
                        errors[label] = r['error']
                    elif r['times']:
                        meds[label].append(statistics.median(r['times']))
                        losses[label].add(tuple(r['losses']))
            m = {k: statistics.median(v) if v else None for k, v in meds.items()}
            plain, replay, taichi = (m.get(c[0]) for c in COLUMNS)
            rows.append([name] + [spread(meds[c[0]]) for c in cols] +
                        [f'{plain / replay:.2f}' if plain and replay else '-'] +
                        [same_losses(losses['vkdiff plain'], losses['vkdiff replay'])] +
                        ([f'{taichi / replay:.2f}' if taichi and replay else '-']
                         if taichi_python else []) + ['; '.join(f'{k}: {v}' for k, v in
                                                               errors.items())])
            print('  done:', name, f'LP_NUM_THREADS={lp}', file=sys.stderr)
    finally:
        if saved is not None:
            os.environ['LP_NUM_THREADS'] = saved
    header = ['program'] + [c[0] + ' ms' for c in cols] + ['plain/replay', 'losses'] + \
        (['Taichi/replay'] if taichi_python else []) + ['errors']
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    print(f'\nLP_NUM_THREADS={lp}: ms per iteration, median [min-max] of {repeat} runs')
    for r in [header, ['-' * w for w in widths]] + rows:
        print('  '.join(str(c).ljust(w) for c, w in zip(r, widths)).rstrip())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--only', default='', help='comma-separated program names')
    ap.add_argument('--frames', type=int, default=10, help='timed iterations per run')
    ap.add_argument('--repeat', type=int, default=3, help='runs per column (alternating)')
    ap.add_argument('--lp-threads', default='unset,0',
                    help='LP_NUM_THREADS settings, comma-separated (unset: the default)')
    ap.add_argument('--taichi-python', default=DEFAULT_TAICHI_PYTHON,
                    help='a Python with taichi==1.7.4 (none: vkdiff alone)')
    args = ap.parse_args()
    names = args.only.split(',') if args.only else NAMES
    taichi = args.taichi_python if args.taichi_python and os.path.exists(args.taichi_python) \
        else None
    print('Replaying a recorded Tape (VKDIFF_REPLAY=0: plain launches) beside Taichi 1.7.4 '
          'Vulkan')
    print_machine()
    for lp in args.lp_threads.split(','):
        table(names, args.frames, args.repeat, lp.strip(), taichi)


if __name__ == '__main__':
    main()
