"""Shared plumbing for tools that run Taichi programs under vkdiff and under Taichi itself
(tools/bench_programs.py, tools/run_taichi_examples.py). Not part of the vkdiff package.

- `alias_vkdiff(examples_root)`: in this process, `import taichi` (and every `taichi.<sub>`)
  resolves to vkdiff (`taichi.math` -> `vkdiff.math`, ...), except `taichi.examples.*`, which
  loads from Taichi's installed examples directory (examples import `taichi.examples.patterns`).
  A `taichi.<sub>` that vkdiff lacks fails with the ordinary ModuleNotFoundError.
- `import_taichi(arch, **options)`: the real Taichi, with `ti.init` forced to `arch` (e.g. 'vulkan',
  'cpu') and `options` (e.g. fast_math=False).
- `taichi_examples_root(python)`: where a Python with taichi installed keeps `taichi/examples`.
- `run_worker(python, argv, backend, cwd, timeout, env)`: one fresh subprocess; for
  backend='vkdiff' the checkout is put first on PYTHONPATH.

Taichi itself (taichi==1.7.4 in a side virtual environment) is a reference only, never a vkdiff
dependency.
"""
import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_TAICHI_PYTHON = '/work/venvs/taichi/bin/python'


class _TaichiAlias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """`import taichi.x.y` -> `vkdiff.x.y` (one module under both names); `taichi.examples[.z]`
    -> the file in Taichi's examples directory."""

    def __init__(self, examples_root):
        self.examples_root = examples_root

    def find_spec(self, name, path, target=None):
        if not name.startswith('taichi.') or name in sys.modules:
            return None
        rest = name[len('taichi.'):]
        if rest == 'examples' or rest.startswith('examples.'):
            if not self.examples_root:
                return None
            sub = rest.split('.')[1:]
            base = os.path.join(self.examples_root, *sub)
            if os.path.isdir(base):
                init = os.path.join(base, '__init__.py')
                if os.path.exists(init):
                    return importlib.util.spec_from_file_location(
                        name, init, submodule_search_locations=[base])
                spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
                spec.submodule_search_locations = [base]  # a namespace package
                return spec
            if os.path.exists(base + '.py'):
                return importlib.util.spec_from_file_location(name, base + '.py')
            return None
        real = 'vkdiff.' + rest
        try:
            if importlib.util.find_spec(real) is None:
                return None
        except (ImportError, AttributeError, ValueError):
            return None
        return importlib.util.spec_from_loader(name, self)

    def create_module(self, spec):
        return importlib.import_module('vkdiff.' + spec.name[len('taichi.'):])

    def exec_module(self, module):
        pass


def alias_vkdiff(examples_root=None):
    """Make `import taichi` resolve to vkdiff in this process; returns the vkdiff module."""
    if ROOT not in sys.path:
        sys.path.insert(0, ROOT)
    import vkdiff
    import vkdiff.math  # noqa: F401
    sys.modules['taichi'] = vkdiff
    for name, mod in list(sys.modules.items()):
        if name.startswith('vkdiff.') and mod is not None:
            sys.modules.setdefault('taichi.' + name[len('vkdiff.'):], mod)
    sys.meta_path.insert(0, _TaichiAlias(examples_root))
    return vkdiff


def import_taichi(arch, **options):
    """The real Taichi with `ti.init(...)` forced to arch=getattr(ti, arch) and `options`
    (e.g. fast_math=False)."""
    import taichi as ti
    orig_init = ti.init
    forced = getattr(ti, arch)

    def init(*a, **k):
        k.update(options, arch=forced)
        return orig_init(*a[1:], **k)
    ti.init = init
    return ti


def taichi_examples_root(python=DEFAULT_TAICHI_PYTHON):
    """Path of `taichi/examples` in the Taichi that `python` imports, or None."""
    if not python or not os.path.exists(python):
        return None
    r = subprocess.run([python, '-c', 'import taichi, os; print(os.path.join('
                        'os.path.dirname(taichi.__file__), "examples"))'],
                       capture_output=True, text=True)
    lines = r.stdout.strip().splitlines()
    return lines[-1] if r.returncode == 0 and lines and os.path.isdir(lines[-1]) else None


def run_worker(python, argv, backend, cwd, timeout, env=None):
    """Run `python argv...` in a fresh process: a CompletedProcess, or None on timeout."""
    full = dict(os.environ)
    full.update(env or {})
    if backend == 'vkdiff':
        full['PYTHONPATH'] = ROOT + os.pathsep + full.get('PYTHONPATH', '')
    try:
        return subprocess.run([python] + list(argv), env=full, capture_output=True, text=True,
                              timeout=timeout, cwd=cwd)
    except subprocess.TimeoutExpired:
        return None
