"""Helpers of the device-free tier: the compiled tasks of a kernel instance, and the Khronos
validator (spirv-val) run on their SPIR-V: the generated assembly as assembled, and the binary
spirv-opt made from it."""
import subprocess
import tempfile

from vkdiff.codegen import tools


def spirv_val(binary):
    """spirv-val's verdict on a binary: '' when valid, else its message."""
    with tempfile.NamedTemporaryFile(suffix='.spv') as f:
        f.write(binary)
        f.flush()
        r = subprocess.run([tools._tool('spirv-val'), '--target-env', tools.TARGET_ENV, f.name],
                           capture_output=True, text=True)
    return '' if r.returncode == 0 else (r.stderr or r.stdout)


def assemble(asm):
    r = subprocess.run([tools._tool('spirv-as'), '--target-env', tools.TARGET_ENV, '-', '-o',
                        '-'], input=asm.encode(), capture_output=True)
    assert r.returncode == 0, r.stderr.decode()
    return r.stdout


def check_tasklist(tl):
    """Every task of a compiled TaskList (a kernel, adjoint or tangent) is valid SPIR-V, before
    and after spirv-opt. Returns the number of tasks checked."""
    assert tl.ctasks, f'{tl.name}: no tasks'
    for ct in tl.ctasks:
        msg = spirv_val(assemble(ct.asm))
        assert not msg, f'{ct.task.name}: generated SPIR-V fails spirv-val:\n{msg}'
        msg = spirv_val(ct.binary)
        assert not msg, f'{ct.task.name}: optimised SPIR-V fails spirv-val:\n{msg}'
    return len(tl.ctasks)
