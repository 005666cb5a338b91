#!/usr/bin/env python3
"""Real programs side by side: vkdiff vs Taichi 1.7.4's Vulkan backend, same device, one run.

    .venv/bin/python tools/bench_programs.py [--taichi-python /work/venvs/taichi/bin/python]
                                             [--only NAME,...] [--frames N] [--repeat R]
    .venv/bin/python tools/bench_programs.py --check ITERS [--only NAME,...]

Each program runs in a fresh subprocess per backend, from the same source file: vkdiff runs it
with `taichi` (and `taichi.math`) aliased to vkdiff; Taichi runs it with `ti.init` forced to
arch=ti.vulkan. Programs:

- our own programs (tools/programs/), which define `iteration()`, timed per iteration:
  DiffTaichi-style optimisation loops (a mass-spring robot with a neural controller, billiards,
  differentiable MPM: one optimisation step is a Tape over many small kernels + a parameter
  update), and a 2-D DEM of 16,384 grains in a struct field (dem: 20 launches of one
  eight-loop kernel per iteration; its 'loss' is the kinetic energy);
- Taichi's shipped examples (taichi/examples/ in its wheel, found through --taichi-python),
  timed per GUI frame: `ti.GUI` is replaced by a stand-in whose show() ends a frame, so each
  frame includes the example's own host work (to_numpy for drawing) but no drawing.

The first frames/iterations (compilation) are not timed. Each run's time is the median of its
timed ones; every program runs --repeat times per backend (default 3), vkdiff and Taichi
alternating, and the table shows the median of those runs with their spread [min-max]; the
ratio is Taichi's median over vkdiff's (> 1: vkdiff faster). The header names the machine (CPU
model, SIMD flags, cores, the Vulkan device and its driver, LP_NUM_THREADS) and the load
average at the start: a quiet machine is one below 1.0 (lavapipe runs on the same cores). The first iteration/frame is shown
apart, wall and CPU time (the process's threads and children): with the compile caches as found
(vkdiff's SPIR-V cache, Taichi's offline cache: warm after an earlier run), or with --cold empty
(a fresh VKDIFF_CACHE_DIR; Taichi's offline_cache off; both with an empty MESA_SHADER_CACHE_DIR:
lavapipe compiles each pipeline with LLVM at its first dispatch unless its shader cache,
~/.cache/mesa_shader_cache, has it). Taichi is a benchmark-only
reference installed in a side virtual environment (pip install taichi==1.7.4), never a vkdiff
dependency; without it the table shows vkdiff alone.

The note column shows each side's first and last loss, in f32. They need not match: the
mass-spring robot amplifies round-off (stiff springs, sticky ground contacts), so its f32 losses
drift apart within a few iterations between any two backends, Taichi's own CPU and Vulkan
included. `--check ITERS` is the correctness check instead of timing: the own programs' losses
over ITERS iterations in f64 (vkdiff vs Taichi CPU: equal to round-off, ~1e-11, or a gradient
differs) and in f32 (vkdiff, Taichi Vulkan, Taichi CPU). The own programs declare their fields
with dtype=float, so ti.init(default_fp=...) sets their precision.
"""
import argparse
import json
import math
import os
import runpy
import statistics
import sys
import tempfile
import time

from taichi_harness import (DEFAULT_TAICHI_PYTHON, ROOT, alias_vkdiff, import_taichi,
                            run_worker, taichi_examples_root)

PROGRAMS = os.path.join(ROOT, 'tools', 'programs')

# (name, kind, path relative to the program root, frames to skip, argv)
OWN = [('mass_spring_robot', 'own', 'mass_spring_robot.py'),
       ('billiards', 'own', 'billiards.py'),
       ('diffmpm', 'own', 'diffmpm.py'),
       ('dem', 'own', 'dem.py')]
EXAMPLES = [('ad_gravity', 'example', 'simulation/ad_gravity.py'),
            ('mpm88', 'example', 'simulation/mpm88.py'),
            ('mpm99', 'example', 'simulation/mpm99.py'),
            ('fem99', 'example', 'simulation/fem99.py'),
            ('nbody', 'example', 'simulation/nbody.py'),
            ('mass_spring_game', 'example', 'simulation/mass_spring_game.py'),
            ('pbf2d', 'example', 'simulation/pbf2d.py'),
            ('fractal', 'example', 'simulation/fractal.py'),
            ('game_of_life', 'example', 'simulation/game_of_life.py')]
# not run: comet (bitmasked SNodes) and implicit_mass_spring (sparse matrices): vkdiff has
# neither


# ------------------------------------------------------------------ worker (one program)
class _Done(Exception):
    pass


class _GUIMeta(type):
    def __getattr__(cls, name):  # ti.GUI.ESCAPE, ti.GUI.PRESS, ...
        if name.startswith('__'):
            raise AttributeError(name)
        return name


class _Stamps(list):
    """Frame end times; first_cpu: the CPU seconds to the first frame's end (from cpu0)."""
    cpu0 = first_cpu = None


def make_fake_gui(frames, stamps, sync):
    """A stand-in for ti.GUI: show() waits for the device (`sync`) and ends a frame (its time is
    recorded); after `frames` frames the program is stopped. Events: none; else: no-op."""
    class FakeGUI(metaclass=_GUIMeta):
        def __init__(self, *a, **k):
            self.running = True
            self.res = k.get('res', a[1] if len(a) > 1 else (512, 512))
            self.fps_limit = None
            self.frame = 0

        def show(self, *a, **k):
            sync()
            stamps.append(time.perf_counter())
            if len(stamps) == 1 and stamps.cpu0 is not None:
                stamps.first_cpu = _cpu() - stamps.cpu0
            if len(stamps) > frames:
                raise _Done()

        def get_event(self, *a):
            return False

        def get_events(self, *a):
            return []

        def is_pressed(self, *a):
            return False

        def get_cursor_pos(self):
            return 0.5, 0.5

        def __getattr__(self, name):
            if name.startswith('__'):
                raise AttributeError(name)
            return lambda *a, **k: None
    return FakeGUI


def _cpu():
    """CPU seconds of this process (all its threads: the driver's too) and its children."""
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


def worker(backend, kind, path, frames, skip, fp='f32', arch='vulkan'):
    """One program on one backend; prints a JSON line. `fp`, `arch`: default_fp and (Taichi
    only) arch for the --check runs (own programs declare their fields with dtype=float)."""
    if backend == 'vkdiff':
        ti = alias_vkdiff(os.path.dirname(os.path.dirname(path)) if kind == 'example' else None)
    else:
        ti = import_taichi(arch)
    stamps = _Stamps()
    ti.GUI = make_fake_gui(frames + skip, stamps, ti.sync)
    sys.argv = [path]
    if kind == 'own':
        ti.init(arch=getattr(ti, 'vulkan', None), default_fp=getattr(ti, fp))
        g = runpy.run_path(path, run_name='program')
        it = g['iteration']
        t0, c0 = time.perf_counter(), _cpu()
        losses = []
        for k in range(frames + skip):
            losses.append(float(it()))
            stamps.append(time.perf_counter())
            if k == 0:
                first_cpu = _cpu() - c0
        first = stamps[0] - t0
    else:
        t0, c0 = time.perf_counter(), _cpu()
        stamps.cpu0 = c0
        try:
            runpy.run_path(path, run_name='__main__')
        except _Done:
            pass
        first = stamps[0] - t0 if stamps else None
        first_cpu = stamps.first_cpu if stamps else None
        losses = []
    dts = [b - a for a, b in zip(stamps[skip - 1:], stamps[skip:])] if skip else \
        [b - a for a, b in zip(stamps, stamps[1:])]
    print(json.dumps({'times': dts, 'first': first, 'first_cpu': first_cpu,
                      'loss': losses[-1:] or None,
                      'loss0': losses[:1] or None, 'losses': losses}))


# ------------------------------------------------------------------ driver
def bytecode_env():
    """Python's bytecode cache on for vkdiff's worker, as for any installed package (Taichi's
    wheel was compiled by pip at install): with PYTHONDONTWRITEBYTECODE set, the first iteration
    would also compile vkdiff's lazily imported modules (~0.3 s); kept outside the checkout."""
    return {'PYTHONDONTWRITEBYTECODE': '', 'PYTHONPYCACHEPREFIX': os.environ.get(
        'PYTHONPYCACHEPREFIX') or os.path.join(os.environ.get('XDG_CACHE_HOME') or
                                               os.path.expanduser('~/.cache'), 'vkdiff',
                                               'bench-pycache')}


def run_program(python, backend, kind, path, frames, skip, timeout=900, fp='f32',
                arch='vulkan', cold=False, extra_env=None):
    """One program on one backend in a fresh process. cold: its compile caches empty (vkdiff: a
    fresh VKDIFF_CACHE_DIR; Taichi: offline_cache off; both: an empty MESA_SHADER_CACHE_DIR, the
    driver's cache of compiled shaders, else ~/.cache/mesa_shader_cache: lavapipe compiles each
    pipeline with LLVM at its first dispatch unless that cache has it); extra_env: more
    environment variables."""
    env = bytecode_env() if backend == 'vkdiff' else {}
    env.update(extra_env or {})
    with tempfile.TemporaryDirectory(prefix='vkdiff-bench-cold') as d:
        if cold:
            env.update({'VKDIFF_CACHE_DIR': d} if backend == 'vkdiff' else
                       {'TI_OFFLINE_CACHE': '0'})
            env['MESA_SHADER_CACHE_DIR'] = os.path.join(d, 'mesa')
        r = run_worker(python, [os.path.abspath(__file__), '--worker', backend, kind, path,
                                str(frames), str(skip), fp, arch], backend,
                       os.path.dirname(path), timeout, env)
    if r is None:
        return {'error': f'timeout ({timeout} s)'}
    lines = r.stdout.strip().splitlines()
    if r.returncode != 0 or not lines or not lines[-1].startswith('{'):
        err = (r.stderr.strip().splitlines() or ['?'])[-1]
        return {'error': err[:90]}
    return json.loads(lines[-1])


def fmt_ms(s):
    return '-' if s is None else f'{s * 1e3:.2f}'


def fmt_first(r):
    """The first iteration/frame: 'wall (CPU)' ms."""
    if r.get('first') is None:
        return '-'
    cpu = r.get('first_cpu')
    return f"{r['first'] * 1e3:.0f}" + ('' if cpu is None else f' ({cpu * 1e3:.0f})')


CHECK_RUNS = [('vkdiff f64', 'vkdiff', 'f64', 'vulkan'), ('Taichi cpu f64', 'taichi', 'f64', 'cpu'),
              ('vkdiff f32', 'vkdiff', 'f32', 'vulkan'),
              ('Taichi vulkan f32', 'taichi', 'f32', 'vulkan'),
              ('Taichi cpu f32', 'taichi', 'f32', 'cpu')]


SIMD_FLAGS = ('sse4_2', 'avx', 'avx2', 'fma', 'avx512f', 'avx512bw', 'avx512vl', 'avx512_vnni',
              'avx512_fp16', 'amx_tile', 'hypervisor')


def cpu_summary():
    """'model, N cores (SIMD flags)' from /proc/cpuinfo (Linux; elsewhere platform's words)."""
    import platform
    model, flags = platform.processor() or platform.machine(), set()
    try:
        with open('/proc/cpuinfo') as f:
            for line in f:
                key, _, val = line.partition(':')
                if key.strip() == 'model name':
                    model = val.strip()
                elif key.strip() in ('flags', 'Features') and not flags:
                    flags = set(val.split())
    except OSError:
        pass
    shown = ' '.join(f for f in SIMD_FLAGS if f in flags)
    return f'{model}, {os.cpu_count()} cores' + (f' ({shown})' if shown else '')


def device_summary():
    """The Vulkan device the benchmark runs on (index VKDIFF_DEVICE, default 0, under the same
    VK_ICD_FILENAMES): its name, type and driver version as `vulkaninfo --summary` reports
    them; None where vulkaninfo is missing."""
    import subprocess
    try:
        out = subprocess.run(['vulkaninfo', '--summary'], capture_output=True, text=True,
                             timeout=60).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    want = f"GPU{os.environ.get('VKDIFF_DEVICE', '0')}:"
    fields, inside = {}, False
    for line in out.splitlines():
        if line.strip().startswith('GPU') and line.strip().endswith(':'):
            inside = line.strip() == want
        elif inside and '=' in line:
            k, _, v = line.partition('=')
            fields[k.strip()] = v.strip()
    if not fields:
        return None
    kind = fields.get('deviceType', '').replace('PHYSICAL_DEVICE_TYPE_', '').lower()
    return (f"{fields.get('deviceName', '?')} [{kind}], driver {fields.get('driverName', '?')}: "
            f"{fields.get('driverInfo', fields.get('driverVersion', '?'))}, "
            f"Vulkan {fields.get('apiVersion', '?')}")


def print_machine():
    print(f'machine: {cpu_summary()}')
    print(f'device: {device_summary() or "? (vulkaninfo not found)"}; LP_NUM_THREADS='
          f'{os.environ.get("LP_NUM_THREADS", "unset")}')
    load = os.getloadavg()
    print('load average at start: ' + ', '.join(f'{v:.2f}' for v in load) +
          (' (quiet: below 1.0)' if load[0] < 1.0 else
           ' (NOT quiet: other processes share the cores lavapipe runs on)'))


def spread(values):
    """'median [min-max]' in ms of run times in seconds ('-' for none)."""
    values = [v for v in values if v is not None]
    if not values:
        return '-'
    med = statistics.median(values)
    if len(values) == 1:
        return fmt_ms(med)
    return f'{fmt_ms(med)} [{fmt_ms(min(values))}-{fmt_ms(max(values))}]'


def check(progs, taichi_python, iters):
    """--check: each own program's loss over `iters` optimisation iterations in f64 (vkdiff and
    Taichi CPU; Taichi's SPIR-V backend has no f64 sin) and in f32 (vkdiff, Taichi Vulkan, Taichi
    CPU), with the largest relative difference from Taichi CPU f64. The f64 runs must agree to
    round-off: each iteration's update uses the gradient, so a wrong gradient shows from the second
    loss on. The f32 runs may drift apart: these simulations amplify round-off (ground contacts,
    stiff springs), and Taichi's own two backends differ as much."""
    print(f'loss per iteration, {iters} iterations; diff: max relative difference from '
          f'Taichi cpu f64')
    for name, kind, path in progs:
        if kind != 'own':
            continue
        rows = []
        for label, backend, fp, arch in CHECK_RUNS:
            if backend == 'taichi' and not taichi_python:
                continue
            py = sys.executable if backend == 'vkdiff' else taichi_python
            rows.append((label, run_program(py, backend, kind, path, iters, 0, fp=fp, arch=arch)))
        ref = dict(rows).get('Taichi cpu f64', {}).get('losses')
        print(name)
        for label, r in rows:
            if 'error' in r:
                print(f'  {label:18s} error: {r["error"]}')
                continue
            ls = r['losses']
            diff = '' if not ref else 'diff %.2g' % max(
                abs(a - b) / max(abs(b), 1e-30) for a, b in zip(ls, ref))
            print(f'  {label:18s} ' + ' '.join(f'{x:+.8g}' for x in ls) + f'  {diff}')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--taichi-python', default=DEFAULT_TAICHI_PYTHON,
                    help='a Python with taichi==1.7.4 installed')
    ap.add_argument('--only', default='', help='comma-separated program names')
    ap.add_argument('--frames', type=int, default=10, help='timed frames/iterations')
    ap.add_argument('--skip', type=int, default=2, help='untimed first frames (compilation)')
    ap.add_argument('--repeat', type=int, default=3,
                    help='runs per program and backend, the backends alternating (median and '
                         'spread of the runs)')
    ap.add_argument('--vkdiff-only', action='store_true',
                    help='run vkdiff alone (Taichi only locates its examples)')
    ap.add_argument('--cold', action='store_true',
                    help='first iteration/frame with empty compile caches (a fresh '
                         'VKDIFF_CACHE_DIR; Taichi offline_cache off; both an empty '
                         'MESA_SHADER_CACHE_DIR, the driver\'s shader cache)')
    ap.add_argument('--ab-env', default='', metavar='NAME=VALUE[,NAME=VALUE]',
                    help='also run vkdiff with these environment variables (e.g. '
                         'VKDIFF_DISABLE_FEATURES=texel_reads): a column "vkdiff B ms" and its '
                         'ratio to vkdiff, in the same run')
    ap.add_argument('--check', type=int, default=0, metavar='ITERS',
                    help='instead of timing: the own programs\' losses over ITERS iterations in '
                         'f64 and f32, vkdiff vs Taichi (see check())')
    args = ap.parse_args()
    if args.check:
        have = args.taichi_python and os.path.exists(args.taichi_python)
        progs = [(n, k, os.path.join(PROGRAMS, p)) for n, k, p in OWN
                 if not args.only or n in args.only.split(',')]
        return check(progs, args.taichi_python if have else None, args.check)
    ex_root = taichi_examples_root(args.taichi_python)
    have_taichi = ex_root is not None
    progs = [(n, k, os.path.join(PROGRAMS, p)) for n, k, p in OWN]
    if ex_root:
        progs += [(n, k, os.path.join(ex_root, p)) for n, k, p in EXAMPLES]
    if args.only:
        keep = set(args.only.split(','))
        progs = [p for p in progs if p[0] in keep]
    print(f'vkdiff vs Taichi 1.7.4 (arch=vulkan), per iteration (own programs) or frame '
          f'(Taichi examples): each run\'s median of {args.frames} after {args.skip} untimed; '
          f'median [min-max] of {args.repeat} run(s) per backend, the backends alternating')
    print_machine()
    ab = dict(kv.split('=', 1) for kv in args.ab_env.split(',') if kv)
    if ab:
        print(f'vkdiff B: vkdiff with {args.ab_env}')
    rows, ratios, ab_ratios, b_ratios = [], [], [], []
    for name, kind, path in progs:
        runs = ['vkdiff'] + (['vkdiff B'] if ab else []) + \
            (['taichi'] if have_taichi and not args.vkdiff_only else [])
        got = {b: [] for b in runs}
        for _ in range(args.repeat):  # rounds: each backend once per round, alternating
            for backend in runs:
                if got[backend] and 'error' in got[backend][-1]:
                    continue
                py = sys.executable if backend.startswith('vkdiff') else args.taichi_python
                r = run_program(py, backend.split()[0], kind, path, args.frames, args.skip,
                                cold=args.cold, extra_env=ab if backend == 'vkdiff B' else None)
                if 'error' not in r:
                    r['median'] = statistics.median(r['times']) if r['times'] else None
                got[backend].append(r)
        res = {}
        for backend, rs in got.items():
            ok = [r for r in rs if 'error' not in r]
            if not ok:
                res[backend] = rs[-1]
                continue
            meds = [r['median'] for r in ok]
            # the run whose median is the median (its losses and first frame are shown)
            mid = sorted(ok, key=lambda r: r['median'] or 0)[(len(ok) - 1) // 2]
            res[backend] = {**mid, 'median': statistics.median(m for m in meds if m is not None)
                            if any(m is not None for m in meds) else None,
                            'spread': spread(meds)}
        v, t = res.get('vkdiff', {}), res.get('taichi', {})
        ratio = ''
        if v.get('median') and t.get('median'):
            ratio = t['median'] / v['median']
            ratios.append(ratio)
            ratio = f'{ratio:.2f}'
        note = v.get('error') or t.get('error') or ''
        if v.get('loss') and t.get('loss'):
            note = f'loss {v["loss0"][0]:.4g}->{v["loss"][0]:.4g} / {t["loss0"][0]:.4g}->{t["loss"][0]:.4g}'
        rows.append([name, v.get('spread', '-'), t.get('spread', '-'), ratio,
                     fmt_first(v), fmt_first(t), note])
        if ab:
            b = res['vkdiff B']
            gain = ''
            if v.get('median') and b.get('median'):
                ab_ratios.append(b['median'] / v['median'])
                gain = f'{ab_ratios[-1]:.2f}'
                if t.get('median'):
                    b_ratios.append(t['median'] / b['median'])
            rows[-1][6:6] = [b.get('spread', '-'), gain]
            rows[-1][-1] = rows[-1][-1] or b.get('error') or ''
        print('  done:', name, file=sys.stderr)
    first = '1st ms (CPU), ' + ('caches cold' if args.cold else 'caches as found')
    header = ['program', 'vkdiff ms', 'Taichi ms', 'Taichi/vkdiff', 'vkdiff ' + first,
              'Taichi ' + first] + (['vkdiff B ms', 'B/vkdiff'] if ab else []) + ['note']
    widths = [max(len(str(r[i])) for r in [header] + rows) for i in range(len(header))]
    line = lambda r: '  '.join(str(c).ljust(w) if i in (0, len(header) - 1) else str(c).rjust(w)
                               for i, (c, w) in enumerate(zip(r, widths)))
    print(line(header))
    print('  '.join('-' * w for w in widths))
    for r in rows:
        print(line(r))
    if ratios:
        gm = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
        print(f'geometric mean of Taichi/vkdiff over {len(ratios)} programs: {gm:.2f}')
    if ab_ratios:
        gm = math.exp(sum(math.log(r) for r in ab_ratios) / len(ab_ratios))
        print(f'geometric mean of (vkdiff B)/vkdiff over {len(ab_ratios)} programs: {gm:.2f}')
        if b_ratios:
            gb = math.exp(sum(math.log(r) for r in b_ratios) / len(b_ratios))
            print(f'geometric mean of Taichi/(vkdiff B) over {len(b_ratios)} programs: {gb:.2f}')


if __name__ == '__main__':
    if len(sys.argv) > 1 and sys.argv[1] == '--worker':
        worker(sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]),
               *sys.argv[7:9])
    else:
        main()
