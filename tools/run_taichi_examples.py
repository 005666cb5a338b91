#!/usr/bin/env python3
"""Taichi's shipped examples run unchanged on vkdiff: a table (issue 11 item 3).

    .venv/bin/python tools/run_taichi_examples.py [--taichi-python /work/venvs/taichi/bin/python]
        [--frames 3] [--timeout 300] [--only SUBSTR,...] [--no-compare] [--json FILE] [-v]

Finds every example in the `taichi/examples/` directory of Taichi 1.7.4's wheel (installed in a
side virtual environment, `pip install taichi==1.7.4`: a reference, never a vkdiff dependency),
runs each one in a fresh process, headless, with `import taichi` resolving to vkdiff
(tools/taichi_harness.py), for a fixed number of GUI frames: vkdiff's own GUI runs off-screen
(TI_GUI_SHOW=0), and so does its GGUI (`ti.ui.Window`); VKDIFF_GUI_MAX_FRAMES=N makes
`gui.running` / `window.running` False after N frames and a later show() end the program, so `while gui.running` and `while True` loops both stop. Each
example runs in an empty temporary directory (files it writes go there), with `random` and
`numpy.random` seeded, matplotlib on its Agg backend, and a per-example timeout. Packages some
examples import but neither environment has (matplotlib) can be added with --extra-site DIR
(`pip install --target DIR matplotlib`), appended to both backends' sys.path.

The same example (except the GGUI ones: Taichi's off-screen GGUI raises "show_window must be
True" on the input calls they make every frame) then runs under Taichi's CPU backend (ti.init forced to arch=ti.cpu, its GUI
off-screen and stopped after the same number of frames) and the two are compared: every field
(and ndarray) reachable from the example's globals at the end, and the numbers it printed,
within a relative tolerance (float atomics sum in a different order). An example that draws
random numbers on the device (ti.random) is "not deterministic": vkdiff's generator is not
Taichi's; so is one that differs and reads the wall clock (its state depends on run time). Where vkdiff differs from Taichi CPU, Taichi's own Vulkan backend (same lavapipe
device) is run too, as the yardstick for float round-off: "yes, to round-off" means vkdiff
differs from Taichi CPU in no more values, and by no more, than 3x what Taichi Vulkan does
(chaotic programs such as a Julia set amplify last-bit differences). Where that does not explain
it either, two more runs do: Taichi CPU with fast_math=False ("yes, as Taichi CPU without
fast_math": Taichi's fast math rewrites `x / c` as `x * (1 / c)`, vkdiff divides exactly), and
vkdiff with ti.init(debug=True) ("undefined: reads out of range": the example indexes a field out
of its range, undefined behaviour in Taichi, whose backends read different things there).
Taichi's results are cached (--cache) per example, arch and frame count.
A few arrays hold no result to compare entry by entry and are compared by a rule (ARRAY_RULES,
with the reason per example): a list filled through an atomic counter as a set of rows, an
iterative solver's scratch vectors at its stopping point (round-off noise: Taichi CPU and Taichi
Vulkan differ there as much) on the scale of what they are a residual of.

Columns: example; runs on vkdiff (yes / error with its first line / skipped with the reason);
matches Taichi CPU (yes / no with the worst difference / not deterministic / not compared with
why); vkdiff time (whole process: import, compilation, the frames) and Taichi CPU time.
"""
import argparse
import hashlib
import json
import os
import re
import shutil
import sys
import tempfile
import time

import numpy as np

from taichi_harness import (DEFAULT_TAICHI_PYTHON, alias_vkdiff, import_taichi, run_worker,
                            taichi_examples_root)

# Command-line arguments that select an example's ti.GUI path over its GGUI one.
ARGV = {'simulation/implicit_fem.py': ['--gui', 'cpu']}
# Arrays of an example whose values are not a result to compare entry by entry, with how they are
# compared instead: ('rows', k): as a set of k-entry rows (a list filled through an atomic
# counter: its order depends on scheduling); ('scale', other): on the magnitude of array `other`
# (a solver's internals at its stopping point, round-off noise that another float order changes
# completely but that stays small next to what it is a residual of).
ARRAY_RULES = {
    'simulation/implicit_fem.py': {
        # get_indices(): m = ti.atomic_add(cnt, 1); indices[3m..3m+2] = a surface triangle
        'indices': ('rows', 3),
        # cg() stops once |r|^2 <= 1e-12 |r0|^2: its residual r = b - A v (F_r0), last search
        # direction d (F_p0) and A d (F_mul_ans) are then ~1e-6 of b (F_b), their digits the
        # float summation order's; each cg() rewrites them before reading them. Taichi CPU and
        # Taichi Vulkan differ there as much as vkdiff does (issue 11 notes)
        'F_r0': ('scale', 'F_b'), 'F_p0': ('scale', 'F_b'), 'F_mul_ans': ('scale', 'F_b'),
    },
}
RTOL = 1e-3
CACHE_VERSION = 2  # raise when the worker's results change meaning
NOISE = re.compile(r'^\s*(\[Taichi\]|\[vkdiff|\[[IWED] \d|\[W |\[I |.*Warning|warnings\.warn)')
TIMING = re.compile(r'\b(time|times|sec|secs|seconds|fps|ms|elapsed|took)\b', re.I)
NUMBER = re.compile(r'[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf', re.I)


# ------------------------------------------------------------------ worker (one example)
def capped_taichi_gui(ti, frames):
    """Taichi's GUI, off-screen, with VKDIFF_GUI_MAX_FRAMES's behaviour (the reference run)."""
    class GUI(ti.GUI):
        def __init__(self, *a, **k):
            k['show_gui'] = False
            super().__init__(*a, **k)

        def show(self, *a, **k):
            if self.frame >= frames:
                raise SystemExit(0)
            super().show(*a, **k)
            if self.frame >= frames:
                self.running = False
    return GUI


def collect_arrays(ti, g, kinds):
    """name -> numpy array, for every field/ndarray among g's values and their attributes."""
    out = {}

    def add(name, v):
        try:
            a = v.to_numpy()
        except Exception:  # a field that cannot be read back is not compared
            return
        if isinstance(a, dict):
            for k, x in a.items():
                if np.asarray(x).dtype != object:
                    out[f'{name}.{k}'] = np.asarray(x)
        elif np.asarray(a).dtype != object:  # e.g. a Python object with a to_numpy() of its own
            out[name] = np.asarray(a)
    for name, v in list(g.items()):
        if name.startswith('__') or isinstance(v, type):
            continue
        if isinstance(v, kinds):
            add(name, v)
        elif hasattr(v, '__dict__') and not callable(v) and type(v).__module__ != 'builtins':
            for an, av in list(vars(v).items()):
                if isinstance(av, kinds):
                    add(f'{name}.{an}', av)
    return out


def worker(backend, path, frames, out, examples_root):
    import random
    for d in filter(None, os.environ.get('TIEX_EXTRA_SITE', '').split(os.pathsep)):
        sys.path.append(d)  # after the venv's own packages (its numpy wins)
    random.seed(0)
    np.random.seed(0)
    if backend.startswith('vkdiff'):
        ti = alias_vkdiff(examples_root)
        kinds = (ti.Field, ti.Ndarray, ti.StructField)
        if backend == 'vkdiff-debug':  # every index checked (tells undefined reads)
            init = ti.init
            ti.init = lambda *a, **k: init(*a, **dict(k, debug=True))
    else:
        exact = {'fast_math': False} if backend.endswith('-exact') else {}
        ti = import_taichi(backend.split('-')[1], **exact)
        ti.GUI = capped_taichi_gui(ti, frames)
        from taichi.lang._ndarray import Ndarray
        from taichi.lang.field import Field
        kinds = (Field, Ndarray)
    rel = os.path.relpath(path, examples_root)
    sys.argv = [path] + ARGV.get(rel, [])
    sys.path.insert(0, os.path.dirname(path))
    g = {'__name__': '__main__', '__file__': path, '__builtins__': __builtins__}
    res = {'error': None}
    t0 = time.perf_counter()
    try:
        with open(path) as f:
            code = compile(f.read(), path, 'exec')
        try:
            exec(code, g)
        except SystemExit as e:
            if e.code not in (None, 0):
                raise RuntimeError(f'exit({e.code!r})') from e
        try:
            ti.sync()
        except Exception as e:  # Taichi: an example that never called ti.init()
            if 'init()' not in str(e):
                raise
    except BaseException as e:  # report it: the table shows the first line
        import traceback
        tb = traceback.extract_tb(e.__traceback__)
        where = next((f'{os.path.basename(fr.filename)}:{fr.lineno}' for fr in reversed(tb)
                      if fr.filename == path), '')
        lines = [x for x in str(e).strip().splitlines() if x.strip()] or ['']
        first = lines[-1].strip() if lines[0].startswith('File "') else lines[0]  # located
        res['error'] = f'{type(e).__name__}: {first}'[:200] + (f' ({where})' if where else '')
        res['traceback'] = traceback.format_exc()[-3000:]
    res['elapsed'] = time.perf_counter() - t0
    arrays = collect_arrays(ti, g, kinds) if res['error'] is None else {}
    np.savez(out + '.npz', **arrays)
    sys.stdout.flush()
    try:  # kernel print() output buffered in C stdio (Taichi's CPU backend)
        import ctypes
        ctypes.CDLL(None).fflush(None)
    except Exception:
        pass
    with open(out + '.json', 'w') as f:
        json.dump(res, f)
    os._exit(0)  # skip interpreter teardown (GUI/device destructors of a half-run example)


# ------------------------------------------------------------------ driver
def list_examples(root):
    found = []
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if not x.startswith('__'))
        for f in sorted(files):
            if f.endswith('.py') and f != '__init__.py':
                found.append(os.path.relpath(os.path.join(d, f), root))
    return sorted(found)


def uses_ggui(src):
    """Whether the example draws with ti.ui (GGUI) rather than ti.GUI."""
    return 'ti.ui.' in src and 'ti.GUI' not in src


def static_notes(src):
    """(skip reason or None, reason it is not deterministic or None) from the source."""
    skip = None
    nondet = None
    if re.search(r'\bti\.(random|randn)\b', src):
        nondet = 'ti.random'
    return skip, nondet


def uses_clock(src):
    """Whether the example reads the wall clock (its results may depend on how fast it runs)."""
    return re.search(r'\btime\.(time|time_ns|perf_counter)\(', src) is not None


EXTRA_SITE = ''


def run_one(python, backend, path, frames, timeout, examples_root):
    tmp = tempfile.mkdtemp(prefix=f'tiex-{backend}-')
    out = os.path.join(tmp, '_result')
    env = {'TI_GUI_SHOW': '0', 'VKDIFF_GUI_MAX_FRAMES': str(frames), 'MPLBACKEND': 'Agg',
           'PYTHONUNBUFFERED': '1', 'TIEX_EXTRA_SITE': EXTRA_SITE}
    t0 = time.perf_counter()
    r = run_worker(python, [os.path.abspath(__file__), '--worker', backend, path, str(frames),
                            out, examples_root], backend, tmp, timeout, env)
    res = {'wall': time.perf_counter() - t0}
    if r is None:
        res['error'] = f'timeout after {timeout} s'
    elif not os.path.exists(out + '.json'):
        err = (r.stderr.strip().splitlines() or [f'exit status {r.returncode}'])[-1]
        res['error'] = f'crashed: {err[:150]}'
    else:
        with open(out + '.json') as f:
            res.update(json.load(f))
        with np.load(out + '.npz') as z:
            res['arrays'] = {k: z[k] for k in z.files}
    res['stdout'] = r.stdout if r is not None else ''
    res['stderr'] = r.stderr if r is not None else ''
    shutil.rmtree(tmp, ignore_errors=True)
    return res


def printed_numbers(text):
    """The numbers printed on each line that is not a banner, warning or timing line, nor part
    of an IR dump (`ti.init(print_ir=True)`: Taichi prints `kernel {` ... `}` to stdout)."""
    lines = []
    in_ir = False
    for line in text.splitlines():
        if in_ir or line == 'kernel {':
            in_ir = line != '}'
            continue
        if NOISE.match(line) or TIMING.search(line) or not line.strip():
            continue
        lines.append((NUMBER.sub('#', line).strip(), [float(x) for x in NUMBER.findall(line)]))
    return lines


def close(a, b, scale=None):
    """(worst difference relative to b's magnitude, or to `scale`, elements beyond RTOL,
    elements)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        return float('inf'), max(a.size, b.size), max(a.size, b.size)
    if scale is None:
        finite = b[np.isfinite(b)]
        scale = float(np.abs(finite).max()) if finite.size else 0.0
    scale = max(scale, 1e-6)
    with np.errstate(invalid='ignore'):
        d = np.atleast_1d(np.abs(a - b) / scale)
    d[np.atleast_1d((a == b) | (np.isnan(a) & np.isnan(b)))] = 0.0
    d[np.isnan(d)] = np.inf
    return (float(d.max()) if d.size else 0.0), int((d > RTOL).sum()), d.size


def sorted_rows(a, k):
    """a's entries as rows of k, in lexicographic order (a list whose order is scheduling's)."""
    rows = np.asarray(a).reshape(-1, k)
    return rows[np.lexsort(rows.T[::-1])] if rows.size else rows


def compared_arrays(va, ta, rules):
    """{label: close(...)} for Taichi's arrays ta against vkdiff's va, each by its rule
    (ARRAY_RULES) if it has one: the label says how it was compared."""
    out = {}
    for name in sorted(ta):
        rule = rules.get(name)
        if rule is None:
            out[name] = close(va[name], ta[name])
        elif rule[0] == 'rows':
            a, b = np.asarray(va[name]), np.asarray(ta[name])
            out[f'{name} (as a set of rows)'] = (
                close(sorted_rows(a, rule[1]), sorted_rows(b, rule[1])) if a.shape == b.shape
                else close(a, b))
        elif rule[0] == 'scale':
            ref = np.asarray(ta[rule[1]], dtype=np.float64)
            scale = float(np.abs(ref[np.isfinite(ref)]).max()) if ref.size else 0.0
            out[f"{name} (on {rule[1]}'s scale)"] = close(va[name], ta[name], scale)
        else:
            raise ValueError(f'unknown array rule {rule!r} for {name}')
    return out


def differences(v, t, rules=None):
    """{name: (worst rel. diff, values beyond RTOL, values)} of run v against run t (fields and
    printed numbers; the arrays in `rules` compared by their ARRAY_RULES entry), or a string
    saying why they cannot be compared value by value."""
    va, ta = v.get('arrays', {}), t.get('arrays', {})
    missing = sorted(set(ta) - set(va))
    if missing:
        return f'fields missing: {", ".join(missing[:3])}'
    pv, pt = printed_numbers(v['stdout']), printed_numbers(t['stdout'])
    if [p[0] for p in pv] != [p[0] for p in pt]:
        for (lv, _), (lt, _) in zip(pv + [('<end>', [])] * len(pt), pt + [('<end>', [])] * len(pv)):
            if lv != lt:
                return f'printed "{lv[:40]}" where Taichi printed "{lt[:40]}"'
    out = compared_arrays(va, ta, rules or {})
    for k, ((line, xs), (_, ys)) in enumerate(zip(pv, pt)):
        out[f'printed line {k + 1} "{line[:25]}"'] = close(xs, ys)
    return out


def compare(v, t, u=None, rules=None):
    """(verdict, detail) for vkdiff's run v against Taichi CPU's run t; u: Taichi Vulkan's run,
    the yardstick for float round-off (a different compiler and device give different last bits,
    which chaotic programs amplify); rules: the example's ARRAY_RULES."""
    dv = differences(v, t, rules)
    if isinstance(dv, str):
        return 'no', dv
    if not dv:
        return 'not compared', 'no fields or printed numbers'
    what = f'{len(dv)} arrays/printed lines'
    if rules:
        what += f' ({", ".join(sorted(rules))} by ARRAY_RULES)'
    bad = {k: x for k, x in dv.items() if x[1]}
    if not bad:
        return 'yes', f'{what}; worst rel. diff {max(x[0] for x in dv.values()):.1e}'
    k, (w, nbad, n) = max(bad.items(), key=lambda kv: (kv[1][1] / kv[1][2], kv[1][0]))
    detail = f'{k}: {nbad} of {n} values differ, worst rel. diff {w:.2g}'
    du = differences(u, t, rules) if u is not None and not u.get('error') else None
    if isinstance(du, dict) and set(du) == set(dv):
        roundoff = all(du[k][1] and x[1] <= 3 * du[k][1] and x[0] <= 3 * du[k][0]
                       for k, x in bad.items())
        uw, ubad, _ = du[k]
        detail += f' (Taichi Vulkan: {ubad} differ, worst {uw:.2g})'
        if roundoff:
            return 'yes, to round-off', detail
    return 'no', detail


EXACT = 'yes, as Taichi CPU without fast_math'
UNDEFINED = 'undefined: reads out of range'


def second_opinion(verdict, detail, v, exact=None, debug=None, rules=None):
    """(verdict, detail) for a vkdiff run v that differs from Taichi CPU, given Taichi CPU's run
    with fast_math=False (`exact`: Taichi's default fast math rewrites e.g. `x / c` as
    `x * (1 / c)`, a last-bit difference chaotic programs amplify) and vkdiff's run with
    ti.init(debug=True) (`debug`: an out-of-range index is undefined behaviour in Taichi, and
    what such a read returns differs between backends)."""
    if exact is not None and not exact.get('error') and compare(v, exact, rules=rules)[0] == 'yes':
        return EXACT, detail + '; equal to Taichi CPU with fast_math=False'
    err = (debug or {}).get('error') or ''
    if 'Out of bound access' in err:
        return UNDEFINED, err.split(': ', 1)[-1][:150]
    return verdict, detail


def cached_taichi(cache, python, arch, path, rel, frames, timeout, examples_root):
    """Taichi's run of an example on arch ('cpu', 'vulkan'; 'cpu-exact': CPU with
    fast_math=False), cached by source and frames."""
    key = hashlib.sha1(open(path, 'rb').read() + f'{CACHE_VERSION}{arch}{frames}'
                       f'{ARGV.get(rel)}{EXTRA_SITE}'.encode())
    f = os.path.join(cache, key.hexdigest()[:20] + '.npz') if cache else None
    if f and os.path.exists(f):
        with np.load(f, allow_pickle=False) as z:
            meta = json.loads(str(z['__meta__']))
            meta['arrays'] = {k: z[k] for k in z.files if k != '__meta__'}
            return meta
    t = run_one(python, 'taichi-' + arch, path, frames, timeout, examples_root)
    if f and not (t.get('error') or '').startswith('timeout'):
        os.makedirs(cache, exist_ok=True)
        meta = {k: x for k, x in t.items() if k != 'arrays'}
        np.savez(f, __meta__=json.dumps(meta), **t.get('arrays', {}))
    return t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--taichi-python', default=DEFAULT_TAICHI_PYTHON,
                    help='a Python with taichi==1.7.4 (finds the examples; the reference run)')
    ap.add_argument('--frames', type=int, default=3, help='GUI frames per example')
    ap.add_argument('--timeout', type=int, default=300, help='seconds per example and backend')
    ap.add_argument('--only', default='', help='comma-separated substrings of example paths')
    ap.add_argument('--no-compare', action='store_true', help='run vkdiff only')
    ap.add_argument('--cache', default=os.path.expanduser('~/.cache/vkdiff-taichi-examples'),
                    help="directory caching Taichi CPU's results ('' for none)")
    ap.add_argument('--no-vulkan-reference', action='store_true',
                    help="when vkdiff differs from Taichi CPU, do not run Taichi's Vulkan "
                         "backend to tell float round-off from a wrong result")
    ap.add_argument('--extra-site', default='',
                    help='directories appended to both backends\' sys.path, for packages some '
                         'examples import (e.g. pip install --target DIR matplotlib)')
    ap.add_argument('--json', default='', help='also write the table as JSON here')
    ap.add_argument('-v', '--verbose', action='store_true', help="print each error's traceback")
    args = ap.parse_args()
    global EXTRA_SITE
    EXTRA_SITE = args.extra_site
    root = taichi_examples_root(args.taichi_python)
    if root is None:
        sys.exit(f'no taichi installation found for {args.taichi_python}: install taichi==1.7.4 '
                 f'in a side virtual environment and pass --taichi-python')
    examples = list_examples(root)
    if args.only:
        keys = args.only.split(',')
        examples = [e for e in examples if any(k in e for k in keys)]
    rows = []
    for rel in examples:
        path = os.path.join(root, rel)
        with open(path) as f:
            src = f.read()
        skip, nondet = static_notes(src)
        row = {'example': rel, 'runs': None, 'match': None, 'detail': '', 'time': None,
               'taichi_time': None}
        if skip:
            row.update(runs=f'skipped: {skip}', match='not compared')
            rows.append(row)
            print(f'  {rel}: {row["runs"]}', file=sys.stderr)
            continue
        v = run_one(sys.executable, 'vkdiff', path, args.frames, args.timeout, root)
        row['time'] = v['wall']
        if v.get('error') and re.search(r"has no attribute 'ui'|No module named 'taichi.ui'",
                                        v['error']):
            row.update(runs='skipped: needs ti.ui (GGUI)', match='not compared')
        elif v.get('error'):
            row['runs'] = 'error: ' + v['error']
            if args.verbose:
                print(v.get('traceback', '') or v['stderr'][-3000:], file=sys.stderr)
        else:
            row['runs'] = 'yes'
        t = None
        if uses_ggui(src):  # Taichi's off-screen GGUI raises on its input calls (get_event...)
            row['match'] = 'not compared'
            row['detail'] = 'GGUI example: Taichi cannot run it headless'
        if not args.no_compare and not row['runs'].startswith('skipped') and not uses_ggui(src):
            t = cached_taichi(args.cache, args.taichi_python, 'cpu', path, rel, args.frames,
                              args.timeout, root)
            row['taichi_time'] = t['wall']
        if row['match']:
            pass
        elif t is None:
            row['match'] = 'not compared'
        elif nondet:
            row['match'], row['detail'] = 'not deterministic', nondet
        elif t.get('error'):
            row['match'], row['detail'] = 'not compared', 'Taichi CPU: ' + t['error']
        elif v.get('error'):
            row['match'] = 'not compared'
        else:
            rules = ARRAY_RULES.get(rel, {})
            row['match'], row['detail'] = compare(v, t, rules=rules)
            if row['match'] == 'no' and not args.no_vulkan_reference:
                u = cached_taichi(args.cache, args.taichi_python, 'vulkan', path, rel,
                                  args.frames, args.timeout, root)
                row['match'], row['detail'] = compare(v, t, u, rules)
            if row['match'] == 'no' and not args.no_vulkan_reference:
                x = cached_taichi(args.cache, args.taichi_python, 'cpu-exact', path, rel,
                                  args.frames, args.timeout, root)
                d = run_one(sys.executable, 'vkdiff-debug', path, args.frames, args.timeout,
                            root)
                row['match'], row['detail'] = second_opinion(row['match'], row['detail'], v,
                                                             x, d, rules)
            if row['match'] in ('no', 'yes, to round-off') and uses_clock(src):
                row['match'] = 'not deterministic'
                row['detail'] = 'reads the wall clock (time.time...); ' + row['detail']
        rows.append(row)
        print(f'  {rel}: {row["runs"]} | {row["match"]} {row["detail"]}', file=sys.stderr)
    print_table(rows, args.frames)
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(rows, f, indent=1)


def print_table(rows, frames):
    fmt = lambda s: '-' if s is None else f'{s:.1f}'
    table = [[r['example'], r['runs'], (r['match'] + (f' ({r["detail"]})' if r['detail'] else '')),
              fmt(r['time']), fmt(r['taichi_time'])] for r in rows]
    header = ['example', 'runs on vkdiff', 'matches Taichi CPU', 'vkdiff s', 'Taichi CPU s']
    widths = [min(70, max(len(str(x[i])) for x in [header] + table)) for i in range(5)]
    print(f'Taichi 1.7.4 examples on vkdiff, {frames} GUI frames each, headless')
    print(' | '.join(h.ljust(w) for h, w in zip(header, widths)))
    print('-+-'.join('-' * w for w in widths))
    for x in table:
        print(' | '.join(str(c).ljust(w) for c, w in zip(x, widths)))
    n = len(rows)
    skipped = sum(r['runs'].startswith('skipped') for r in rows)
    ran = sum(r['runs'] == 'yes' for r in rows)
    match = sum(r['match'] == 'yes' for r in rows)
    roundoff = sum(r['match'] == 'yes, to round-off' for r in rows)
    nondet = sum(r['match'] == 'not deterministic' for r in rows)
    exact = sum(r['match'] == EXACT for r in rows)
    undefined = sum(r['match'] == UNDEFINED for r in rows)
    differ = sum(r['match'] == 'no' for r in rows)
    print(f'{n} examples: {skipped} skipped, {ran} of {n - skipped} run on vkdiff; '
          f'{match} match Taichi CPU, {roundoff} more to round-off, {exact} more match Taichi '
          f'CPU without fast math, {undefined} read out of range (undefined), {differ} differ; '
          f'{nondet} not deterministic (ti.random, wall clock)')


if __name__ == '__main__':
    if len(sys.argv) > 1 and sys.argv[1] == '--worker':
        worker(sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5], sys.argv[6])
    else:
        main()
