#!/usr/bin/env python3
"""Per-task time of one program from tools/bench_programs.py, under vkdiff or Taichi 1.7.4's
Vulkan backend (benchmark tool; not part of the package).

    PYTHONPATH=. .venv/bin/python tools/profile_tasks.py PROGRAM [--frames N] [--skip S]
    /work/venvs/taichi/bin/python tools/profile_tasks.py PROGRAM --taichi [--frames N]

vkdiff: every dispatch is timed on the host: the device is waited for before it is recorded
and after it is submitted, so each figure includes one submit + wait (measured alone and printed
as 'empty submit'); launches are serialised, so the program runs slower than unprofiled.
Taichi: its kernel profiler (Vulkan timestamp queries; device time of each task only).
Printed per task: launches, total ms over the timed frames, mean us per launch, the workgroups
of its last launch (vkdiff) -- sorted by total.
"""
import argparse
import collections
import os
import runpy
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_programs import EXAMPLES, OWN, PROGRAMS, _Done, _Stamps, make_fake_gui  # noqa: E402
from taichi_harness import alias_vkdiff, import_taichi  # noqa: E402


REPEAT = int(os.environ.get('PROFILE_REPEAT', 1))


def _vkdiff_timer(ti, stats, active):
    from vkdiff.launch import compiled
    from vkdiff.runtime import program
    names = {}
    orig_bind = compiled.CompiledTask.bind

    def bind(self, rt, push):
        orig_bind(self, rt, push)
        if self.algo is not None:
            names[id(self.algo)] = self.task.name
    compiled.CompiledTask.bind = bind
    orig_dispatch = program.Runtime.dispatch

    def dispatch(self, algo, groups, push, reads, writes):
        if not active[0]:
            return orig_dispatch(self, algo, groups, push, reads, writes)
        self.flush()
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(REPEAT):
            orig_dispatch(self, algo, groups, push, reads, writes)
        self.flush()
        s = stats[names.get(id(algo), '?')]
        s[0] += REPEAT
        s[1] += time.perf_counter() - t0
        s[3] += time.process_time() - c0
        s[2] = groups
    program.Runtime.dispatch = dispatch


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('program')
    ap.add_argument('--taichi', action='store_true', help='run under Taichi (this Python has it)')
    ap.add_argument('--frames', type=int, default=5)
    ap.add_argument('--skip', type=int, default=2)
    ap.add_argument('--frame-only', action='store_true',
                    help='no per-task timing: wall and process CPU time per frame (both '
                         'backends; CPU time is steadier on a loaded machine)')
    args = ap.parse_args()
    table = {n: (k, p) for n, k, p in OWN + EXAMPLES}
    kind, rel = table[args.program]
    stats = collections.defaultdict(lambda: [0, 0.0, 0, 0.0])
    active = [False]
    if args.taichi:
        ti = import_taichi('vulkan', kernel_profiler=not args.frame_only)
        import taichi
        root = os.path.join(os.path.dirname(taichi.__file__), 'examples')
    else:
        import subprocess
        root = subprocess.run(['/work/venvs/taichi/bin/python', '-c', 'import taichi, os; print('
                               'os.path.join(os.path.dirname(taichi.__file__), "examples"))'],
                              capture_output=True, text=True).stdout.split()[-1]
        ti = alias_vkdiff(root)
        _vkdiff_timer(ti, stats, active)
    path = os.path.join(PROGRAMS if kind == 'own' else root, rel)
    stamps = _Stamps()

    cpu = []

    def sync():
        ti.sync()
        cpu.append(time.process_time())
        if len(stamps) == args.skip - 1 and not args.frame_only:  # the timed frames start
            active[0] = True
            if args.taichi:
                ti.profiler.clear_kernel_profiler_info()
    ti.GUI = make_fake_gui(args.frames + args.skip, stamps, sync)
    sys.argv = [path]
    if kind == 'own':
        ti.init(arch=getattr(ti, 'vulkan', None))
        g = runpy.run_path(path, run_name='program')
        for k in range(args.frames + args.skip):
            if k == args.skip and not args.frame_only:
                sync()
                active[0] = True
                if args.taichi:
                    ti.profiler.clear_kernel_profiler_info()
            g['iteration']()
            ti.sync()
            cpu.append(time.process_time())
            stamps.append(time.perf_counter())
        ti.sync()
    else:
        try:
            runpy.run_path(path, run_name='__main__')
        except _Done:
            pass
    frames = args.frames
    if args.frame_only:
        import statistics
        w = [b - a for a, b in zip(stamps[args.skip - 1:], stamps[args.skip:])]
        c = [b - a for a, b in zip(cpu[args.skip - 1:], cpu[args.skip:])]
        print(f'{args.program} {"taichi" if args.taichi else "vkdiff"}: median per frame '
              f'wall {statistics.median(w) * 1e3:.2f} ms, cpu {statistics.median(c) * 1e3:.2f} ms'
              f' (min {min(w) * 1e3:.2f} / {min(c) * 1e3:.2f})')
        return
    if args.taichi:
        ti.profiler.print_kernel_profiler_info('count')
        return
    from vkdiff.lang import state
    rt = state.runtime()
    t0 = time.perf_counter()
    for _ in range(50):
        rt.batch.submit()
    empty = (time.perf_counter() - t0) / 50
    total = sum(s[1] for s in stats.values())
    print(f'{args.program}: {total / frames * 1e3:.2f} ms per frame in dispatches '
          f'(empty submit {empty * 1e6:.1f} us each)')
    print(f'{"launches/frame":>14} {"ms/frame":>9} {"us/launch":>9} {"cpu us/launch":>13} '
          f'{"groups":>7}  task')
    for name, (n, t, g, c) in sorted(stats.items(), key=lambda kv: -kv[1][1]):
        print(f'{n / frames:14.1f} {t / frames * 1e3:9.3f} {t / n * 1e6:9.1f} {c / n * 1e6:13.1f}'
              f' {g:7d}  {name}')


if __name__ == '__main__':
    main()
