"""Codegen stage: SPIR-V assembly text -> validated, optimised binary, through spirv-tools
(`spirv-as`, `spirv-val`, `spirv-opt`) run as subprocesses. Results are cached in memory and on
disk (`$VKDIFF_CACHE_DIR`, default `~/.cache/vkdiff/spirv`; `VKDIFF_CACHE=0` disables the disk
cache), keyed by a hash of the assembly and the tools' identity."""
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading

from ..errors import CompileError, RuntimeError_

TARGET_ENV = 'vulkan1.1'
CODEGEN_VERSION = '1'
_memory = {}
_tool_id = None


def _tool(name):
    path = shutil.which(name)
    if path is None:
        raise RuntimeError_(f'{name} not found: vkdiff needs spirv-tools '
                            '(Debian/Ubuntu: `apt-get install spirv-tools`; or run tools/setup.sh)')
    return path


def tool_identity():
    global _tool_id
    if _tool_id is None:
        parts = [CODEGEN_VERSION]
        for name in ('spirv-as', 'spirv-val', 'spirv-opt'):
            st = os.stat(_tool(name))
            parts.append(f'{name}:{st.st_size}:{int(st.st_mtime)}')
        _tool_id = '|'.join(parts)
    return _tool_id


def cache_dir():
    if os.environ.get('VKDIFF_CACHE', '1') == '0':
        return None
    d = os.environ.get('VKDIFF_CACHE_DIR') or os.path.join(
        os.environ.get('XDG_CACHE_HOME') or os.path.expanduser('~/.cache'), 'vkdiff', 'spirv')
    os.makedirs(d, exist_ok=True)
    return d


def _run(args, what, asm=None, stdin=None):
    r = subprocess.run(args, capture_output=True, text=stdin is None, input=stdin)
    if r.returncode != 0:
        msg = f'internal: {what} failed:\n{_err_text(r)}'
        if asm is not None:
            numbered = '\n'.join(f'{i + 1:4d}  {l}' for i, l in enumerate(asm.splitlines()))
            msg += f'\n--- generated SPIR-V ---\n{numbered}'
        raise CompileError(msg)
    return r


def _err_text(r):
    """stderr, else stdout where that is text (not a binary module)."""
    err = r.stderr if isinstance(r.stderr, str) else r.stderr.decode(errors='replace')
    return err.strip() or (r.stdout.strip() if isinstance(r.stdout, str) else '')


def _key(asm, optimize):
    return hashlib.sha256((tool_identity() + str(optimize) + asm).encode()).hexdigest()


def is_cached(asm, optimize=True):
    """True if compile_asm(asm) would not run the SPIR-V tools (in memory or on disk)."""
    key = _key(asm, optimize)
    if key in _memory:
        return True
    d = cache_dir()
    return bool(d) and os.path.exists(os.path.join(d, key + '.spv'))


def compile_asm(asm, optimize=True):
    """Assembly text -> optimised SPIR-V binary (bytes). Thread-safe (compile several at once)."""
    key = _key(asm, optimize)
    hit = _memory.get(key)
    if hit is not None:
        return hit
    d = cache_dir()
    path = os.path.join(d, key + '.spv') if d else None
    if path and os.path.exists(path):
        with open(path, 'rb') as f:
            data = f.read()
        _memory[key] = data
        return data
    # through pipes, two processes: spirv-opt validates its input (as spirv-val does) before
    # optimising, so a separate spirv-val runs only when not optimising
    raw = _run([_tool('spirv-as'), '--target-env', TARGET_ENV, '-', '-o', '-'], 'spirv-as', asm,
               asm.encode()).stdout
    if optimize:
        data = _run([_tool('spirv-opt'), '-O', f'--target-env={TARGET_ENV}', '-', '-o', '-'],
                    'spirv-opt (validation and optimisation)', asm, raw).stdout
    else:
        _run([_tool('spirv-val'), '--target-env', TARGET_ENV, '-'], 'spirv-val', asm, raw)
        data = raw
    if path:
        tmp_path = path + f'.{os.getpid()}.{threading.get_ident()}.tmp'
        with open(tmp_path, 'wb') as f:
            f.write(data)
        os.replace(tmp_path, path)
    _memory[key] = data
    return data


def disassemble(binary):
    with tempfile.NamedTemporaryFile(suffix='.spv') as f:
        f.write(binary)
        f.flush()
        return _run([_tool('spirv-dis'), f.name], 'spirv-dis').stdout
