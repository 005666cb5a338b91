"""Source locations in the SPIR-V (codegen/module.py): each statement's file and line become
OpString + OpLine, kept through spirv-opt, so the SPIR-V tools, the validation layer and drivers
can point at the user's line; a SPIR-V tool's error names that line. No device needed."""
import inspect

import pytest

import vkdiff as ti
from vkdiff import compiler
from vkdiff.codegen import tools
from vkdiff.errors import CompileError
from vkdiff.lang import state

from spirv_check import check_tasklist


def _line_of(fn, text):
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, l in enumerate(lines) if text in l)


def _kernel():
    x = ti.field(ti.f32, 64)
    y = ti.field(ti.f32, 64)

    @ti.kernel
    def scaled(a: ti.f32):
        for i in x:
            t = a * x[i]
            y[i] = t + ti.sin(x[i])
    return scaled


def test_statements_carry_their_lines():
    k = _kernel()
    asm = k.ir(2.0, after='codegen')
    assert f'OpString "{__file__}"' in asm
    src = asm.split(f'= OpString "{__file__}"')[0].split()[-1]  # its id
    for text in ('for i in x:', 't = a * x[i]', 'y[i] = t + ti.sin'):
        assert f'OpLine {src} {_line_of(k.fn, text)} 0' in asm
    # through spirv-opt too, and valid before and after it
    inst, _ = k.instance((2.0,))
    check_tasklist(inst)
    optimised = k.spirv(2.0)
    assert 'OpLine' in optimised and __file__ in optimised


def test_a_spirv_tool_error_names_the_users_line():
    k = _kernel()
    asm = k.ir(2.0, after='codegen').split('\n', 1)[1]
    bad = asm.replace('OpFMul', 'OpIMul', 1)  # invalid: an integer multiply of floats
    assert bad != asm
    with pytest.raises(CompileError) as e:
        tools.compile_asm(bad)
    line = _line_of(k.fn, 't = a * x[i]')
    assert f'in the code of File "{__file__}", line {line}:\n    t = a * x[i]' in str(e.value)


def test_the_same_kernel_hits_the_spirv_cache():
    """Lines are part of the code (and so of the cache key): the same kernel compiled again
    after ti.init gives the same assembly, found in the cache."""
    first = _kernel().ir(2.0, after='codegen')
    state.init_offline(compiler.lavapipe_like())
    k = _kernel()
    inst, _ = k.instance((2.0,))
    assert k.ir(2.0, after='codegen') == first
    assert all(tools.is_cached(ct.asm) for ct in inst.ctasks)
