"""Codegen stage: SPIR-V assembly text -> validated, optimised binary, through spirv-tools
(`spirv-as`, `spirv-val`, `spirv-opt`) run as subprocesses. Results are cached in memory and on
disk (`$VKDIFF_CACHE_DIR`, default `~/.cache/vkdiff/spirv`; `VKDIFF_CACHE=0` disables the disk
cache), keyed by a hash of the assembly and the tools' identity; `cache.py` keeps the entries
(checksummed on disk)."""
import hashlib
import os
import shutil
import subprocess
import tempfile

from ..errors import CompileError, RuntimeError_
from . import cache

TARGET_ENV = 'vulkan1.1'
CODEGEN_VERSION = '2'  # 2: checksummed disk entries (cache.py)
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
    """The disk cache directory (created if needed; OSError if it cannot be), or None when
    VKDIFF_CACHE=0."""
    if os.environ.get('VKDIFF_CACHE', '1') == '0':
        return None
    d = os.environ.get('VKDIFF_CACHE_DIR') or os.path.join(
        os.environ.get('XDG_CACHE_HOME') or os.path.expanduser('~/.cache'), 'vkdiff', 'spirv')
    os.makedirs(d, exist_ok=True)
    return d


def _run(args, what, asm=None):
    r = subprocess.run(args, capture_output=True, text=True)
    if r.returncode != 0:
        msg = f'internal: {what} failed:\n{r.stderr.strip() or r.stdout.strip()}'
        if asm is not None:
            numbered = '\n'.join(f'{i + 1:4d}  {l}' for i, l in enumerate(asm.splitlines()))
            msg += f'\n--- generated SPIR-V ---\n{numbered}'
        raise CompileError(msg)
    return r


def compile_asm(asm, optimize=True):
    """Assembly text -> optimised SPIR-V binary (bytes)."""
    key = hashlib.sha256((tool_identity() + str(optimize) + asm).encode()).hexdigest()
    hit = cache.get(key, cache_dir)
    if hit is not None:
        return hit
    with tempfile.TemporaryDirectory(prefix='vkdiff') as tmp:
        src, raw, opt = (os.path.join(tmp, n) for n in ('k.spvasm', 'k.spv', 'k.opt.spv'))
        with open(src, 'w') as f:
            f.write(asm)
        _run([_tool('spirv-as'), '--target-env', TARGET_ENV, src, '-o', raw], 'spirv-as', asm)
        _run([_tool('spirv-val'), '--target-env', TARGET_ENV, raw], 'spirv-val', asm)
        out = raw
        if optimize:
            _run([_tool('spirv-opt'), '-O', f'--target-env={TARGET_ENV}', raw, '-o', opt],
                 'spirv-opt', asm)
            out = opt
        with open(out, 'rb') as f:
            data = f.read()
    cache.put(key, data, cache_dir)
    return data


def disassemble(binary):
    with tempfile.NamedTemporaryFile(suffix='.spv') as f:
        f.write(binary)
        f.flush()
        return _run([_tool('spirv-dis'), f.name], 'spirv-dis').stdout
