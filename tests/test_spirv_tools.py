"""codegen.tools: SPIR-V assembly through spirv-as and spirv-opt (which validates its input, so no
separate spirv-val when optimising), several at once from threads, and invalid modules rejected
with the validator's message whichever path runs."""
import threading

import pytest

from vkdiff.codegen import tools
from vkdiff.errors import CompileError

HEADER = '''OpCapability Shader
OpMemoryModel Logical GLSL450
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 1 1 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%u32 = OpTypeInt 32 0
'''
BODY = '''%main = OpFunction %void None %fn
%l = OpLabel
OpReturn
OpFunctionEnd
'''


def module(k):
    return HEADER + f'%c = OpConstant %u32 {k}\n' + BODY


def test_valid_module_assembles_with_and_without_optimisation(monkeypatch):
    monkeypatch.setenv('VKDIFF_CACHE', '0')
    for optimize in (True, False):
        data = tools.compile_asm(module(12345), optimize=optimize)
        assert data[:4] == b'\x03\x02\x23\x07'  # the SPIR-V magic number, little-endian
        assert len(data) % 4 == 0
    assert b'\x39\x30\x00\x00' not in tools.compile_asm(module(12345))  # unused constant removed
    assert b'\x39\x30\x00\x00' in tools.compile_asm(module(12345), optimize=False)


@pytest.mark.parametrize('optimize', [True, False])
def test_invalid_module_is_a_compile_error_with_the_validator_message(monkeypatch, optimize):
    monkeypatch.setenv('VKDIFF_CACHE', '0')
    bad = HEADER + BODY.replace('OpReturn', '%x = OpIAdd %void %void %void\nOpReturn')
    with pytest.raises(CompileError) as e:
        tools.compile_asm(bad, optimize=optimize)
    assert 'cannot be a type' in str(e.value)
    assert '--- generated SPIR-V ---' in str(e.value)
    assert not tools.is_cached(bad, optimize)


def test_compiles_from_threads_at_once(monkeypatch, tmp_path):
    monkeypatch.setenv('VKDIFF_CACHE_DIR', str(tmp_path))
    out, errors = {}, []

    def work(k):
        try:
            out[k] = tools.compile_asm(module(1000 + k % 4), optimize=False)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k in range(12):
        assert out[k] == out[k % 4]
        assert tools.is_cached(module(1000 + k % 4), optimize=False)
    assert len({out[k] for k in range(4)}) == 4
    assert not [p for p in tmp_path.iterdir() if p.name.endswith('.tmp')]


def spawned(monkeypatch):
    """The SPIR-V tools each compile_asm runs, by name, in order."""
    names = []
    run = tools._run

    def counting(args, *a, **k):
        names.append(args[0].rsplit('/', 1)[-1])
        return run(args, *a, **k)
    monkeypatch.setattr(tools, '_run', counting)
    return names


def test_spirv_opt_runs_only_where_it_optimises(monkeypatch):
    """spirv-opt -O skips its passes on modules declaring extensions it does not know
    (SPV_KHR_float_controls, on every lavapipe shader): those are validated by spirv-val instead,
    the others still optimised. Counts the processes, and checks what -O would have removed."""
    monkeypatch.setenv('VKDIFF_CACHE', '0')
    monkeypatch.delenv('VKDIFF_SPIRV_OPT', raising=False)
    names = spawned(monkeypatch)
    plain = module(24680)  # not compiled by the tests above (the memory cache would answer)
    ext = plain.replace('OpCapability Shader\n', 'OpCapability Shader\nOpCapability '
                        'SignedZeroInfNanPreserve\nOpExtension "SPV_KHR_float_controls"\n')
    ext = ext.replace('LocalSize 1 1 1\n', 'LocalSize 1 1 1\nOpExecutionMode %main '
                      'SignedZeroInfNanPreserve 32\n')
    assert tools.worth_optimising(plain) and not tools.worth_optimising(ext)
    assert b"\x68\x60\x00\x00" not in tools.compile_asm(plain)  # optimised: constant removed
    assert names == ['spirv-as', 'spirv-opt']
    names.clear()
    data = tools.compile_asm(ext)
    assert names == ['spirv-as', 'spirv-val']
    assert data == tools.compile_asm(ext, optimize=False)
    names.clear()
    tools.compile_asm(ext, optimize=True)  # forced: -O runs, and leaves the constant in
    assert names == ['spirv-as', 'spirv-opt']
    monkeypatch.setenv('VKDIFF_SPIRV_OPT', '1')
    assert tools.worth_optimising(ext)
    monkeypatch.setenv('VKDIFF_SPIRV_OPT', '0')
    assert not tools.worth_optimising(plain)
