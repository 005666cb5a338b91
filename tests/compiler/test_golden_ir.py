"""Golden IR: the printed IR of a few representative kernels -- forward (as split into tasks,
and after the reductions pass), adjoint and tangent -- compared with the text files in
tests/compiler/golden/ (<kernel>.<stage>.txt). The IR is numbered per print, so the text does
not depend on what compiled before. No device needed.

A change to the IR these kernels compile to fails here with a diff. When the change is
intended, regenerate the files and review them with `git diff tests/compiler/golden`:

    VKDIFF_UPDATE_GOLDEN=1 VK_ICD_FILENAMES=/nonexistent \\
        .venv/bin/python -m pytest tests/compiler/test_golden_ir.py
"""
import difflib
import os
from pathlib import Path

import pytest

import vkdiff as ti

GOLDEN = Path(__file__).parent / 'golden'
UPDATE = os.environ.get('VKDIFF_UPDATE_GOLDEN') == '1'


def saxpy_sin():
    """A parallel loop of element-wise math: the simplest forward / adjoint / tangent."""
    x = ti.field(ti.f32, 64, needs_grad=True, needs_dual=True)
    y = ti.field(ti.f32, 64, needs_grad=True, needs_dual=True)

    @ti.kernel
    def saxpy_sin(a: ti.f32):
        for i in x:
            y[i] = a * x[i] + ti.sin(x[i])
    return saxpy_sin, (2.0,)


def energy():
    """A branch and an accumulation into a 0-D field (the reductions pass), then serial code."""
    x = ti.field(ti.f32, 64, needs_grad=True, needs_dual=True)
    loss = ti.field(ti.f32, (), needs_grad=True, needs_dual=True)
    total = ti.field(ti.f32, (), needs_grad=True, needs_dual=True)

    @ti.kernel
    def energy():
        for i in x:
            if x[i] > 0:
                loss[None] += x[i] * x[i]
            else:
                loss[None] += ti.exp(x[i])
        total[None] = loss[None] * 0.5
    return energy, ()


def carried():
    """A local carried across the iterations of an inner loop: the adjoint stores it per
    iteration and restores it in reverse."""
    x = ti.field(ti.f32, 16, needs_grad=True, needs_dual=True)
    y = ti.field(ti.f32, 16, needs_grad=True, needs_dual=True)

    @ti.kernel
    def carried():
        for i in x:
            s = x[i]
            for k in range(3):
                s = ti.sin(s) * s
            y[i] = s
    return carried, ()


CASES = [(make, stage) for make in (saxpy_sin, energy, carried)
         for stage in ('forward', 'adjoint', 'tangent')] + [(energy, 'reductions')]


def _text(make, stage):
    k, args = make()
    if stage == 'forward':
        return k.ir(*args)
    if stage == 'reductions':
        return k.ir(*args, after='reductions')
    return k.ir(*args, after=stage)


@pytest.mark.parametrize('make,stage', CASES, ids=[f'{m.__name__}.{s}' for m, s in CASES])
def test_golden_ir(make, stage):
    text = _text(make, stage) + '\n'
    path = GOLDEN / f'{make.__name__}.{stage}.txt'
    if UPDATE:
        GOLDEN.mkdir(exist_ok=True)
        path.write_text(text)
        return
    assert path.exists(), f'{path} is missing: regenerate with VKDIFF_UPDATE_GOLDEN=1'
    want = path.read_text()
    if text != want:
        diff = ''.join(difflib.unified_diff(want.splitlines(True), text.splitlines(True),
                                            str(path), 'now'))
        pytest.fail(f'the IR of {make.__name__} ({stage}) changed (VKDIFF_UPDATE_GOLDEN=1 '
                    f'regenerates the file if intended):\n{diff}')


def test_golden_ir_is_independent_of_what_compiled_before():
    """Compiling other kernels first changes nothing in the text."""
    first = _text(carried, 'adjoint')
    for make, stage in CASES:
        _text(make, stage)
    assert _text(carried, 'adjoint') == first
