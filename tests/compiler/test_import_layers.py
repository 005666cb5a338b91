"""Import layering. The compiler core (issue 15, /work/coord/REDESIGN.md): the CORE modules
(vkdiff.types, errors, ir, optable, irbuild, compiler, passes.*, autodiff.*, codegen.*,
runtime.*) import only CORE modules (besides the standard library and numpy) -- never the API
layer (lang, ad, gui), the frontend, vkdiff.math or names of vkdiff/__init__ -- and their import
graph has no cycle.

The API layer's floors (issue 28), bottom to top, each importing only downward (and CORE):
values -> data -> frontend -> launch -> face (FLOORS below: file lists). A lower floor calls a
higher one through lang/hooks.py (the higher floor registers the hook when it is imported), never
by an import; an upward import that stays is listed in ALLOWED_UP with its reason. Import
circles stay inside one floor, each of at most MAX_KNOT files.

Every import counts: module level and inside functions (lazy imports). Read from the source with
`ast` (nothing is imported). `python tests/compiler/test_import_layers.py` prints the offending
edges."""
import ast
import functools
import os
from pathlib import Path


ROOT = Path(__file__).resolve().parents[2] / 'vkdiff'
CORE_MODULES = {'vkdiff.types', 'vkdiff.errors', 'vkdiff.ir', 'vkdiff.optable', 'vkdiff.irbuild',
                'vkdiff.compiler'}
CORE_PACKAGES = ('vkdiff.passes', 'vkdiff.autodiff', 'vkdiff.codegen', 'vkdiff.runtime')


# The API layer's floors, bottom to top, as file lists (relative to vkdiff/; a name ending in '/'
# is every file of that folder). A new file goes on the floor of what it does: values (what kernel
# code computes with), data (fields, SNodes, ndarrays, the program state), frontend (Python AST to
# IR, @func, structs), launch (kernel call and launch), face (the ti.* names and tools).
FLOORS = {
    'values': ['frontend/context.py', 'frontend/ops.py', 'frontend/checks.py', 'lang/matrix.py',
               'lang/hooks.py'],
    'data': ['lang/binding.py', 'lang/blockpool.py', 'lang/convert.py', 'lang/dynpool.py', 'lang/enums.py',
             'lang/field.py', 'lang/fields_builder.py', 'lang/init_config.py', 'lang/layout.py', 'lang/member_field.py', 'lang/ndarray.py',
             'lang/proxy.py', 'lang/quant.py', 'lang/snode.py', 'lang/snode_addr.py', 'lang/sparse.py',
             'lang/state.py', 'lang/texture.py', 'lang/torch_io.py'],
    'frontend': ['frontend/argarray.py', 'frontend/asserts.py', 'frontend/builder.py',
                 'frontend/blockpool.py', 'frontend/compiletime.py', 'frontend/dynpool.py', 'frontend/expressions.py',
                 'frontend/func.py', 'frontend/loops.py', 'frontend/lvalues.py',
                 'frontend/printing.py', 'frontend/quant_access.py', 'frontend/sparse.py', 'frontend/statements.py',
                 'frontend/struct.py', 'frontend/struct_field.py', 'frontend/texture.py'],
    'launch': ['launch/__init__.py', 'launch/arg_binding.py', 'launch/argpack.py',
               'launch/builtin_kernels.py', 'launch/compiled.py', 'launch/kernel.py',
               'launch/ndarray_args.py', 'launch/replay.py', 'launch/status.py', 'launch/timing.py'],
    'face': ['__init__.py', 'algorithms/', '__main__.py', '_lib/', '_logging.py', 'doctor.py', 'graph.py', 'math.py', 'sparse.py',
             'mathext.py', 'profiler.py', 'lang/api.py', 'lang/compat.py', 'lang/impl.py',
             'lang/linalg.py', 'lang/ops.py', 'lang/simt/', 'lang/types_api.py', 'lang/util.py', 'ad/',
             'examples/',
             'gui/', 'linalg/', 'tools/', 'ui/', 'distributed/', 'drivers.py', 'precision.py'],
}
FLOOR_ORDER = ['core'] + list(FLOORS)
# (importer, imported) module pairs that go up a floor and stay, with the reason. Empty: every
# upward call goes through lang/hooks.py.
ALLOWED_UP = {}
MAX_KNOT = 10  # files in one import circle (strongly connected component)


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


@functools.lru_cache(maxsize=None)
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
    return components({a: [b for b in g[a] if is_core(b)] for a in g if is_core(a)})


def floor_of(path):
    """The floor of a vkdiff file (a Path), 'core', or None when no floor lists it."""
    rel = path.relative_to(ROOT).as_posix()
    mod = '.'.join(['vkdiff'] + [p for p in rel[:-3].split('/') if p != '__init__'])
    if is_core(mod):
        return 'core'
    for name, files in FLOORS.items():
        if any(rel == f or f.endswith('/') and rel.startswith(f) for f in files):
            return name
    return None


def floors():
    """{module: floor} of every vkdiff module, and the import graph."""
    g, known = graph()
    return {m: floor_of(p) for m, p in known.items()}, g, known


def unplaced():
    where, _, known = floors()
    return sorted(str(known[m].relative_to(ROOT.parent)) for m, f in where.items() if f is None)


def upward_edges():
    """Imports from a floor to a higher one (CORE counts as the lowest), as 'a -> b (file:line)',
    less ALLOWED_UP."""
    where, g, known = floors()
    out = []
    for a in sorted(g):
        for b, line in sorted(g[a].items()):
            fa, fb = where[a], where[b]
            if fa and fb and FLOOR_ORDER.index(fb) > FLOOR_ORDER.index(fa) and \
                    (a, b) not in ALLOWED_UP:
                out.append(f'{a} ({fa}) -> {b} ({fb}) ({known[a].relative_to(ROOT.parent)}:{line})')
    return out


def components(g):
    """The strongly connected components (of more than one module) of an import graph."""
    index, low, stack, on, comps = {}, {}, [], set(), []

    def visit(v):  # Tarjan's algorithm
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g[v]:
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
    for v in sorted(g):
        if v not in index:
            visit(v)
    return comps


def bad_knots():
    """Import circles that cross a floor or have more than MAX_KNOT files."""
    where, g, _ = floors()
    out = []
    for comp in components({a: [b for b in g[a] if b in g] for a in g}):
        fl = sorted({str(where[m]) for m in comp})
        if len(fl) > 1 or len(comp) > MAX_KNOT:
            out.append(f'{len(comp)} files on {"/".join(fl)}: ' + ' <-> '.join(comp))
    return out


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


def test_every_api_file_is_on_a_floor():
    missing = unplaced()
    assert not missing, ('files on no floor (add each to FLOORS in ' + __file__ + '):\n' +
                         '\n'.join(missing))


def test_floors_import_only_downward():
    """Lazy imports included; a lower floor reaches a higher one through lang/hooks.py."""
    up = upward_edges()
    print('\n'.join(['upward imports:'] + up))
    assert not up, f'{len(up)} imports go up a floor:\n' + '\n'.join(up)


def test_import_circles_stay_inside_one_floor_and_small():
    knots = bad_knots()
    assert not knots, 'import circles that cross a floor or are too big:\n' + '\n'.join(knots)


MAX_LAZY = 40  # in-function imports of vkdiff's own modules (issue 28: from 177)


def lazy_imports():
    """In-function imports of vkdiff's own modules (relative, or vkdiff.*), as (file:line, the
    comment on that line or the line above: the cycle it breaks or what it defers)."""
    out = []
    for path in sorted(ROOT.rglob('*.py')):
        lines = path.read_text().splitlines()
        tree = ast.parse('\n'.join(lines), str(path))
        for fn in ast.walk(tree):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            for node in ast.walk(fn):
                own = isinstance(node, ast.ImportFrom) and (
                    node.level or (node.module or '').split('.')[0] == 'vkdiff') or \
                    isinstance(node, ast.Import) and any(
                        a.name.split('.')[0] == 'vkdiff' for a in node.names)
                if own:
                    here, above = lines[node.lineno - 1], lines[node.lineno - 2].strip()
                    why = here.partition('#')[2] or (above[1:] if above.startswith('#') else '')
                    out.append((f'{path.relative_to(ROOT.parent)}:{node.lineno}', why.strip()))
    return sorted(set(out))


def test_few_lazy_imports_each_with_its_reason():
    """An in-function import of a vkdiff module stays only to break a cycle or to defer loading
    (the compiler, autodiff, the native runtime), with a comment saying which."""
    lazy = lazy_imports()
    print('\n'.join(f'{where}  # {why}' for where, why in lazy))
    assert len(lazy) <= MAX_LAZY, f'{len(lazy)} in-function imports of vkdiff modules'
    bare = [where for where, why in lazy if not why]
    assert not bare, 'in-function imports without a comment saying why:\n' + '\n'.join(bare)


def test_the_floor_checks_see_an_upward_import():
    """The checks themselves: a data-floor file importing the launch floor is reported."""
    assert floor_of(ROOT / 'lang' / 'field.py') == 'data'
    assert floor_of(ROOT / 'launch' / 'kernel.py') == 'launch'
    assert floor_of(ROOT / 'ui' / 'window.py') == 'face'
    assert floor_of(ROOT / 'passes' / 'lower.py') == 'core'
    g = {'a': ['b'], 'b': ['c'], 'c': ['a'], 'd': ['a']}
    assert components(g) == [['a', 'b', 'c']]


if __name__ == '__main__':
    print('files on no floor:', *unplaced(), sep='\n  ')
    print('upward imports:', *upward_edges(), sep='\n  ')
    print('import circles crossing a floor or too big:', *bad_knots(), sep='\n  ')
    print(f'{len(lazy_imports())} in-function imports:',
          *(f'{where}  # {why}' for where, why in lazy_imports()), sep='\n  ')
    bad = bad_edges()
    print(f'{len(bad)} CORE -> outside-CORE imports:', *bad, sep='\n  ')
    cycles = core_cycles()
    print(f'{len(cycles)} CORE import cycle(s):', *(' <-> '.join(c) for c in cycles),
          sep='\n  ')
    raise SystemExit(1 if bad or cycles else 0)
