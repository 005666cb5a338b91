#!/usr/bin/env python3
"""vkdiff benchmarks, with reference figures side by side.

    .venv/bin/python tools/bench.py [--quick] [--only launch|elementwise|compile|gravity]

1. launch       per-launch overhead of a tiny kernel (10,000 launches batched, one ti.sync());
                the same beside Taichi 1.7.4 Vulkan (W3: `y[0] += 1.0` on a shape-(1,) field, and
                the 0-D chain), LP_NUM_THREADS unset, 1 and 0, alternating fresh processes;
                a loop bound written by a kernel: indirect dispatch vs read-back vs max grid
2. elementwise  y = sin(x) * x and y = x * x: vkdiff vs numpy vs hand-written GLSL through kp
3. compile      first-call compile time of a small kernel, disk cache cold and warm; the
                gravity kernel's first forward + adjoint (Tape), vkdiff against Taichi 1.7.4
4. gravity      the autodiff gravity substep (examples/ad_gravity.py): substeps/s, U's error

Each timing is the best of a few repetitions (other processes share the CPU that lavapipe runs
on). Reference figures (Taichi 1.7.4 Vulkan, Dr.Jit LLVM, GLSL) were measured on this machine.
"""
import argparse
import datetime
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
import vkdiff as ti  # noqa: E402
from vkdiff.runtime import program  # noqa: E402


def table(title, header, rows):
    rows = [[str(c) for c in r] for r in rows]
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    line = lambda r: '  '.join(c.ljust(w) if i == 0 else c.rjust(w)
                               for i, (c, w) in enumerate(zip(r, widths)))
    print(f'\n{title}\n' + line(header) + '\n' + '  '.join('-' * w for w in widths))
    for r in rows:
        print(line(r))


def best_time(fn, repeat):
    """Smallest wall time of `repeat` calls of fn()."""
    best = float('inf')
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return best


def worker(name, env=None):
    """Run `bench.py --worker NAME` in a fresh process; its last stdout line is JSON."""
    r = subprocess.run([sys.executable, os.path.abspath(__file__), '--worker', name],
                       env={**os.environ, **(env or {})}, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f'worker {name} failed:\n{r.stderr}')
    return json.loads(r.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------ 1. launch overhead
LAUNCHES = 10_000
RECORD_BATCH = 2000  # launches recorded without a flush (the runtime submits at 4096 commands;
                     # a chain launch is 2 commands: dispatch + barrier), nor a submission
                     # without waiting (program.KICK_SECONDS is off while they are timed)


def launch_worker():
    ti.init()
    fields = [ti.field(ti.f32, shape=()) for _ in range(8)]

    @ti.kernel
    def inc(f: ti.template()):
        f[None] += 1.0

    out = {}
    for case, pick in (('chain', lambda i: fields[0]), ('round_robin', lambda i: fields[i % 8])):
        for f in fields:
            f[None] = 0.0
        for i in range(8):       # compile and warm up
            inc(pick(i))
        ti.sync()
        total, rec = float('inf'), float('inf')
        for _ in range(3):
            t = time.perf_counter()
            for i in range(LAUNCHES):
                inc(pick(i))
            ti.sync()
            total = min(total, time.perf_counter() - t)
            kick, program.KICK_SECONDS = program.KICK_SECONDS, -1.0
            t = time.perf_counter()
            for i in range(RECORD_BATCH):
                inc(pick(i))
            rec = min(rec, time.perf_counter() - t)
            program.KICK_SECONDS = kick
            ti.sync()
        expect = 8 + 3 * (LAUNCHES + RECORD_BATCH)
        got = sum(f[None] for f in fields)
        out[case] = {'us': total / LAUNCHES * 1e6, 'record_us': rec / RECORD_BATCH * 1e6,
                     'ok': got == expect}
    return out


def bench_launch(args):
    default = worker('launch')
    lp0 = worker('launch', {'LP_NUM_THREADS': '0'})
    fmt = lambda r, k: f'{r[k]:.1f}' + ('' if r['ok'] else ' (WRONG RESULT)')
    rows = []
    for case, what in (('chain', '(a) dependent chain, µs/launch (incl. execution)'),
                       ('round_robin', '(b) 8 fields round-robin, µs/launch (incl. execution)')):
        rows.append([what, fmt(default[case], 'us'), fmt(lp0[case], 'us'), '', ''])
    for case, what in (('chain', '    recording only (a), µs/launch'),
                       ('round_robin', '    recording only (b), µs/launch')):
        rows.append([what, fmt(default[case], 'record_us'), fmt(lp0[case], 'record_us'),
                     '27', '<= 15'])
    table(f'1. Launch overhead: `f[None] += 1` on a 0-D field, {LAUNCHES} launches batched, one '
          f'ti.sync(); recording = the launch loop before the sync ({RECORD_BATCH} launches, no '
          'flush)', ['', 'default threads', 'LP_NUM_THREADS=0', 'Taichi 1.7.4', 'target'], rows)
    bench_tiny_launches(args)
    bench_bound(args)


# the tiny launch side by side with Taichi (issue 29): W3 = `y[0] += 1.0` on a shape-(1,) field,
# chain = `f[None] += 1.0` on a 0-D field; LAUNCHES launches, then one sync
TINY_LAUNCH = r'''
import json, os, sys, time
if sys.argv[1] == 'taichi':
    sys.path.insert(0, sys.argv[3])
    from taichi_harness import import_taichi
    ti = import_taichi('vulkan', offline_cache=False)
else:
    import vkdiff as ti
ti.init()
n = int(sys.argv[4])
if sys.argv[2] == 'w3':
    y = ti.field(ti.f32, shape=(1,))

    @ti.kernel
    def k():
        y[0] += 1.0
else:
    y = ti.field(ti.f32, shape=())

    @ti.kernel
    def k():
        y[None] += 1.0
for _ in range(20):  # compile, warm up
    k()
ti.sync()
cpu = lambda: sum(os.times()[:2])  # every thread of the process: the driver's too
t, c = time.perf_counter(), cpu()
for _ in range(n):
    k()
ti.sync()
wall, used = time.perf_counter() - t, cpu() - c
print(json.dumps({'us': wall / n * 1e6, 'cpu_us': used / n * 1e6,
                  'ok': float(y.to_numpy().reshape(-1)[0]) == 20 + n}))
'''


def tiny_launch(script, backend, pattern, env):
    """One fresh process: LAUNCHES launches of the tiny kernel `pattern`, one sync.
    backend 'vkdiff' runs with VKDIFF_KEEP_AWAKE_MS unset (the default: off), 'vkdiff-awake'
    with VKDIFF_KEEP_AWAKE_MS=10 (the opt-in threads that keep the cores awake), whatever the
    caller's environment says."""
    python = TAICHI_PYTHON if backend == 'taichi' else sys.executable
    full = {**os.environ, **env}
    full.pop('VKDIFF_KEEP_AWAKE_MS', None)
    if backend == 'vkdiff-awake':
        backend, full['VKDIFF_KEEP_AWAKE_MS'] = 'vkdiff', '10'
    for k in ('LP_NUM_THREADS',):  # unset unless this case sets it
        if k not in env:
            full.pop(k, None)
    if backend == 'vkdiff':
        full['PYTHONPATH'] = ROOT + os.pathsep + full.get('PYTHONPATH', '')
    r = subprocess.run([python, script, backend, pattern, os.path.join(ROOT, 'tools'),
                        str(LAUNCHES)], env=full, capture_output=True, text=True,
                       cwd=os.path.dirname(script), timeout=600)
    if r.returncode != 0:
        raise RuntimeError(f'tiny_launch {backend} {pattern} failed:\n{r.stderr[-2000:]}')
    return json.loads(r.stdout.strip().splitlines()[-1])


def bench_tiny_launches(args):
    """vkdiff and Taichi 1.7.4 Vulkan alternating in fresh processes, `rounds` rounds, with
    LP_NUM_THREADS unset, 1 and 0: the median and the range of the per-launch wall time, and the
    median CPU time of all the process's threads per launch (steadier than the wall time on a
    loaded machine)."""
    import statistics
    rounds = 3 if args.quick else 5
    backends = ['vkdiff', 'vkdiff-awake'] + (['taichi'] if os.path.exists(TAICHI_PYTHON) else [])
    threads = [('unset', {}), ('1', {'LP_NUM_THREADS': '1'}), ('0', {'LP_NUM_THREADS': '0'})]
    load = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory(prefix='vkdiff-bench-tiny') as d:
        script = os.path.join(d, 'tiny_launch.py')
        with open(script, 'w') as f:
            f.write(TINY_LAUNCH)
        for pattern, what in (('w3', 'W3: y[0] += 1.0, shape (1,)'),
                              ('chain', 'chain: f[None] += 1.0, 0-D')):
            for lp, env in threads:
                got = {b: [] for b in backends}
                for _ in range(rounds):
                    for b in backends:
                        got[b].append(tiny_launch(script, b, pattern, env))
                cells = []
                for b in backends:
                    us = [r['us'] for r in got[b]]
                    cpu = statistics.median(r['cpu_us'] for r in got[b])
                    bad = '' if all(r['ok'] for r in got[b]) else ' (WRONG RESULT)'
                    cells.append(f'{statistics.median(us):.1f} [{min(us):.1f}-{max(us):.1f}] '
                                 f'({cpu:.1f}){bad}')
                rows.append([what if lp == 'unset' else '', lp] + cells)
    table(f'1a. Tiny launches beside Taichi: {LAUNCHES} launches then one sync, µs/launch: median '
          f'[min-max] of {rounds} fresh processes alternating vkdiff and Taichi (CPU time of all '
          f'threads per launch); load average {load:.2f} at start (quiet: below 1.0)',
          ['', 'LP_NUM_THREADS'] + [{'vkdiff': 'vkdiff', 'taichi': 'Taichi 1.7.4 Vulkan',
                                     'vkdiff-awake': 'vkdiff, VKDIFF_KEEP_AWAKE_MS=10'}[b]
                                    for b in backends], rows)
    print('   VKDIFF_KEEP_AWAKE_MS=10: with the native module\'s opt-in SCHED_IDLE threads that '
          'keep the cores awake for 10 ms after each submission and wait on a device of type CPU '
          '(awake.hpp); the difference can show only where cores halt between the driver\'s two '
          'wake-ups per dispatch (a quiet machine). CPU time includes those threads\' spinning')


def bound_worker():
    """mass_spring_game's substep with 3 particles: `n = num[None]`, `for i in range(n)` with
    an inner `for j in range(n)`, then `for i in range(n)`; num written by a kernel (the host
    does not know it) once per frame of 10 substeps, or before every substep. µs per substep."""
    ti.init()
    steps = int(os.environ.get('BENCH_BOUND_FRAMES', 40))
    num = ti.field(ti.i32, ())
    x = ti.field(ti.f32, 1000)
    v = ti.field(ti.f32, 1000)

    @ti.kernel
    def set_num(k: ti.i32):
        num[None] = k

    @ti.kernel
    def substep():
        n = num[None]
        for i in range(n):
            a = 0.0
            for j in range(n):
                a += x[j] - x[i]
            v[i] += a * 1e-3
        for i in range(n):
            x[i] += v[i] * 1e-3

    x.from_numpy(np.arange(1000, dtype=np.float32))
    set_num(3)
    substep()
    ti.sync()
    out = {}
    for case, every in (('frame', False), ('every', True)):
        def run():
            for _ in range(steps):
                set_num(3)
                for _ in range(10):
                    if every:
                        set_num(3)
                    substep()
            ti.sync()
        wall = cpu = float('inf')
        for _ in range(5 if steps > 1 else 1):  # best of: wall time, and CPU time (all threads)
            t, c = time.perf_counter(), os.times()
            run()
            c2 = os.times()
            wall = min(wall, time.perf_counter() - t)
            cpu = min(cpu, c2.user + c2.system - c.user - c.system)
        out[case] = wall / (steps * 10) * 1e6
        out[case + '_cpu'] = cpu / (steps * 10) * 1e6
    return out


def bench_bound(args):
    cols = [('indirect (default)', {}), ('read-back', {'VKDIFF_INDIRECT': '0'}),
            ('GPU geometry: indirect', {'VKDIFF_GEOMETRY': 'gpu'}),
            ('GPU geometry: 65,535 groups', {'VKDIFF_GEOMETRY': 'gpu', 'VKDIFF_INDIRECT': '0',
                                             'BENCH_BOUND_FRAMES': '1'})]
    res = [worker('bound', env) for _, env in cols]
    rows = [[what] + [f'{r[case]:.0f} ({r[case + "_cpu"]:.0f})' for r in res]
            for case, what in (('frame', 'bound set once per 10 substeps'),
                               ('every', 'bound set before every substep'))]
    table('1b. Run-time loop bound written by a kernel (mass_spring_game\'s substep, 3 particles, '
          'inner loop over them), µs per substep incl. execution, wall (CPU time of all threads); '
          'lavapipe runs the GPU geometry too (VKDIFF_GEOMETRY=gpu)',
          [''] + [c for c, _ in cols], rows)


# ------------------------------------------------------------------ 2. elementwise throughput
OPS = {'sin(x)*x': 'sin_x_times_x', 'x*x': 'x_times_x'}
SIZES = {'1M': 1 << 20, '16M': 1 << 24}
GROUP_SWEEP = (64, 256, 1024, 4096, 16384, 65535)


def make_kernel(op):
    if op == 'x*x':
        @ti.kernel
        def k(x: ti.template(), y: ti.template()):
            for i in x:
                y[i] = x[i] * x[i]
    else:
        @ti.kernel
        def k(x: ti.template(), y: ti.template()):
            for i in x:
                y[i] = ti.sin(x[i]) * x[i]
    return k


def numpy_op(op, x, y, tmp):
    if op == 'x*x':
        np.multiply(x, x, out=y)
    else:
        np.sin(x, out=tmp)
        np.multiply(tmp, x, out=y)


def glsl_spirv(name):
    src = os.path.join(ROOT, 'shaders', name + '.comp')
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, name + '.spv')
        subprocess.run(['glslangValidator', '-V', '--target-env', 'vulkan1.1', src, '-o', out],
                       check=True, capture_output=True)
        with open(out, 'rb') as f:
            return f.read()


class Glsl:
    """The hand-written shaders dispatched through Kompute's Python package (kp records a buffer
    barrier before each dispatch, as vkdiff does between dependent launches)."""

    def __init__(self):
        try:
            import kp
        except ImportError:
            raise SystemExit('the elementwise benchmark needs Kompute\'s kp package: '
                             'bash tools/setup.sh --bench') from None
        if int(np.__version__.split('.')[0]) >= 2:
            raise SystemExit('kp 0.9.0 corrupts uploads under numpy 2: bash tools/setup.sh --bench '
                             'installs numpy<2 beside it')
        self.kp = kp
        self.mgr = kp.Manager()
        self.spirv = {op: glsl_spirv(name) for op, name in OPS.items()}

    def tensors(self, xs):
        tx, ty = self.mgr.tensor(xs), self.mgr.tensor(np.zeros_like(xs))
        self.mgr.sequence().eval(self.kp.OpTensorSyncDevice([tx, ty]))
        return tx, ty

    def runner(self, op, tx, ty, groups, reps):
        """A function that runs `reps` dispatches in one submit and waits."""
        algo = self.mgr.algorithm([tx, ty], self.spirv[op], [groups, 1, 1], [], [])
        seq = self.mgr.sequence()
        for _ in range(reps):
            seq.record(self.kp.OpAlgoDispatch(algo))
        return seq.eval

    def result(self, ty):
        self.mgr.sequence().eval(self.kp.OpTensorSyncLocal([ty]))
        return ty.data()


def vkdiff_runner(op, x, y, max_groups, reps):
    """A fresh kernel (VKDIFF_MAX_GROUPS is read when a kernel is compiled), warmed up; a function
    that launches it `reps` times and syncs."""
    if max_groups is None:
        os.environ.pop('VKDIFF_MAX_GROUPS', None)
    else:
        os.environ['VKDIFF_MAX_GROUPS'] = str(max_groups)
    k = make_kernel(op)
    k(x, y)
    ti.sync()
    os.environ.pop('VKDIFF_MAX_GROUPS', None)

    def run():
        for _ in range(reps):
            k(x, y)
        ti.sync()
    return run


def bench_elementwise(args):
    rng = np.random.default_rng(0)
    glsl = Glsl()
    rounds = 3 if args.quick else 7
    sweep = (64, 256, 4096, 65535) if args.quick else GROUP_SWEEP
    main_rows, vk_sweep, gl_sweep, notes = [], [], [], []
    for op in OPS:
        for size, n in SIZES.items():
            reps = max(2, (1 << 24) // n)   # 16M elements per timed run
            xs = rng.uniform(-np.pi, np.pi, n).astype(np.float32)
            x64 = xs.astype(np.float64)
            ref = x64 * x64 if op == 'x*x' else np.sin(x64) * x64
            y, tmp = np.empty_like(xs), np.empty_like(xs)
            tx, ty = glsl.tensors(xs)
            x, yv = ti.field(ti.f32, shape=n), ti.field(ti.f32, shape=n)
            x.from_numpy(xs)
            # every configuration once per round, best of the rounds (the CPU is shared)
            runners = {'numpy': lambda: [numpy_op(op, xs, y, tmp) for _ in range(reps)]}
            for g in sweep:
                runners['glsl', g] = glsl.runner(op, tx, ty, min(g, -(-n // 128)), reps)
            for g in sweep + (None,):
                runners['vkdiff', g] = vkdiff_runner(op, x, yv, g, reps)
            best = {k: float('inf') for k in runners}
            for _ in range(rounds):
                for k, fn in runners.items():
                    best[k] = min(best[k], best_time(fn, 1))
                    if k[0] == 'glsl' and np.abs(glsl.result(ty) - ref).max() > 1e-5:
                        notes.append(f'GLSL {op} {size} groups={k[1]}: WRONG RESULT')
                    if k[0] == 'vkdiff' and np.abs(yv.to_numpy() - ref).max() > 1e-5:
                        notes.append(f'vkdiff {op} {size} VKDIFF_MAX_GROUPS={k[1]}: WRONG RESULT')
            rate = {k: n * reps / t / 1e6 for k, t in best.items()}
            gl = {g: rate['glsl', g] for g in sweep}
            vk = {g: rate['vkdiff', g] for g in sweep}
            gbest, vbest = max(gl, key=gl.get), max(vk, key=vk.get)
            default = rate['vkdiff', None]
            main_rows.append([f'{op:9s} {size}', f'{default:.0f}', f"{rate['numpy']:.0f}",
                              f'{gl[gbest]:.0f} (groups {gbest})',
                              f'{100 * default / gl[gbest]:.0f}%',
                              f'{vk[vbest]:.0f} (={vbest})', f'{100 * vk[vbest] / gl[gbest]:.0f}%'])
            vk_sweep.append([f'{op:9s} {size}'] + [f'{vk[g]:.0f}' for g in sweep])
            gl_sweep.append([f'{op:9s} {size}'] + [f'{gl[g]:.0f}' for g in sweep])
            del runners, x, yv, tx, ty
    table(f'2. Elementwise throughput, M elements/s (kernel only, best of {rounds} interleaved '
          'rounds; local size 128 everywhere; GLSL at its best workgroup count)',
          ['', 'vkdiff', 'numpy', 'GLSL (kp)', 'vkdiff/GLSL',
           'vkdiff at best VKDIFF_MAX_GROUPS', 'that/GLSL'], main_rows)
    table('   vkdiff by VKDIFF_MAX_GROUPS (a cap on min(n/128, 65535) workgroups; default 65535), '
          'M elements/s', [''] + [str(g) for g in sweep], vk_sweep)
    table('   GLSL (kp) by workgroup count (also capped at n/128: its 65535 column is vkdiff\'s '
          'default geometry), M elements/s', [''] + [str(g) for g in sweep], gl_sweep)
    print('   for reference, measured here earlier: GLSL 220-345, Taichi 1.7.4 Vulkan 150-240; '
          'target: vkdiff >= 90% of GLSL')
    for s in dict.fromkeys(notes):
        print('   ' + s)


# ------------------------------------------------------------------ 3. compile time
def compile_worker():
    """Time the first call of a small kernel, split into its stages."""
    ti.init()
    t = time.perf_counter()     # what the first call imports lazily (the compile pipeline)
    from vkdiff import compiler
    from vkdiff.launch import kernel as kmod
    from vkdiff.lang import state
    imports = time.perf_counter() - t
    from vkdiff.codegen import tools
    spent = {'frontend': 0.0, 'passes': 0.0, 'codegen': 0.0, 'spirv_tools': 0.0,
             'compile_asm': 0.0, 'pipeline': 0.0}

    def timed(key, fn):
        def w(*a, **k):
            t = time.perf_counter()
            try:
                return fn(*a, **k)
            finally:
                spent[key] += time.perf_counter() - t
        return w
    tools._run = timed('spirv_tools', tools._run)
    tools.compile_asm = timed('compile_asm', tools.compile_asm)
    kmod.Kernel.build_ir = timed('frontend', kmod.Kernel.build_ir)
    compiler.TaskCodegen.generate = timed('codegen', compiler.TaskCodegen.generate)
    for f in ('_split_tasks', 'lower_task', 'optimize_reductions'):
        setattr(compiler, f, timed('passes', getattr(compiler, f)))
    rt = state.runtime()

    class Device:  # times pipeline creation (the driver compiles the shader)
        def __init__(self, d):
            self.d = d

        def __getattr__(self, name):
            return getattr(self.d, name)

        def algorithm(self, *a):
            return timed('pipeline', self.d.algorithm)(*a)

        def algorithms(self, *a):
            return timed('pipeline', self.d.algorithms)(*a)
    rt.device = Device(rt.device)
    x = ti.field(ti.f32, shape=1024)
    y = ti.field(ti.f32, shape=1024)

    @ti.kernel
    def small(a: ti.f32):
        for i in x:
            y[i] = a * ti.sin(x[i]) + x[i] * x[i]
    ti.sync()
    t = time.perf_counter()
    small(2.0)
    first_call = time.perf_counter() - t
    ti.sync()
    first = time.perf_counter() - t
    t = time.perf_counter()
    small(3.0)
    ti.sync()
    second = time.perf_counter() - t
    return {'first': imports + first, 'imports': imports, 'first_call': first_call,
            'first_sync': first - first_call,
            'second': second, **spent}


def bench_compile(args):
    rows, runs = [], (1 if args.quick else 3)
    with tempfile.TemporaryDirectory(prefix='vkdiff-bench-cache') as d, \
            tempfile.TemporaryDirectory(prefix='vkdiff-bench-pyc') as pyc:
        # Python's own bytecode cache on (this environment may set PYTHONDONTWRITEBYTECODE, which
        # would add compiling vkdiff's lazily imported modules to the first call), in a temp dir
        env = {'VKDIFF_CACHE_DIR': d, 'VKDIFF_CACHE': '1', 'PYTHONDONTWRITEBYTECODE': '',
               'PYTHONPYCACHEPREFIX': pyc}
        worker('compile', env)  # writes the .pyc files
        cases = (('cold (empty VKDIFF_CACHE_DIR)', True, {}, 0.2),
                 ('warm disk cache', False, {}, 0.03),
                 ('cold, no .pyc files', True, {'PYTHONDONTWRITEBYTECODE': '1',
                                                'PYTHONPYCACHEPREFIX': ''}, 0.2))
        for label, cold, extra, target in cases:
            rs = []
            for _ in range(runs):
                if cold:
                    for f in os.listdir(d):
                        os.remove(os.path.join(d, f))
                rs.append(worker('compile', {**env, **extra}))
            r = min(rs, key=lambda r: r['first'])
            ms = lambda v: f'{v * 1e3:.1f}'
            other = (r['first_call'] - r['frontend'] - r['passes'] - r['codegen']
                     - r['compile_asm'] - r['pipeline'])
            rows.append([label, ms(r['first']), ms(r['imports']), ms(r['frontend']), ms(r['passes']),
                         ms(r['codegen']), ms(r['spirv_tools']),
                         ms(r['compile_asm'] - r['spirv_tools']), ms(r['pipeline']),
                         ms(max(other, 0)), ms(r['first_sync']), ms(r['second']),
                         f'{target * 1e3:.0f}' + (' ok' if r['first'] <= target else ' OVER')])
    table(f'3. First call (+ sync) of a small kernel, ms (fresh processes, best of {runs}); '
          'the columns after it split it',
          ['', 'first call', 'imports', 'frontend', 'passes', 'codegen', 'spirv-tools', 'cache I/O etc',
           'pipeline', 'rest', 'its sync', '2nd call', 'target'], rows)
    print('   imports: vkdiff.launch.compiled and the passes/codegen it pulls in on the first call; '
          'frontend: AST -> IR; passes: task split, lowering, reductions; codegen: IR -> SPIR-V '
          'assembly; spirv-tools: spirv-as/-val/-opt subprocesses (with the library in-process: '
          'spirv-opt only; the in-process work counts under cache I/O etc); pipeline: '
          'vkCreateComputePipelines')
    bench_compile_gravity(args)


# the gravity potential's first forward + adjoint (a Tape): the kernel of examples/ad_gravity.py
GRAVITY_FIRST = r'''
import json, os, sys, time
if sys.argv[1] == 'taichi':
    sys.path.insert(0, sys.argv[2])
    from taichi_harness import import_taichi
    ti = import_taichi('vulkan', offline_cache=os.environ.get('TI_OFFLINE_CACHE') != '0')
else:
    import vkdiff as ti
ti.init()
N = 8
x = ti.Vector.field(2, dtype=ti.f32, shape=N, needs_grad=True)
U = ti.field(dtype=ti.f32, shape=(), needs_grad=True)

@ti.kernel
def compute_U():
    for i, j in ti.ndrange(N, N):
        r = x[i] - x[j]
        U[None] += -1 / r.norm(1e-3)

x.from_numpy(__import__('numpy').random.default_rng(1).random((N, 2)).astype('float32'))
ti.sync()
# this process, and its children (spirv-tools processes; os.times counts in 10 ms ticks)
cpu = lambda: time.process_time() + os.times().children_user + os.times().children_system
t, c = time.perf_counter(), cpu()
with ti.ad.Tape(loss=U):
    compute_U()
ti.sync()
print(json.dumps({'wall': time.perf_counter() - t, 'cpu': cpu() - c,
                  'grad': float(x.grad.to_numpy()[0, 0])}))
'''
TAICHI_PYTHON = '/work/venvs/taichi/bin/python'


def gravity_first(script, backend, env, python=None):
    """One fresh process running `script` (GRAVITY_FIRST in a file: kernels need their source):
    the first `with Tape: compute_U()` and its sync, wall and CPU seconds (CPU: the whole
    process, the driver's compiler threads included)."""
    python = python or sys.executable
    full = {**os.environ, 'PYTHONDONTWRITEBYTECODE': '', **env}
    if backend == 'vkdiff':
        full['PYTHONPATH'] = ROOT + os.pathsep + full.get('PYTHONPATH', '')
    r = subprocess.run([python, script, backend, os.path.join(ROOT, 'tools')],
                       env=full, capture_output=True, text=True, cwd=os.path.dirname(script))
    if r.returncode != 0:
        raise RuntimeError(f'gravity_first {backend} failed:\n{r.stderr[-2000:]}')
    return json.loads(r.stdout.strip().splitlines()[-1])


def bench_compile_gravity(args):
    """Cases run in turn, `runs` rounds (the machine is shared: alternating keeps the cases'
    conditions alike); best wall time of each, with its CPU time."""
    runs = 2 if args.quick else 4
    have_taichi = os.path.exists(TAICHI_PYTHON)
    with tempfile.TemporaryDirectory(prefix='vkdiff-bench-grav') as d:
        spirv, warm_spirv, mesa = (os.path.join(d, n) for n in ('spirv', 'warm', 'mesa'))
        ticache = os.path.join(d, 'ticache')
        script = os.path.join(d, 'gravity_first.py')
        with open(script, 'w') as f:
            f.write(GRAVITY_FIRST)
        cases = [('vkdiff, SPIR-V cache cold, SPIRV-Tools in-process', 'vkdiff',
                  {'VKDIFF_CACHE_DIR': spirv}, 'cold'),
                 ('vkdiff, SPIR-V cache cold, spirv-as/spirv-val processes (VKDIFF_SPIRV_LIB=0)',
                  'vkdiff', {'VKDIFF_CACHE_DIR': spirv, 'VKDIFF_SPIRV_LIB': '0'}, 'cold'),
                 ('vkdiff, SPIR-V cache warm', 'vkdiff', {'VKDIFF_CACHE_DIR': warm_spirv}, None)]
        if have_taichi:
            cases += [('Taichi 1.7.4 Vulkan, offline cache off', 'taichi',
                       {'TI_OFFLINE_CACHE': '0'}, None),
                      ('Taichi 1.7.4 Vulkan, offline cache warm', 'taichi',
                       {'TI_OFFLINE_CACHE_FILE_PATH': ticache}, None)]
        # the same, each with a fresh driver shader cache (lavapipe's LLVM compiles every shader)
        cases += [(label + '; driver cache cold', b, {**env, 'MESA_SHADER_CACHE_DIR': mesa}, 'mesa')
                  for label, b, env, cold in cases if cold == 'cold' or b == 'taichi'
                  and env.get('TI_OFFLINE_CACHE') == '0']
        # the same without the helper device that compiles a kernel's other shaders meanwhile
        # (lavapipe compiles each at its first dispatch, one after another: Runtime.prewarm)
        first_cold = next(i for i, c in enumerate(cases) if c[3] == 'mesa')
        cases.insert(first_cold + 1,
                     ('vkdiff, SPIR-V cache cold, no prewarm (VKDIFF_PREWARM=0); driver cache cold',
                      'vkdiff', {'VKDIFF_CACHE_DIR': spirv, 'VKDIFF_PREWARM': '0',
                                 'MESA_SHADER_CACHE_DIR': mesa}, 'mesa'))
        for label, b, env, cold in cases:  # fill the warm caches (driver's included)
            gravity_first(script, b, env, TAICHI_PYTHON if b == 'taichi' else None)
        best = {}
        for _ in range(runs):
            for label, b, env, cold in cases:
                for sub in (spirv, mesa) if cold == 'mesa' else (spirv,) if cold else ():
                    shutil.rmtree(sub, ignore_errors=True)
                r = gravity_first(script, b, env, TAICHI_PYTHON if b == 'taichi' else None)
                if label not in best or r['wall'] < best[label]['wall']:
                    best[label] = r
    rows = [[label, f"{r['wall'] * 1e3:.0f}", f"{r['cpu'] * 1e3:.0f}", f"{r['grad']:.6g}"]
            for label, r in best.items()]
    table(f'   Gravity (examples/ad_gravity.py, N=8): first `with Tape(U): compute_U()` + sync, '
          f'ms (fresh processes, best of {runs}, cases alternated)',
          ['', 'wall', 'CPU', 'dU/dx[0,0]'], rows)
    print('   CPU: the whole process (lavapipe compiles and runs shaders in its own threads) and '
          'its child processes; '
          '"driver cache cold": an empty MESA_SHADER_CACHE_DIR, else the driver\'s compiled '
          'shaders come from its disk cache. Target (issue 13): <= 100 ms cold')


# ------------------------------------------------------------------ 4. gravity substep
def gravity(N, rounds, max_groups=None):
    """examples/ad_gravity.py's substep at N particles: substeps/s, ms per phase, U's error."""
    if max_groups:
        os.environ['VKDIFF_MAX_GROUPS'] = str(max_groups)
    ti.init()
    dt = 1e-5
    x = ti.Vector.field(2, dtype=ti.f32, shape=N, needs_grad=True)
    v = ti.Vector.field(2, dtype=ti.f32, shape=N)
    U = ti.field(dtype=ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def compute_U():
        for i, j in ti.ndrange(N, N):
            r = x[i] - x[j]
            U[None] += -1 / r.norm(1e-3)

    @ti.kernel
    def advance():
        for i in x:
            v[i] += dt * -x.grad[i]
        for i in x:
            x[i] += dt * v[i]

    def substep():
        with ti.Tape(loss=U):
            compute_U()
        advance()

    x.from_numpy(np.random.default_rng(1).random((N, 2)).astype(np.float32))
    for _ in range(2):
        substep()
    ti.sync()
    os.environ.pop('VKDIFF_MAX_GROUPS', None)
    steps = max(2, 4096 // N * 2)
    phases = {'substep': lambda: [substep() for _ in range(steps)], 'forward': compute_U,
              'adjoint': compute_U.grad, 'advance': advance}
    best = dict.fromkeys(phases, float('inf'))
    for _ in range(rounds):
        for name, fn in phases.items():
            t = time.perf_counter()
            fn()
            ti.sync()
            best[name] = min(best[name], time.perf_counter() - t)
    best['substep'] /= steps
    # accuracy: U and dU/dx at the current positions against float64 numpy
    xs = x.to_numpy().astype(np.float64)
    with ti.Tape(loss=U):
        compute_U()
    u, grad = U[None], x.grad.to_numpy()
    d = xs[:, None, :] - xs[None, :, :]
    s = np.sqrt((d ** 2).sum(-1) + 1e-3)
    u_ref = float((-1 / s).sum())
    g_ref = 2 * (d / s[..., None] ** 3).sum(1)   # dU/dx_i (particle i appears as i and as j)
    return {'rate': 1 / best['substep'], **{k: v * 1e3 for k, v in best.items() if k != 'substep'},
            'u_err': abs(u - u_ref) / abs(u_ref),
            'g_err': np.abs(grad - g_ref).max() / np.abs(g_ref).max()}


def bench_gravity(args):
    rows, rounds = [], (2 if args.quick else 5)
    ref = {1024: ('27', '160', ''), 4096: ('1.6-2.2', '10', '>= 10')}
    for N in (1024, 4096):
        for mg in (None,) + (() if args.quick else (256, 1024, 4096)):
            r = gravity(N, rounds, mg)
            rows.append([f'N = {N}' + (f', VKDIFF_MAX_GROUPS={mg}' if mg else ''),
                         f"{r['rate']:.1f}", f"{r['forward']:.1f}", f"{r['adjoint']:.1f}",
                         f"{r['advance']:.2f}", f"{r['u_err']:.1e}", f"{r['g_err']:.1e}",
                         *(ref[N] if mg is None else ('', '', ''))])
    ti.init()
    table('4. Gravity substep (zero U, compute_U, Tape adjoint, advance) as in '
          f'examples/ad_gravity.py, best of {rounds}; errors relative to float64 numpy',
          ['', 'substeps/s', 'forward ms', 'adjoint ms', 'advance ms', 'U rel. err',
           'dU/dx rel. err', 'Taichi 1.7.4', 'Dr.Jit LLVM', 'target'], rows)
    print('   target for U: within 1e-6 relative; the max. error of dU/dx is relative to max |dU/dx|')


SECTIONS = {'launch': bench_launch, 'elementwise': bench_elementwise, 'compile': bench_compile,
            'gravity': bench_gravity}
WORKERS = {'launch': launch_worker, 'compile': compile_worker, 'bound': bound_worker}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--quick', action='store_true', help='smaller repetition counts')
    ap.add_argument('--only', choices=list(SECTIONS), help='run one section')
    ap.add_argument('--worker', choices=list(WORKERS), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(WORKERS[args.worker]()))
        return
    ti.init()
    print(f'vkdiff benchmarks on {ti.device_name()}, {os.cpu_count()} CPUs, '
          f'{datetime.datetime.now():%Y-%m-%d %H:%M}' + (' (--quick)' if args.quick else ''))
    print('load average at start: ' + ', '.join(f'{v:.2f}' for v in os.getloadavg())
          + '  (other processes on these CPUs slow lavapipe down)')
    for name, fn in SECTIONS.items():
        if args.only in (None, name):
            fn(args)


if __name__ == '__main__':
    main()
