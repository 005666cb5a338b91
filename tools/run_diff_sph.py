#!/usr/bin/env python3
"""Taichi's autodiff/diff_sph example, its training loop (`--train`), on vkdiff or on Taichi:
prints the loss of each optimisation step. Nothing of Taichi's wheel is copied into vkdiff: the
example is loaded from the installed taichi package's examples directory at run time.

    PYTHONPATH=. python tools/run_diff_sph.py [--undo]          # vkdiff (import taichi -> vkdiff)
    /work/venvs/taichi/bin/python tools/run_diff_sph.py --taichi  # Taichi 1.7.4, arch=cpu

--undo makes every ti.ad.Tape an undo=True Tape (vkdiff/ad/tape_undo.py). Stop it with
`timeout`: the example trains for 7 epochs. Not part of the vkdiff package."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import taichi_harness as h  # noqa: E402

os.environ.setdefault('MPLBACKEND', 'Agg')
try:
    import matplotlib  # noqa: F401  (the example plots its losses at the end)
except ImportError:  # neither environment has it: a no-op pyplot
    import types

    class _NoPlot(types.ModuleType):
        def __getattr__(self, name):
            return lambda *a, **k: None
    sys.modules['matplotlib'] = _NoPlot('matplotlib')
    sys.modules['matplotlib.pyplot'] = _NoPlot('matplotlib.pyplot')
os.environ.setdefault('TI_GUI_SHOW', '0')
taichi = '--taichi' in sys.argv
undo = '--undo' in sys.argv
if taichi:  # the file itself, in a fresh process, ti.init's arch overridden by TI_ARCH=x64
    import subprocess
    import tempfile
    root = h.taichi_examples_root(sys.executable)
    path = os.path.join(root or '', 'autodiff', 'diff_sph', 'diff_sph.py')
    if not os.path.exists(path):
        sys.exit(f'skipped: {path} is not installed')
    stub = tempfile.mkdtemp()
    os.makedirs(os.path.join(stub, 'matplotlib'))
    for name in ('__init__.py', 'pyplot.py'):  # a no-op pyplot where matplotlib is missing
        with open(os.path.join(stub, 'matplotlib', name), 'w') as f:
            f.write('def __getattr__(name):\n    return lambda *a, **k: None\n')
    env = dict(os.environ, TI_ARCH='x64')
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        env['PYTHONPATH'] = stub
    sys.exit(subprocess.call([sys.executable, path, '--train'], env=env))
else:
    root = h.taichi_examples_root()
    h.alias_vkdiff(root)
    import taichi as ti
    if undo:
        Tape = ti.ad.Tape

        class UndoTape(Tape):
            def __init__(self, *a, **k):
                k.setdefault('undo', True)
                super().__init__(*a, **k)
        ti.ad.Tape = UndoTape
path = os.path.join(root, 'autodiff', 'diff_sph', 'diff_sph.py')
if not os.path.exists(path):
    sys.exit(f'skipped: {path} is not installed')
sys.argv = [path, '--train']
sys.path.insert(0, os.path.dirname(path))
with open(path) as f:
    code = compile(f.read(), path, 'exec')  # (as tools/run_taichi_examples.py: Taichi finds
exec(code, {'__name__': '__main__', '__file__': path, '__builtins__': __builtins__})  # methods)
