"""Printing the IR after a compiler pass on a real device (tests/compiler covers it without
one): ti.init(print_ir=...) prints while the kernel compiles, the kernel still computes the
same values, and kernel.ir(after=...) returns the same text that was printed."""
import numpy as np
import pytest

import vkdiff as ti


def test_print_ir_on_the_device(capsys):
    ti.init(print_ir='lower,adjoint')
    x = ti.field(ti.f64, 8, needs_grad=True)
    y = ti.field(ti.f64, 8, needs_grad=True)

    @ti.kernel
    def k():
        for i in x:
            y[i] = ti.sin(x[i])

    xs = np.linspace(0.0, 1.0, 8)
    x.from_numpy(xs)
    k()
    y.grad.fill(1.0)
    k.grad()
    np.testing.assert_allclose(y.to_numpy(), np.sin(xs), rtol=1e-14)
    np.testing.assert_allclose(x.grad.to_numpy(), np.cos(xs), rtol=1e-14)
    err = capsys.readouterr().err
    printed = err.split('# ---- k: IR after lower\n')[1].split('\n# ----')[0]
    assert printed == k.ir(after='lower')
    assert '# ---- k.grad: IR after adjoint' in err and '# ---- k.grad: IR after lower' in err
    assert 'IR after reductions' not in err


def test_print_ir_rejects_unknown_names():
    with pytest.raises(ValueError, match="'adjont'.*the passes are split_tasks"):
        ti.init(print_ir=['adjont'])
