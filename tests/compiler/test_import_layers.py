"""The compiler core's import layering (issue 15, /work/coord/REDESIGN.md): the CORE modules
(vkdiff.types, errors, ir, optable, irbuild, compiler, passes.*, autodiff.*, codegen.*,
runtime.*) import only CORE modules (besides the standard library and numpy) -- never the API
layer (lang, ad, gui), the frontend, vkdiff.math or names of vkdiff/__init__ -- and their import
graph has no cycle. Every import counts: module level and inside functions (lazy imports).

Read from the source with `ast` (nothing is imported). `python tests/compiler/test_import_layers.py`
prints the offending edges."""
import ast
import os
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2] / 'vkdiff'
CORE_MODULES = {'vkdiff.types', 'vkdiff.errors', 'vkdiff.ir', 'vkdiff.optable', 'vkdiff.irbuild',
                'vkdiff.compiler'}
CORE_PACKAGES = ('vkdiff.passes', 'vkdiff.autodiff', 'vkdiff.codegen', 'vkdiff.runtime')


def is_core(mod):
    return mod in CORE_MODULES or any(mod == p or mod.startswith(p + '.') for p in CORE_PACKAGES)


def modules():
    """{module name: path} of every vkdiff module (a package by its __init__)."""
    out = {}
    for path in ROOT.rglob('*.py'):
        parts = list(path.relative_to(ROOT.parent).with_suffix('').parts)
        if parts[-1] == '__init__':
            parts.pop()
        out['.'.join(parts)] = path
    return out


def _resolve(name, known):
    """The vkdiff module that importing `name` runs last: itself, else its longest known
    prefix (a name of a package's __init__, or a namespace package's: None)."""
    while name:
        if name in known:
            return name
        name = name.rpartition('.')[0]
    return None


def imports(mod, path, known):
    """The vkdiff modules `mod` imports, anywhere in its source, with the line of each."""
    tree = ast.parse(path.read_text(), str(path))
    package = mod if path.name == '__init__.py' else mod.rpartition('.')[0]
    found = {}
    for node in ast.walk(tree):
        targets = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split('.')
                base = base[:len(base) - (node.level - 1)]
                stem = '.'.join(base + ([node.module] if node.module else []))
            else:
                stem = node.module or ''
            # `from P import n`: the submodule P.n where there is one, else P itself
            targets = [f'{stem}.{a.name}' if f'{stem}.{a.name}' in known else stem
                       for a in node.names]
        for t in targets:
            if t == 'vkdiff' or t.startswith('vkdiff.'):
                r = _resolve(t, known)
                if r is not None and r != mod:
                    found.setdefault(r, node.lineno)
    return found


def graph():
    known = modules()
    return {m: imports(m, p, known) for m, p in known.items()}, known


def bad_edges():
    """CORE -> non-CORE imports, as 'a -> b (file:line)'."""
    g, known = graph()
    out = []
    for a in sorted(g):
        if not is_core(a):
            continue
        for b, line in sorted(g[a].items()):
            if not is_core(b):
                out.append(f'{a} -> {b} ({known[a].relative_to(ROOT.parent)}:{line})')
    return out


def core_cycles():
    """The strongly connected components (of more than one module) of the CORE import graph."""
    g, _ = graph()
    core = {a: [b for b in g[a] if is_core(b)] for a in g if is_core(a)}
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in core[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(sorted(comp))
    for v in sorted(core):
        if v not in index:
            visit(v)
    return comps


def test_the_walk_sees_lazy_and_relative_imports():
    """The walker itself: lazy imports inside functions, relative levels, submodules named in
    `from P import n`, and names of a package's __init__."""
    g, known = graph()
    assert 'vkdiff.compiler' in known and 'vkdiff.launch.compiled' in known
    assert 'vkdiff.compiler' in g['vkdiff.launch.compiled']       # from .. import compiler
    assert 'vkdiff.ir' in g['vkdiff.passes.tasks']              # from .. import ir
    assert 'vkdiff.autodiff.reverse' in g['vkdiff.compiler']    # lazy, inside adjoint()
    assert 'vkdiff.codegen.tools' in g['vkdiff.compiler']       # from .codegen import tools
    assert is_core('vkdiff.passes.lower') and not is_core('vkdiff.lang.field')


def test_core_imports_only_core():
    bad = bad_edges()
    print('\n'.join(['CORE -> outside CORE:'] + bad))
    assert not bad, f'{len(bad)} imports from CORE to outside it:\n' + '\n'.join(bad)


def test_core_has_no_import_cycle():
    cycles = core_cycles()
    print('\n'.join(['CORE import cycles:'] + [' <-> '.join(c) for c in cycles]))
    assert not cycles, 'CORE import cycles:\n' + '\n'.join(' <-> '.join(c) for c in cycles)


if __name__ == '__main__':
    bad = bad_edges()
    print(f'{len(bad)} CORE -> outside-CORE imports:', *bad, sep='\n  ')
    cycles = core_cycles()
    print(f'{len(cycles)} CORE import cycle(s):', *(' <-> '.join(c) for c in cycles),
          sep='\n  ')
    raise SystemExit(1 if bad or cycles else 0)
