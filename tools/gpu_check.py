#!/usr/bin/env python3
"""One prepared check of vkdiff on a machine with a real GPU, within 10 minutes in all:

    bash tools/setup.sh && .venv/bin/python tools/gpu_check.py --out $OUT/gpu_check.json

Parts, each run in subprocesses with its own time budget (seconds; --budget-scale scales them,
e.g. 0.2 on a CPU driver; a part that runs out is stopped and reported, the next one starts):

  facts    20   the devices (type, driver, UUID), the memory types and heaps chosen, subgroup
                sizes, limits and features of the device used
  probes   130  kernels checked against numpy, each with its own share: reductions at every
                local size, native vs compare-exchange float atomics, the dynamic pool under
                contention, a long serial loop, a near-limit buffer, to_numpy bandwidth
  suite    210  the test suite (pytest -v; stopped at its budget: the tests run until then count)
  bench    120  tools/bench.py --quick, sections launch, elementwise, compile, gravity (30 each)
  render   60   reserved for the rendering check (tools/render_check.py, when there is one)

At most 540 s of budgets plus start-up; the script stops every part at its budget and the whole
at --total (570 s unscaled). Needs nothing but the built checkout (no network). Writes a JSON
report (--out) and prints a table. Options: --device index|uuid (VKDIFF_DEVICE), --only
facts,probes,... and --budget-scale S."""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

BUDGETS = {'facts': 20, 'probes': 130, 'suite': 210, 'bench': 120, 'render': 60}
TOTAL = 570
PROBES = {  # name -> share of the probes budget
    'reductions': 0.3, 'atomics': 0.2, 'dynamic_pool': 0.13, 'serial_loop': 0.12,
    'near_limit_buffer': 0.13, 'to_numpy_bandwidth': 0.12}
BENCH_SECTIONS = ('launch', 'elementwise', 'compile', 'gravity')


# ---------------------------------------------------------------- running with a time limit
def run_limited(cmd, seconds, env=None, log=None):
    """Run cmd (its own process group) for at most `seconds`: (returncode or None when stopped,
    output text, seconds taken). Output goes to `log` (a path) as it comes."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile(mode='w+') if log is None else open(log, 'w+') as out:
        p = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT,
                             start_new_session=True, text=True)
        try:
            rc = p.wait(timeout=max(1.0, seconds))
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)  # the child and everything it started
            p.wait()
            rc = None
        out.seek(0)
        text = out.read()
    return rc, text, time.perf_counter() - t0


def child_env(args, **extra):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get('PYTHONPATH', ''))
    if args.device is not None:
        env['VKDIFF_DEVICE'] = str(args.device)
    env.update(extra)
    return env


def worker(args, what, seconds, **env):
    """Run this script's worker `what` in a subprocess: its JSON result (or a stopped/failed
    record with the output's tail)."""
    with tempfile.NamedTemporaryFile(suffix='.json', delete=False) as f:
        path = f.name
    try:
        rc, text, took = run_limited([sys.executable, __file__, '--worker', what, '--result', path,
                                      '--budget-scale', str(args.budget_scale)],
                                     seconds, child_env(args, **env))
        try:
            with open(path) as fh:
                res = json.load(fh)
        except (OSError, ValueError):
            res = {'ok': False}
            res['status'] = 'stopped at its budget' if rc is None else f'exit {rc}'
            res['output'] = text[-2000:]
        res['seconds'] = round(took, 2)
        res['budget'] = round(seconds, 1)
        return res
    finally:
        os.unlink(path)


# ---------------------------------------------------------------- workers (in the child)
def _init(**kw):
    import vkdiff as ti
    ti.init(**kw)
    from vkdiff.lang import state
    return ti, state.runtime()


def w_facts(scale):
    import dataclasses
    from vkdiff.runtime import devices
    ti, rt = _init()
    info = rt.info
    mem = dict(rt.device.memory)

    def kind(t):
        if t is None:
            return None
        flags, heap = info.memory_types[t]
        return {'type': t, 'flags': devices.flag_names(flags), 'heap': heap,
                'heap_bytes': info.memory_heaps[heap][0]}
    return {
        'ok': True,
        'devices': [dataclasses.asdict(d) for d in devices.list_devices()],
        'used': {'index': info.index, 'name': info.name, 'uuid': info.uuid,
                 'device_type': info.device_type, 'driver_id': info.driver_id,
                 'driver': f'{info.driver_name} {info.driver_info}'.strip(),
                 'api_version': info.api_version},
        'memory': {'mapped': mem['mapped'], 'field': kind(mem['field']),
                   'staging': kind(mem['staging']), 'block_bytes': mem['block_size'],
                   'sub_allocated_up_to': mem['sub_allocated_up_to'],
                   'types': [{'flags': devices.flag_names(f), 'heap': h}
                             for f, h in info.memory_types],
                   'heaps': [{'bytes': s, 'device_local': bool(f & 1)}
                             for s, f in info.memory_heaps]},
        'subgroup_size': rt.subgroup_size,
        'limits': dict(rt.limits),
        'features': dict(rt.features),
        'summary': (f"{info.name} ({info.device_type}, {info.driver_id}), subgroup "
                    f"{rt.limits.get('min_subgroup_size')}-{rt.limits.get('max_subgroup_size')}, "
                    + ('mapped fields' if mem['mapped'] else
                       f"fields in {kind(mem['field'])['flags']}, staging "
                       f"{kind(mem['staging'])['flags']}")),
    }


def p_reductions(scale):
    """Sums (i32 exact, f32 against numpy's f64) and a max for trip counts giving every
    power-of-two local size, partial subgroups and several workgroups."""
    import numpy as np
    ti, rt = _init()
    rng = np.random.default_rng(3)
    bad, sizes = [], [1, 2, 3, 5, 9, 17, 33, 65, 129, 4099, max(65537, int((1 << 22) * scale))]
    for n in sizes:
        x = rng.uniform(-1, 1, n).astype(np.float32)
        f = ti.field(ti.f32, n)
        f.from_numpy(x)
        s_i, s_f, m_f = ti.field(ti.i32, ()), ti.field(ti.f32, ()), ti.field(ti.f32, ())

        @ti.kernel
        def red():
            for i in range(n):
                s_i[None] += i % 7 + 1
                s_f[None] += f[i]
                ti.atomic_max(m_f[None], f[i])
        m_f[None] = -2.0
        red()
        want_i = int(sum((np.arange(n) % 7) + 1))
        want_f = float(x.astype(np.float64).sum())
        err = abs(s_f[None] - want_f) / max(1.0, np.abs(x).sum() * 1e-3)
        if s_i[None] != want_i or err > 1e-2 or m_f[None] != x.max():
            bad.append({'n': n, 'i32': [s_i[None], want_i], 'f32': [s_f[None], want_f],
                        'max': [m_f[None], float(x.max())]})
    return {'ok': not bad, 'sizes': sizes, 'wrong': bad,
            'summary': f'{len(sizes)} trip counts, {len(bad)} wrong'}


def _histogram(disable, n, reps):
    import numpy as np
    ti, rt = _init(disable_features=disable)
    rng = np.random.default_rng(5)
    b = rng.integers(0, 64, n).astype(np.int32)
    w = rng.uniform(0, 1, n).astype(np.float32)
    fb, fw, h = ti.field(ti.i32, n), ti.field(ti.f32, n), ti.field(ti.f32, 64)
    fb.from_numpy(b)
    fw.from_numpy(w)

    @ti.kernel
    def hist():
        for i in range(n):
            h[fb[i]] += fw[i]
    best = float('inf')
    for _ in range(reps):
        h.fill(0)
        ti.sync()
        t0 = time.perf_counter()
        hist()
        ti.sync()
        best = min(best, time.perf_counter() - t0)
    want = np.bincount(b, weights=w.astype(np.float64), minlength=64)
    err = float(np.abs(h.to_numpy() - want).max() / want.max())
    return {'native': bool(rt.features.get('float32_atomic_add')), 'ms': round(best * 1e3, 3),
            'max_rel_err': err, 'ok': err < 1e-4}


def p_atomics(scale):
    """A contended float histogram (64 bins) with the device's float atomic add and with the
    compare-exchange loop vkdiff uses where there is none."""
    n, reps = max(4096, int((1 << 22) * scale)), 3
    native = _histogram([], n, reps)
    cas = _histogram(['float32_atomic_add'], n, reps)
    return {'ok': native['ok'] and cas['ok'], 'n': n, 'native': native, 'compare_exchange': cas,
            'summary': (f"n={n}: native {native['ms']} ms" if native['native'] else
                        'no native float atomics') + f", compare-exchange {cas['ms']} ms"}


def p_dynamic_pool(scale):
    """Parallel appends to one dynamic list in the pool layout (every invocation contends for
    the same chunks): no element lost or doubled."""
    import numpy as np
    os.environ['VKDIFF_DYNAMIC_POOL'] = '1'
    ti, rt = _init()
    n = max(1000, int(60000 * scale))
    x = ti.field(ti.i32)
    ti.root.dynamic(ti.i, 1 << 17, chunk_size=32).place(x)

    @ti.kernel
    def push(m: ti.i32):
        for i in range(m):
            x.append(i * 3)
    t0 = time.perf_counter()
    push(n)
    a = x.to_numpy()
    took = time.perf_counter() - t0
    ok = bool(np.array_equal(np.sort(a[:n]), np.arange(n) * 3)) and not a[n:].any()
    return {'ok': ok, 'n': n, 'ms': round(took * 1e3, 2),
            'summary': f'{n} appends {"intact" if ok else "WRONG"}'}


def p_serial_loop(scale):
    """A serial kernel of one long loop (a watchdog or loop limiter would cut it short)."""
    ti, rt = _init()
    n = max(100000, int(20_000_000 * scale))
    if rt.driver_id == 'mesa-llvmpipe':  # its loop limiter: 65,535 back-edges x 64 unrolled
        n = min(n, 4_000_000)
    out = ti.field(ti.i32, ())

    @ti.kernel
    def serial():
        s = 0
        ti.loop_config(serialize=True)
        for i in range(n):
            s = (s * 7 + i) % 1000003
        out[None] = s
    t0 = time.perf_counter()
    serial()
    got = int(out[None])
    took = time.perf_counter() - t0
    s = 0
    for i in range(n):
        s = (s * 7 + i) % 1000003
    return {'ok': got == s, 'n': n, 'ms': round(took * 1e3, 1), 'got': got, 'want': s,
            'summary': f'{n} iterations in {took * 1e3:.0f} ms' + ('' if got == s else ' WRONG')}


def p_near_limit_buffer(scale):
    """A field just below maxStorageBufferRange (at most 1 GiB x scale, and a quarter of the
    field's heap): written by a kernel, summed by a kernel and read back in part."""
    import numpy as np
    ti, rt = _init()
    limit = rt.limits['max_storage_buffer_range']
    mem = dict(rt.device.memory)
    heap = rt.info.memory_heaps[rt.info.memory_types[mem['field']][1]][0]
    n = int(min(limit - 4096, (1 << 30) * scale, heap // 4)) // 4
    f = ti.field(ti.i32, n)
    s = ti.field(ti.i32, ())

    @ti.kernel
    def fill():
        for i in range(n):
            f[i] = i % 1013

    @ti.kernel
    def total():
        for i in range(n):
            s[None] += f[i]
    fill()
    total()
    full, part = divmod(n, 1013)
    want = (full * (1012 * 1013 // 2) + part * (part - 1) // 2) % (1 << 32)
    want = want - (1 << 32) if want >= 1 << 31 else want
    tail = f.to_numpy()[-5:]
    ok = s[None] == want and list(tail) == [i % 1013 for i in range(n - 5, n)]
    return {'ok': bool(ok), 'bytes': 4 * n, 'limit': limit,
            'summary': f'{4 * n / 2**20:.0f} MiB of {limit / 2**20:.0f} MiB limit'
                       + ('' if ok else ' WRONG')}


def p_to_numpy_bandwidth(scale):
    """from_numpy / to_numpy of a 256 MiB x scale f32 field (at most maxStorageBufferRange; best
    of 3), values checked."""
    import numpy as np
    ti, rt = _init()
    n = max(1 << 16, min(int((1 << 26) * scale), rt.limits['max_storage_buffer_range'] // 4))
    x = np.arange(n, dtype=np.float32)
    f = ti.field(ti.f32, n)

    @ti.kernel
    def touch():
        for i in range(n):
            f[i] = f[i] + 1.0
    up = down = float('inf')
    for _ in range(3):
        t0 = time.perf_counter()
        f.from_numpy(x)
        ti.sync()
        up = min(up, time.perf_counter() - t0)
        touch()
        ti.sync()
        t0 = time.perf_counter()
        y = f.to_numpy()
        down = min(down, time.perf_counter() - t0)
    ok = bool(np.array_equal(y, x + 1))
    gb = 4 * n / 1e9
    return {'ok': ok, 'bytes': 4 * n, 'from_numpy_GBps': round(gb / up, 2),
            'to_numpy_GBps': round(gb / down, 2), 'mapped': bool(rt.features.get('unified_memory')),
            'summary': f'to_numpy {gb / down:.2f} GB/s, from_numpy {gb / up:.2f} GB/s'
                       + ('' if ok else ' WRONG')}


WORKERS = {'facts': w_facts, **{f'probe:{k}': globals()[f'p_{k}'] for k in PROBES}}


def run_worker(args):
    sys.path.insert(0, ROOT)
    try:
        res = WORKERS[args.worker](args.budget_scale)
    except Exception as e:  # noqa: BLE001  (reported, not raised: the next part runs)
        import traceback
        res = {'ok': False, 'status': f'{type(e).__name__}: {e}'[:500],
               'traceback': traceback.format_exc()[-3000:]}
    with open(args.result, 'w') as f:
        json.dump(res, f, default=str)


# ---------------------------------------------------------------- parts (in the parent)
def part_facts(args, budget):
    return worker(args, 'facts', budget)


def part_probes(args, budget):
    out, t0 = {}, time.perf_counter()
    names = list(PROBES)
    for i, name in enumerate(names):
        left = budget - (time.perf_counter() - t0)
        if left < 2:
            out[name] = {'ok': False, 'status': 'not run: the probes budget is spent'}
            continue
        # its share, and what the probes before it left unused (the later ones keep theirs)
        later = sum(PROBES[k] for k in names[i + 1:]) * budget
        out[name] = worker(args, f'probe:{name}', max(PROBES[name] * budget, left - later))
    ok = all(r.get('ok') for r in out.values())
    return {'ok': ok, 'probes': out,
            'summary': ', '.join(f"{k} {'ok' if r.get('ok') else 'FAIL'}" for k, r in out.items())}


def suite_order():
    """The test paths, those about devices and drivers first (the budget may stop the rest)."""
    first = ['tests/drivers', 'tests/runtime']
    rest = sorted(os.path.join('tests', e) for e in os.listdir(os.path.join(ROOT, 'tests'))
                  if (e.startswith('test_') and e.endswith('.py')) or
                  os.path.isdir(os.path.join(ROOT, 'tests', e)) and not e.startswith('_'))
    return [p for p in first if os.path.isdir(os.path.join(ROOT, p))] + \
        [p for p in rest if p not in first]


def part_suite(args, budget):
    log = os.path.join(tempfile.gettempdir(), f'gpu_check_suite_{os.getpid()}.log')
    rc, text, took = run_limited(
        [sys.executable, '-m', 'pytest', *suite_order(), '-v', '-p', 'no:cacheprovider', '-rfE',
         '--color=no'], budget, child_env(args), log=log)
    counts = {k: 0 for k in ('PASSED', 'FAILED', 'ERROR', 'SKIPPED', 'XFAIL', 'XPASS')}
    failed = []
    for line in text.splitlines():
        if '::' in line and line.startswith('tests/'):
            for k in counts:
                if f' {k}' in line:
                    counts[k] += 1
                    if k in ('FAILED', 'ERROR'):
                        failed.append(line.split(' ')[0])
                    break
    done = rc is not None
    os.unlink(log)
    return {'ok': done and rc == 0, 'complete': done, 'returncode': rc, 'counts': counts,
            'failed': failed[:100], 'seconds': round(took, 1), 'budget': round(budget, 1),
            'summary': (f"{counts['PASSED']} passed, {counts['FAILED'] + counts['ERROR']} failed, "
                        f"{counts['SKIPPED']} skipped" +
                        ('' if done else ' (stopped at its budget: the rest did not run)'))}


def part_bench(args, budget):
    out, t0 = {}, time.perf_counter()
    for i, name in enumerate(BENCH_SECTIONS):
        left = budget - (time.perf_counter() - t0)
        share = left / (len(BENCH_SECTIONS) - i)
        if share < 2:
            out[name] = {'ok': False, 'status': 'not run: the bench budget is spent'}
            continue
        rc, text, took = run_limited([sys.executable, 'tools/bench.py', '--quick', '--only', name],
                                     share, child_env(args))
        status = 'ok' if rc == 0 else ('stopped at its budget' if rc is None else f'exit {rc}')
        skipped = rc == 1 and "needs Kompute's kp package" in text  # (setup.sh --bench installs it)
        if skipped:
            status = 'skipped: needs kp (bash tools/setup.sh --bench)'
        out[name] = {'ok': rc == 0 or skipped, 'status': status, 'seconds': round(took, 1),
                     'budget': round(share, 1), 'output': text[-4000:]}
    return {'ok': all(r['ok'] for r in out.values()), 'sections': out,
            'summary': ', '.join(f"{k} {r['status']}" for k, r in out.items())}


def part_render(args, budget):
    script = os.path.join(ROOT, 'tools', 'render_check.py')
    if not os.path.exists(script):
        return {'ok': True, 'status': 'reserved (no tools/render_check.py)', 'summary': 'reserved'}
    rc, text, took = run_limited([sys.executable, script], budget, child_env(args))
    return {'ok': rc == 0, 'status': 'ok' if rc == 0 else f'exit {rc}', 'output': text[-4000:],
            'summary': text.strip().splitlines()[-1][:120] if text.strip() else ''}


PARTS = {'facts': part_facts, 'probes': part_probes, 'suite': part_suite, 'bench': part_bench,
         'render': part_render}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--out', help='the JSON report (default: gpu_check.json in the cwd)',
                    default='gpu_check.json')
    ap.add_argument('--budget-scale', type=float, default=1.0,
                    help='scale every time budget and probe size (0.2 on a CPU driver)')
    ap.add_argument('--total', type=float, default=TOTAL, help='seconds for everything (unscaled)')
    ap.add_argument('--device', help='device index or UUID (VKDIFF_DEVICE)')
    ap.add_argument('--only', help='comma-separated parts: ' + ','.join(PARTS))
    ap.add_argument('--worker', help=argparse.SUPPRESS)
    ap.add_argument('--result', help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return run_worker(args)
    parts = [p for p in (args.only.split(',') if args.only else PARTS) if p]
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        ap.error(f'unknown part(s) {unknown}; parts: {list(PARTS)}')
    t_start = time.perf_counter()
    total = args.total * args.budget_scale
    report = {'started': time.strftime('%Y-%m-%d %H:%M:%S'), 'budget_scale': args.budget_scale,
              'total_budget': total, 'parts': {}}
    for name in parts:
        left = total - (time.perf_counter() - t_start)
        budget = min(BUDGETS[name] * args.budget_scale, left)
        if budget < 1:
            report['parts'][name] = {'ok': False, 'status': 'not run: the total budget is spent'}
            continue
        t0 = time.perf_counter()
        res = PARTS[name](args, budget)
        res.setdefault('seconds', round(time.perf_counter() - t0, 1))
        res.setdefault('budget', round(budget, 1))
        report['parts'][name] = res
        print(f"[gpu_check {time.perf_counter() - t_start:5.0f}s] {name}: "
              f"{'ok' if res.get('ok') else 'FAIL'} ({res['seconds']} s of {res['budget']:.0f}) "
              f"{res.get('summary', res.get('status', ''))}", flush=True)
    report['seconds'] = round(time.perf_counter() - t_start, 1)
    report['ok'] = all(r.get('ok') for r in report['parts'].values())
    with open(args.out, 'w') as f:
        json.dump(report, f, indent=1, default=str)
    print_table(report)
    print(f'report: {args.out}')
    return 0 if report['ok'] else 1


def print_table(report):
    rows = [('part / probe', 'result', 's', 'budget', 'summary')]
    for name, r in report['parts'].items():
        rows.append((name, 'ok' if r.get('ok') else 'FAIL', f"{r.get('seconds', '')}",
                     f"{r.get('budget', '')}", r.get('summary', r.get('status', ''))))
        for k, p in (r.get('probes') or r.get('sections') or {}).items():
            rows.append(('  ' + k, 'ok' if p.get('ok') else 'FAIL', f"{p.get('seconds', '')}",
                         f"{p.get('budget', '')}", p.get('summary', p.get('status', ''))))
    w = [max(len(str(r[i])) for r in rows) for i in range(4)]
    print()
    for r in rows:
        print('  '.join(str(c).ljust(w[i]) for i, c in enumerate(r[:4])) + '  ' + str(r[4])[:110])
    print(f"total {report['seconds']} s of {report['total_budget']:.0f} s budget: "
          f"{'all ok' if report['ok'] else 'FAILURES above'}")


if __name__ == '__main__':
    sys.exit(main())
