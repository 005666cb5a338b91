"""The compiler pipeline without a device (vkdiff/compiler.py): the frontend, every pass,
autodiff (adjoint, tangent, forward-over-reverse) and codegen run against a fixed lavapipe-like
profile, and every generated shader passes spirv-val before and after spirv-opt. Also: the IR
printed after any pass (`kernel.ir(after=...)`, VKDIFF_PRINT_IR, ti.init(print_ir=...)), its
numbering per print, and the errors for unknown pass names or a launch without a device.

Run alone with no Vulkan at all: VK_ICD_FILENAMES=/nonexistent pytest tests/compiler"""
import dataclasses
import re

import pytest

import vkdiff as ti
from vkdiff import compiler
from vkdiff.errors import RuntimeError_, VkdiffValueError
from vkdiff.lang import state

from spirv_check import check_tasklist


def _kernels():
    """A few kernels exercising each pass: (kernel, its arguments), fields with gradients and
    duals so that adjoint and tangent have work to do."""
    x = ti.field(ti.f32, 64, needs_grad=True, needs_dual=True)
    y = ti.field(ti.f32, 64, needs_grad=True, needs_dual=True)
    d = ti.field(ti.f64, 16, needs_grad=True, needs_dual=True)
    e = ti.field(ti.f64, 16, needs_grad=True, needs_dual=True)
    loss = ti.field(ti.f32, (), needs_grad=True, needs_dual=True)
    m = ti.Vector.field(3, ti.f32, 8, needs_grad=True, needs_dual=True)
    n = ti.field(ti.i32, ())
    for f in (x, y, d, e, loss, m):  # as ti.ad.hvp does: forward-over-reverse has work too
        f.grad._add_grad('dual')

    @ti.kernel
    def saxpy(a: ti.f32):
        for i in x:
            y[i] = a * x[i] + ti.sin(x[i])

    @ti.kernel
    def reduce_loss():  # the reductions pass: workgroup sums and partials
        for i in x:
            loss[None] += x[i] * x[i]

    @ti.kernel
    def branches():
        for i in x:
            if x[i] > 0:
                y[i] = ti.exp(x[i])
            else:
                y[i] = ti.tanh(x[i]) * 2.0

    @ti.kernel
    def carried():  # a local carried between iterations: stored per iteration by the adjoint
        for i in x:
            s = x[i]
            for k in range(4):
                s = ti.sin(s) * 0.5 + s
            y[i] = s

    @ti.kernel
    def float64():  # lower: f64 sin/exp through f64math on lavapipe
        for i in d:
            e[i] = ti.sin(d[i]) + ti.exp(d[i] * 0.5)

    @ti.kernel
    def serial_and_parallel():  # split_tasks: a shared local becomes a temporary field
        t = 0.0
        for i in x:
            t += x[i]
        loss[None] = t * 2.0

    @ti.kernel
    def vectors():
        for i in m:
            v = m[i]
            loss[None] += v.dot(v) + v.norm()

    @ti.kernel
    def runtime_loop():  # loop_limit: a run-time trip count gets a guard on lavapipe
        for i in range(n[None]):
            s = 0
            for k in range(n[None]):
                s += k
            n[None] += s

    return {f.__name__: (f, ()) for f in (reduce_loss, branches, carried, float64,
                                           serial_and_parallel, vectors, runtime_loop)} | {
        'saxpy': (saxpy, (2.0,))}


DIFFERENTIABLE = ['saxpy', 'reduce_loss', 'branches', 'carried', 'float64',
                  'serial_and_parallel', 'vectors']


@pytest.mark.parametrize('name', ['saxpy', 'reduce_loss', 'branches', 'carried', 'float64',
                                  'serial_and_parallel', 'vectors', 'runtime_loop'])
def test_forward_adjoint_tangent_are_valid_spirv(name):
    k, args = _kernels()[name]
    inst, _ = k.instance(args)
    n = check_tasklist(inst)
    if name in DIFFERENTIABLE:
        n += check_tasklist(inst.adjoint())
        n += check_tasklist(inst.tangent())
        n += check_tasklist(inst.adjoint().tangent())  # forward-over-reverse
    assert n >= 1


def test_every_pass_prints():
    ks = _kernels()
    saxpy, reduce_loss, loop, f64 = (ks[n][0] for n in ('saxpy', 'reduce_loss', 'runtime_loop',
                                                      'float64'))
    assert 'sin(' in saxpy.ir(2.0) and saxpy.ir(2.0) == saxpy.ir(2.0, after='split_tasks')
    assert 'buf=x.grad' in saxpy.ir(2.0, after='adjoint')
    assert saxpy.ir(2.0, after='adjoint') == saxpy.grad.ir(2.0)
    assert 'buf=x.dual' in saxpy.ir(2.0, after='tangent')
    hvp = saxpy.grad.ir(2.0, after='tangent')
    assert 'buf=y.grad.dual' in hvp and 'buf=x.grad.dual' in hvp
    # f64 sin has no native instruction: lowering expands it
    assert 'f64 = sin(' in f64.ir() and 'f64 = sin(' not in f64.ir(after='lower')
    assert 'wg_sum' not in reduce_loss.ir(after='lower')
    assert 'wg_sum' in reduce_loss.ir(after='reductions')
    assert 'loop_limit_status' not in loop.ir(after='reductions')
    assert 'loop_limit_status' in loop.ir(after='loop_limit')
    asm = saxpy.grad.ir(2.0, after='codegen')
    assert asm.startswith('; ---- task saxpy') and 'OpEntryPoint GLCompute' in asm


def test_ir_is_numbered_per_print():
    """The same kernel prints the same whatever compiled before: statement ids count from %0
    in each task's print, not from a process-wide counter."""
    def build():
        return _kernels()['carried'][0]
    first = build().grad.ir()
    for k, args in _kernels().values():  # compile a lot in between
        k.ir(*args)
    state.init_offline(compiler.lavapipe_like())
    again = build().grad.ir()
    assert again == first
    for task in first.split('task ')[1:]:
        ids = [int(i) for i in re.findall(r'^\s*%(\d+):', task, re.M)]
        assert ids == list(range(len(ids)))


def test_print_ir_environment_variable(monkeypatch, capsys):
    monkeypatch.setenv('VKDIFF_PRINT_IR', 'lower, adjoint')
    k, args = _kernels()['saxpy']
    k.instance(args)[0].adjoint()
    err = capsys.readouterr().err
    assert '# ---- saxpy: IR after lower' in err
    assert '# ---- saxpy.grad: IR after adjoint' in err
    assert '# ---- saxpy.grad: IR after lower' in err
    assert 'IR after reductions' not in err and 'IR after split_tasks' not in err


def test_print_ir_from_init(capsys):
    state.init_offline(compiler.lavapipe_like(), print_ir='all')
    k, args = _kernels()['reduce_loss']
    k.instance(args)
    err = capsys.readouterr().err
    for p in ('split_tasks', 'lower', 'reductions', 'loop_limit', 'codegen'):
        assert f'# ---- reduce_loss: IR after {p}' in err
    assert 'OpEntryPoint' in err


def test_unknown_pass_names_are_errors(monkeypatch):
    with pytest.raises(VkdiffValueError,
                       match='lowr.*split_tasks, adjoint, tangent, debug_checks, lower'):
        ti.init(print_ir='lowr')  # (fails before it would open a device)
    state.init_offline(compiler.lavapipe_like())
    k, args = _kernels()['saxpy']
    with pytest.raises(ValueError, match="unknown pass 'lowering'.*reductions, forward_globals, loop_limit"):
        k.ir(*args, after='lowering')
    monkeypatch.setenv('VKDIFF_PRINT_IR', 'codgen')
    k, args = _kernels()['saxpy']
    with pytest.raises(VkdiffValueError, match="'codgen'.*codegen"):
        k.ir(*args)  # (compiling it reads the variable)


def test_no_device_means_no_launch():
    k, args = _kernels()['saxpy']
    with pytest.raises(RuntimeError_, match='without a device'):
        k(*args)


def test_options_pick_the_code():
    """Codegen follows the options, not a device: without float atomics an atomic add is a
    compare-exchange loop; a GPU profile has no grid-stride plan and 1024 reduction groups."""
    gpu = compiler.lavapipe_like(device_name='some gpu', cpu_driver=False, reduction_groups=1024)
    feats = dict(compiler.lavapipe_like().features, float32_atomic_add=False)
    for opts, expect in ((compiler.lavapipe_like(), 'OpAtomicFAddEXT'),
                         (dataclasses.replace(gpu, features=feats), 'OpAtomicCompareExchange')):
        state.init_offline(opts)
        k, args = _kernels()['reduce_loss']
        inst, _ = k.instance(args)
        check_tasklist(inst)
        assert expect in k.ir(after='codegen')
    assert all(ct.per_thread == 1 for ct in inst.ctasks)
    # partials for 1024 workgroups, for a loop that may need more than one (its 64 iterations
    # fit one workgroup: that one applies its sum itself, no partials)
    big = ti.field(ti.f32, 300)
    total = ti.field(ti.f32, ())

    @ti.kernel
    def reduce_big():
        for i in big:
            total[None] += big[i]
    assert 'value=1024' in reduce_big.ir(after='reductions')
    assert 'partials' not in k.ir(after='reductions')


def test_options_carry_the_settings():
    """ti.init's settings reach the passes through the options (no global reads): the adjoint's
    per-iteration storage of a run-time trip count is sized by ad_stack_size, and lowering checks
    the profile's features."""
    from vkdiff.errors import CompileError

    def make():
        x = ti.field(ti.f32, 8, needs_grad=True)
        y = ti.field(ti.f32, 8, needs_grad=True)
        n = ti.field(ti.i32, ())

        @ti.kernel
        def k():
            for i in x:
                s = x[i]
                for _ in range(n[None]):
                    s = ti.sin(s)
                y[i] = s
        return k
    assert 'size=32' in make().grad.ir()  # unset: Taichi's default_ad_stack_size
    state.init_offline(compiler.lavapipe_like(), ad_stack_size=12)
    assert 'size=12' in make().grad.ir()
    state.init_offline(compiler.lavapipe_like(features={'float64': False}))
    d = ti.field(ti.f64, 4)

    @ti.kernel
    def f64():
        for i in d:
            d[i] = d[i] * 2.0
    with pytest.raises(CompileError, match='no 64-bit floats'):
        f64.ir()


def test_known_short_loop_gets_a_fitted_workgroup():
    """compiler.fitted_local_size: a trip count known at compile time below 128 gets the power of
    two that fits it; unknown (an argument) or large trip counts get 128, serial tasks 1."""
    x = ti.field(ti.f32, 300)
    s = ti.field(ti.f32, ())

    @ti.kernel
    def short():
        for i in range(20):
            x[i] = 1.0

    @ti.kernel
    def by_arg(n: ti.i32):
        for i in range(n):
            x[i] = 1.0

    @ti.kernel
    def long_and_serial():
        for i in range(300):
            x[i] = 2.0
        s[None] = 1.0

    assert re.findall(r'LocalSize (\d+)', short.ir(after='codegen')) == ['32']
    assert re.findall(r'LocalSize (\d+)', by_arg.ir(3, after='codegen')) == ['128']
    assert re.findall(r'LocalSize (\d+)', long_and_serial.ir(after='codegen')) == ['128', '1']


def test_print_statements_lower_to_device_log_appends():
    """`print` is an IR statement up to `lower`, which makes it appends to the device log
    (passes/device_log.py): valid SPIR-V for every value type; the adjoint does not print, the
    tangent (which runs instead of the primal) does."""
    x = ti.field(ti.f32, 8, needs_grad=True, needs_dual=True)
    loss = ti.field(ti.f32, (), needs_grad=True, needs_dual=True)

    @ti.kernel
    def printing(a: ti.i64, d: ti.f64):
        print("a", a, d, ti.cast(a, ti.u8), ti.cast(d, ti.f16), a > 0, sep="|")
        for i in x:
            print(f"x[{i}] = {x[i]:.3e}", ti.Vector([x[i], 2.0 * x[i]]))
            loss[None] += x[i] * x[i]

    inst, _ = printing.instance((1, 2.0))
    assert check_tasklist(inst) >= 2
    text = printing.ir(1, 2.0)
    assert text.count('print(') == 2 and "'%.3e'" in text
    lowered = printing.ir(1, 2.0, after='lower')
    assert 'print(' not in lowered and 'buf=device_log_head' in lowered
    assert 'print(' not in printing.grad.ir(1, 2.0)
    check_tasklist(inst.adjoint())
    assert printing.ir(1, 2.0, after='tangent').count('print(') == 2
    check_tasklist(inst.tangent())


def test_printing_a_64_bit_value_needs_int64():
    feats = dict(compiler.lavapipe_like().features, int64=False)
    state.init_offline(compiler.lavapipe_like(features=feats))

    @ti.kernel
    def p32(x: ti.f32):
        print(x)

    @ti.kernel
    def p64(x: ti.f64):
        print("x", x)

    check_tasklist(p32.instance((1.0,))[0])
    with pytest.raises(ti.CompileError,
                       match=r'printing a f64 value needs 64-bit integers \(shaderInt64\)'):
        p64.instance((1.0,))


def test_the_pass_list_is_written_once():
    """PIPELINE is the one list: PASSES, BACKEND and the module docstring come from it, and
    forward_globals is a pass of its own (printable, and `kernel.ir(after='forward_globals')`)."""
    assert compiler.PASSES == tuple(n for n, _ in compiler.PIPELINE)
    assert compiler.PASSES == ('split_tasks', 'adjoint', 'tangent', 'debug_checks', 'lower',
                               'reductions', 'forward_globals', 'loop_limit', 'codegen')
    assert tuple(n for n, _ in compiler.BACKEND_PASSES) == compiler.BACKEND[:-1]
    doc = ' '.join(compiler.__doc__.split())
    assert ('split_tasks -> (adjoint | tangent) -> debug_checks -> lower -> reductions -> '
            'forward_globals -> loop_limit -> codegen') in doc
    for n, _ in compiler.PIPELINE:
        assert f' {n} ' in doc


def test_printing_after_each_pass_runs_each_pass_once(monkeypatch, capsys):
    """print_ir='all' prints every pass's IR as the pipeline makes it: the backend passes run
    once per compile (they used to run again, from copies, for each printed pass)."""
    calls = []
    passes = []
    for name, run in compiler.BACKEND_PASSES:
        def counted(tasks, kname, options, run=run, name=name):
            calls.append(name)
            return run(tasks, kname, options)
        passes.append((name, counted))
    monkeypatch.setattr(compiler, 'BACKEND_PASSES', tuple(passes))
    state.init_offline(compiler.lavapipe_like(), print_ir='all')
    k, args = _kernels()['reduce_loss']
    k.instance(args)
    err = capsys.readouterr().err
    assert calls == [n for n, _ in compiler.BACKEND_PASSES]
    for p in compiler.BACKEND:
        assert f'# ---- reduce_loss: IR after {p}' in err


def test_forward_globals_output_is_printable(capsys):
    state.init_offline(compiler.lavapipe_like())
    k, args = _kernels()['reduce_loss']
    text = k.ir(*args, after='forward_globals')
    assert text == k.ir(*args, after='forward_globals') and 'parfor' in text
