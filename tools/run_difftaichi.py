#!/usr/bin/env python3
"""DiffTaichi's examples on vkdiff, losses and gradients compared with Taichi 1.7.4 (a table).

    .venv/bin/python tools/run_difftaichi.py --difftaichi DIR [--taichi-python PY] [--arch cpu]
        [--fp64] [--iters N] [--only NAME,...] [--timeout 600] [--json FILE] [-v]

DIR is a checkout of github.com/taichi-dev/difftaichi (its `examples/` folder is used; tested at
commit 9f4ee52, "API update"); nothing of it is copied into this project. Each example runs in a
fresh process twice, with `import taichi` resolving to vkdiff (tools/taichi_harness.py) and with
the real Taichi (a side virtual environment, `pip install taichi==1.7.4`; ti.init forced to
--arch), on a copy of its source with the few edits in PATCHES: fewer optimisation iterations
(--iters) and time steps, the command-line arguments it needs, no final visualisation pass.
--fp64 also turns every `ti.f32` into `ti.f64` and forces ti.init(default_fp=ti.f64): the
examples are chaotic simulations whose f32 losses drift apart after a few iterations by round-off
alone (Taichi CPU and Taichi Vulkan disagree as much), while f64 runs must agree closely.

Headless: cv2, matplotlib, mpl_toolkits and imageio are replaced by do-nothing modules (neither
environment needs them installed); vkdiff's GUI runs off-screen (TI_GUI_SHOW=0), Taichi's with
show_gui=False. Each run happens in an empty temporary directory.

What is compared: every time the example prints a line containing "loss" (each optimisation
iteration does, after its backward pass and before its update), the worker records the numbers
printed and, for every field among the example's globals that has a gradient, that gradient
(the whole array when small, else its sum, sum of |.| and max |.|). The table gives the first
iteration's worst gradient difference (before any update: no drift yet), the last iteration's
loss on both, and the worst relative difference of the printed numbers over all iterations.
"""
import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
import types

import numpy as np

from taichi_harness import DEFAULT_TAICHI_PYTHON, alias_vkdiff, import_taichi, run_worker

# example -> (argv, [(exact text, replacement)]); '{iters}' in a replacement is --iters. Every
# text must occur in the source (else the tool says so: difftaichi changed).
PATCHES = {
    'mass_spring_simple.py': ([], [
        ('for iter in range(25):', 'for iter in range({iters}):'),
        ('steps = 1024\n\nvis', 'steps = 256\n\nvis'),
        ("forward('initial')", 'forward()'),
        ("    forward('final')", '    pass')]),
    'mass_spring.py': (['0', 'train', '--iters', '{iters}'], [
        ('steps = 2048 // 3', 'steps = 256'),
        ("        forward('final{}'.format(options.robot_id))", '        pass')]),
    'rigid_body.py': (['0', 'train'], [
        ('for iter in range(20):', 'for iter in range({iters}):'),
        ('steps = 2048\n', 'steps = 256\n'),
        ("    forward('final{}'.format(robot_id))", '    pass')]),
    'billiards.py': ([], [
        ('for iter in range(200):', 'for iter in range({iters}):'),
        ('steps = 1024\n', 'steps = 256\n'),
        ("    forward(visualize=True, output='final')", '    pass')]),
    'diffmpm.py': (['--iters', '{iters}'], [
        ('max_steps = 2048\nsteps = 1024', 'max_steps = 128\nsteps = 128'),
        ('        if iter % 10 == 0:', '        if False:')]),
    'diffmpm_simple.py': ([], [
        ('for i in range(30):', 'for i in range({iters}):'),
        ('max_steps = 1024\nsteps = 1024', 'max_steps = 128\nsteps = 128')]),
    'diffmpm_checkpointing.py': (['--iters', '{iters}'], [
        ('max_steps = 1024\nsteps = 1024', 'max_steps = 128\nsteps = 128')]),
    'electric.py': ([], [
        ('for iter in range(200000):', 'for iter in range({iters}):'),
        ("forward(visualize=True, output='initial')", 'forward()'),
        ('vis = iter % 200 == 0', 'vis = False'),
        ('# print(iter, "loss", loss[None])', 'print(iter, "loss", loss[None])'),
        ("    forward(visualize=True, output='final')", '    pass')]),
    'wave.py': (['--iters', '{iters}'], [
        ('max_steps = 512', 'max_steps = 128'), ('steps = 256', 'steps = 64'),
        ("    forward('optimized')", '    pass')]),
    'smoke_taichi_cpu.py': (['--iters', '{iters}'], [
        ('steps = 100', 'steps = 20'),
        ('output = "test" if opt % 10 == 9 else None', 'output = None'),
        ('    forward("output")', '    pass')]),
    'smoke_taichi_gpu.py': (['--iters', '{iters}'], [
        ('steps = 100', 'steps = 20'),
        # Taichi internals (the compilation time of its LLVM program)
        ('        print("Compilation time:",\n'
         '              ti.lang.impl.get_runtime().prog.get_total_compilation_time())', ''),
        ('    forward("output")', '    pass')]),
    'smoke_taichi.py': (['--iters', '{iters}'], [
        ('steps = 100', 'steps = 20'),
        ('    forward("output")', '    pass')]),
    'diffmpm3d.py': (['--iters', '{iters}'], [
        ('max_steps = 512\nsteps = 512', 'max_steps = 32\nsteps = 32'),
        ("F' per iter {per_iter_time:.2f}s'", "''")]),
    'liquid.py': ([], [
        ('max_steps = 512\nsteps = 512', 'max_steps = 32\nsteps = 32'),
        ('for iter in range(501):', 'for iter in range({iters}):'),
        # ti.clear_all_gradients is gone from Taichi 1.x (Taichi 1.7.4 and vkdiff both fail
        # there alike): its ti.ad name
        ('        ti.clear_all_gradients()', '        ti.ad.clear_all_gradients()')]),
    'volume_renderer.py': (['--iters', '{iters}'], [
        # 64x64 pixels, 100 marching steps; the bunny (a download) replaced by the example's
        # own torus density
        ('res = 512', 'res = 64'), ('marching_steps = 1000', 'marching_steps = 100'),
        ("    if not os.path.exists('bunny_128.bin'):", '    if False:'),
        ('    volume = np.fromfile("bunny_128.bin", dtype=np.float32).reshape(\n'
         '        (density_res, density_res, density_res))', '    volume = None'),
        ('    fill_density(volume)', '    create_torus_density()')]),
    'water_renderer.py': ([], [
        # squirrel.jpg (a JPEG) and adversarial.py's VGG16 (pretrained weights, a download)
        # replaced by a synthetic picture and a fixed image gradient: what is tested is the
        # Tape with a gradient seeded by a ti.ad.no_grad function
        ("    bot_img = (cv2.imread('squirrel.jpg') / 255.0).astype(np.float32)",
         '    bot_img = np.fromfunction(lambda i, j, k: 0.5 + 0.5 * np.sin(i / 9.0 + k) * '
         'np.cos(j / 13.0), (256, 256, 3)).astype(np.float32)'),
        ('    from adversarial import vgg_grad, predict',
         '    predict = lambda img: None\n'
         '    vgg_grad = lambda img: (img - 0.5).astype(np.float32)'),
        ('max_steps = 256', 'max_steps = 64'), ('steps = 256', 'steps = 64'),
        ('for opt in range(10):', 'for opt in range({iters}):'),
        ("print('Iter', opt)", "print('Iter', opt, '(no loss: the gradient is seeded)')"),
        ("    forward('water_renderer/optimized')", '    pass')]),
    'misc/gradient_explosion.py': ([], [
        ('max_timesteps = 1024 * 1024', 'max_timesteps = 1024'),
        ('range(0, 10000 if large else 1000, 50)', 'range(50, 1000, 300)'),
        ('        ys.append(g)',
         "        ys.append(g)\n        print('alpha', alpha, 'steps', num_steps, 'loss', g)")]),
    'misc/rigid_body_toi.py': ([], [
        ('ran = np.arange(0, 0.3, 0.02)', 'ran = np.arange(0, 0.3, 0.1)')]),
    'misc/rigid_body_discountinuity.py': ([], [
        ('steps = 2048', 'steps = 256'), ('for i in range(-20, 20):', 'for i in range(-2, 1):')]),
    'misc/rigid_body_toi_visualize.py': (['1', '100'], [
        ('np.arange(0, 0.2, 0.001)', 'np.arange(0, 0.2, 0.05)'),
        ("        forward(visualize=True, dy=dy, output='animation', i=i)",
         "        forward(visualize=True, dy=dy, output='animation', i=i)\n"
         "        print('no loss; final x', x[steps - 1, 0][0], x[steps - 1, 0][1])")]),
}
EXAMPLES = list(PATCHES)


class _Anything:
    """Stands for any object of a module the examples use for pictures only."""

    def __init__(self, *a, **k):
        pass

    def __call__(self, *a, **k):
        return _Anything()

    def __getattr__(self, name):
        if name.startswith('__'):
            raise AttributeError(name)
        return _Anything()

    def __iter__(self):
        return iter(())


def _png_module():
    """vkdiff/gui/png.py (numpy + zlib only) loaded by path: both environments can use it."""
    import importlib.util
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    spec = importlib.util.spec_from_file_location(
        '_difft_png', os.path.join(here, 'vkdiff', 'gui', 'png.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _resize(img, dsize=None, fx=None, fy=None, **_):
    """cv2.resize's bilinear sampling (pixel centres aligned, edges clamped), numpy only."""
    img = np.asarray(img)
    h, w = img.shape[:2]
    ow, oh = dsize if dsize else (int(round(w * fx)), int(round(h * fy)))

    def axis(n, m):
        s = np.clip((np.arange(m) + 0.5) * (n / m) - 0.5, 0, n - 1)
        i0 = np.floor(s).astype(int)
        return i0, np.minimum(i0 + 1, n - 1), s - i0
    y0, y1, wy = axis(h, oh)
    x0, x1, wx = axis(w, ow)
    wy = wy.reshape((-1, 1) + (1,) * (img.ndim - 2))
    wx = wx.reshape((1, -1) + (1,) * (img.ndim - 2))
    f = img.astype(np.float64)
    top = f[y0][:, x0] * (1 - wx) + f[y0][:, x1] * wx
    bot = f[y1][:, x0] * (1 - wx) + f[y1][:, x1] * wx
    return (top * (1 - wy) + bot * wy).astype(img.dtype if img.dtype.kind == 'f' else np.float64)


def install_stubs(example_dir):
    """cv2, matplotlib, mpl_toolkits and imageio as do-nothing modules, except reading PNGs
    (cv2.imread: BGR; imageio.imread: as stored; relative paths also looked up beside the
    example) and cv2.resize."""
    png = _png_module()

    def find(path):
        alt = os.path.join(example_dir, path)
        return path if os.path.exists(path) or not os.path.exists(alt) else alt

    def imread(path, flags=1):
        img = png.read_png(find(path))
        rgb = img[..., :3] if img.shape[2] >= 3 else np.repeat(img[..., :1], 3, axis=2)
        return rgb[..., ::-1].copy() if flags else rgb.mean(axis=2).astype(np.uint8)
    for name in ('cv2', 'matplotlib', 'matplotlib.pyplot', 'mpl_toolkits',
                 'mpl_toolkits.mplot3d', 'imageio'):
        mod = types.ModuleType(name)
        mod.__getattr__ = lambda attr: _Anything()
        mod.__path__ = []
        sys.modules[name] = mod
    sys.modules['cv2'].imread = imread
    sys.modules['cv2'].resize = _resize
    sys.modules['imageio'].imread = lambda path, *a, **k: png.read_png(find(path))


def rel_name(path):
    """'misc/x.py' or 'x.py': an example's name relative to difftaichi's examples/."""
    d, base = os.path.split(os.path.abspath(path))
    return f'misc/{base}' if os.path.basename(d) == 'misc' else base


def patched_source(src, name, iters, fp64):
    argv, edits = PATCHES.get(name, ([], []))
    for old, new in edits:
        if old not in src:
            raise RuntimeError(f'{name}: patch target {old!r} not found (difftaichi changed?)')
        src = src.replace(old, new.format(iters=iters))
    if fp64:
        src = src.replace('ti.f32', 'ti.f64')
    return [a.format(iters=iters) for a in argv], src


def grad_summary(g, dump=None):
    """name -> {'all': gradient values} (small fields) or {'sum', 'abs' (sum of |.|), 'max'
    (max |.|)} for every field among g's values that has a gradient; `dump`: also save the whole
    arrays to this .npz file."""
    out, whole = {}, {}
    for name, v in list(g.items()):
        if name.startswith('_') or isinstance(v, (type, types.ModuleType)) or callable(v):
            continue
        if not (hasattr(v, 'to_numpy') and hasattr(v, 'shape')):
            continue
        try:
            gr = v.grad
            a = np.asarray(gr.to_numpy(), dtype=np.float64) if gr is not None else None
        except Exception:
            continue
        if a is None:
            continue
        whole[name] = a
        if a.size <= 4096:
            out[name] = {'all': a.ravel().tolist()}
        else:
            out[name] = {'sum': float(a.sum()), 'abs': float(np.abs(a).sum()),
                         'max': float(np.abs(a).max())}
    if dump:
        np.savez(dump, **whole)
    return out


def _values(s):
    return s['all'] if 'all' in s else [s['sum'], s['abs'], s['max']]


def _magnitude(s):
    a = np.asarray(_values(s) if 'all' in s else [s['max']], np.float64)
    a = a[np.isfinite(a)]
    return float(np.abs(a).max()) if a.size else 0.0


NUMBER = re.compile(r'[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|nan|inf', re.I)


def worker(backend, path, iters, fp64, out):
    import builtins
    import random
    random.seed(0)
    np.random.seed(0)
    install_stubs(os.path.dirname(os.path.abspath(path)))
    force = {'default_fp': 'f64'} if fp64 else {}
    if backend == 'vkdiff':
        ti = alias_vkdiff()
        init = ti.init
        ti.init = lambda *a, **k: init(*a, **dict(k, **{x: getattr(ti, y)
                                                       for x, y in force.items()}))
    else:
        import taichi
        ti = import_taichi(backend.split('-')[1],
                           **{x: getattr(taichi, y) for x, y in force.items()})

        class GUI(ti.GUI):
            def __init__(self, *a, **k):
                k['show_gui'] = False
                super().__init__(*a, **k)
        ti.GUI = GUI
    with open(path) as f:
        argv, src = patched_source(f.read(), rel_name(path), iters, fp64)
    sys.argv = [path] + argv
    sys.path.insert(0, os.path.dirname(path))
    g = {'__name__': '__main__', '__file__': path, '__builtins__': builtins}
    records = []
    dump = os.environ.get('DIFFT_DUMP')  # a folder: the first record's whole gradients go there
    dump = dump and os.path.join(dump, f'{os.path.basename(path)[:-3]}-{backend}.npz')

    def recording_print(*a, **k):
        builtins.print(*a, **k)
        text = ' '.join(str(x) for x in a)
        if 'loss' in text.lower():
            records.append({'line': text, 'numbers': [float(x) for x in NUMBER.findall(text)],
                            'grads': grad_summary(g, dump if not records else None)})
    g['print'] = recording_print
    res = {'error': None}
    t0 = time.perf_counter()
    try:
        exec(compile(src, path, 'exec'), g)
    except SystemExit as e:
        if e.code not in (None, 0):
            res['error'] = f'exit({e.code!r})'
    except BaseException as e:
        import traceback
        tb = traceback.extract_tb(e.__traceback__)
        where = next((f'{os.path.basename(fr.filename)}:{fr.lineno}' for fr in reversed(tb)
                      if fr.filename == path), '')
        lines = [x for x in str(e).strip().splitlines() if x.strip()] or ['']
        res['error'] = f'{type(e).__name__}: {lines[0]}'[:240] + (f' ({where})' if where else '')
        res['traceback'] = traceback.format_exc()[-4000:]
    res['elapsed'] = time.perf_counter() - t0
    res['records'] = records
    sys.stdout.flush()
    with open(out, 'w') as f:
        json.dump(res, f)
    os._exit(0)


# ------------------------------------------------------------------ driver
def run_one(python, backend, path, iters, fp64, timeout):
    tmp = tempfile.mkdtemp(prefix=f'difft-{backend}-')
    out = os.path.join(tmp, '_result.json')
    env = {'TI_GUI_SHOW': '0', 'PYTHONUNBUFFERED': '1'}
    argv = [os.path.abspath(__file__), '--worker', backend, path, str(iters),
            '1' if fp64 else '0', out]
    t0 = time.perf_counter()
    r = run_worker(python, argv, backend, tmp, timeout, env)
    res = {'wall': time.perf_counter() - t0, 'records': []}
    if r is None:
        res['error'] = f'timeout after {timeout} s'
    elif not os.path.exists(out):
        err = (r.stderr.strip().splitlines() or [f'exit status {r.returncode}'])[-1]
        res['error'] = f'crashed: {err[:200]}'
    else:
        with open(out) as f:
            res.update(json.load(f))
    res['stdout'] = r.stdout if r is not None else ''
    res['stderr'] = r.stderr if r is not None else ''
    shutil.rmtree(tmp, ignore_errors=True)
    return res


def rel_diff(a, b):
    """max |a - b| / max |b|; NaN or inf in the same places on both count as equal there, in
    one only as inf."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if a.shape != b.shape:
        return float('inf')
    bad_a, bad_b = ~np.isfinite(a), ~np.isfinite(b)
    if (bad_a != bad_b).any() or not np.array_equal(a[bad_a], b[bad_b], equal_nan=True):
        return float('inf')
    a, b = a[~bad_a], b[~bad_b]
    if a.size == 0:
        return 0.0
    scale = max(np.abs(b).max(), 1e-30)
    return float(np.abs(a - b).max() / scale)


NOISE = 1e-5  # a gradient below NOISE x the largest one on both backends is round-off noise


def compare(v, t):
    """Worst relative differences: first record's gradients (per field, on the field's scale),
    printed numbers over all records; None where there is nothing to compare."""
    rv, rt = v['records'], t['records']
    out = {'iterations': (len(rv), len(rt))}
    if not rv or not rt:
        return out
    g0, tiny = {}, []
    gv, gt = rv[0]['grads'], rt[0]['grads']
    names = sorted(set(gv) & set(gt))
    largest = max([_magnitude(gt[k]) for k in names] + [0.0])
    for k in names:
        if max(_magnitude(gv[k]), _magnitude(gt[k])) < NOISE * largest:
            tiny.append(k)  # round-off around a zero gradient on both: not compared
            continue
        g0[k] = rel_diff(_values(gv[k]), _values(gt[k]))
    out['grad0'] = g0
    out['tiny0'] = tiny
    out['nonfinite0'] = sorted(k for k in g0 if not np.isfinite(_values(gv[k])).all())
    worst = 0.0
    for a, b in zip(rv, rt):
        na, nb = a['numbers'], b['numbers']
        if len(na) != len(nb):
            worst = float('inf')
            continue
        for x, y in zip(na, nb):
            worst = max(worst, abs(x - y) / max(abs(y), 1e-30) if x != y else 0.0)
    out['printed'] = worst
    out['last'] = (rv[-1]['line'], rt[-1]['line'])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--difftaichi', help='a difftaichi checkout (required)')
    ap.add_argument('--taichi-python', default=DEFAULT_TAICHI_PYTHON)
    ap.add_argument('--arch', default='cpu', help='Taichi backend of the reference run')
    ap.add_argument('--fp64', action='store_true')
    ap.add_argument('--iters', type=int, default=3)
    ap.add_argument('--only', default='')
    ap.add_argument('--timeout', type=int, default=600)
    ap.add_argument('--json')
    ap.add_argument('--dump', help='folder: save each run\'s first-iteration gradients (.npz)')
    ap.add_argument('-v', action='store_true')
    ap.add_argument('--worker', nargs=5, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.worker:
        b, p, it, fp, out = a.worker
        return worker(b, p, int(it), fp == '1', out)
    if not a.difftaichi:
        ap.error('--difftaichi DIR is required')
    if a.dump:
        os.makedirs(a.dump, exist_ok=True)
        os.environ['DIFFT_DUMP'] = os.path.abspath(a.dump)
    root = os.path.join(a.difftaichi, 'examples')
    names = [n for n in EXAMPLES if not a.only or any(s in n for s in a.only.split(','))]
    rows = []
    for n in names:
        path = os.path.join(root, n)
        v = run_one(sys.executable, 'vkdiff', path, a.iters, a.fp64, a.timeout)
        t = run_one(a.taichi_python, f'taichi-{a.arch}', path, a.iters, a.fp64, a.timeout)
        row = {'example': n, 'vkdiff_error': v.get('error'), 'taichi_error': t.get('error'),
               'vkdiff_s': round(v['wall'], 1), 'taichi_s': round(t['wall'], 1)}
        row.update(compare(v, t))
        rows.append(row)
        print_row(row)
        if a.v:
            for r, tag in ((v, 'vkdiff'), (t, 'taichi')):
                if r.get('error'):
                    print(f'--- {tag}:\n' + r.get('traceback', r['stderr'][-3000:]))
    if a.json:
        with open(a.json, 'w') as f:
            json.dump(rows, f, indent=1)


def print_row(r):
    if r['vkdiff_error'] or r['taichi_error']:
        print(f"{r['example']}: vkdiff {r['vkdiff_error'] or 'ok'} | taichi "
              f"{r['taichi_error'] or 'ok'}", flush=True)
        return
    g0 = r.get('grad0') or {}
    worst = max(g0.values()) if g0 else None
    print(f"{r['example']}: iterations {r['iterations']}, first-iteration gradients worst rel "
          f"diff {worst if worst is None else f'{worst:.2e}'} "
          f"({', '.join(f'{k} {x:.1e}' for k, x in g0.items())}; NaN/inf in both: "
          f"{', '.join(r.get('nonfinite0', [])) or 'none'}; ~0 on both: "
          f"{', '.join(r.get('tiny0', [])) or 'none'}), printed numbers worst "
          f"{r.get('printed', float('nan')):.2e}; last: vkdiff {r.get('last', ('', ''))[0]!r} "
          f"taichi {r.get('last', ('', ''))[1]!r}; {r['vkdiff_s']} s vs {r['taichi_s']} s",
          flush=True)


if __name__ == '__main__':
    sys.exit(main())
