"""Autodiff errors are the built-ins Taichi 1.7.4 raises, so Taichi code that catches them works:
RuntimeError for what cannot be differentiated or set up (Taichi's Tape, grad_for, FwdMode), and
ti.TaichiAssertionError for a broken global data access rule (Taichi's checker). Also: every
exception class vkdiff defines subclasses the built-in a user would catch."""
import inspect

import numpy as np
import pytest

import vkdiff as ti
from vkdiff import errors


def _fields(n=4):
    x = ti.field(ti.f32, shape=n, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)
    return x, loss


def test_every_vkdiff_exception_is_also_a_builtin_a_user_catches():
    plain = {errors.VkdiffError, errors.CompileError}  # Taichi's TaichiCompilationError: Exception
    builtin = (TypeError, ValueError, IndexError, RuntimeError, SyntaxError, NameError,
               MemoryError, AssertionError, NotImplementedError, OverflowError, TimeoutError)
    classes = [c for _, c in inspect.getmembers(errors, inspect.isclass)
               if issubclass(c, errors.VkdiffError) and c not in plain]
    assert len(classes) > 15
    missing = [c.__name__ for c in classes if not issubclass(c, builtin)]
    assert not missing, missing
    assert issubclass(errors.AutodiffError, RuntimeError)


def test_tape_with_a_loss_that_is_not_0d_is_a_runtime_error_and_a_value_error():
    x, _ = _fields()
    with pytest.raises(RuntimeError, match='0-D'):
        ti.ad.Tape(loss=x)
    with pytest.raises(ValueError):
        ti.ad.Tape(loss=x)


def test_grad_for_needs_a_grad_replaced_function():
    x, loss = _fields()

    @ti.kernel
    def k(mul: ti.f32):
        for i in range(4):
            loss[None] += x[i] * mul

    def plain(mul):
        k(mul)

    for primal in (k, plain):
        with pytest.raises(RuntimeError, match='must be decorated by ti.ad.grad_replaced'):
            @ti.ad.grad_for(primal)
            def backward(mul):
                pass
    x.from_numpy(np.arange(4, dtype=np.float32))
    with ti.ad.Tape(loss=loss):  # nothing left half set up
        k(2.0)
    np.testing.assert_array_equal(x.grad.to_numpy(), [2, 2, 2, 2])
    assert loss[None] == 12


def test_nested_tapes_and_fwdmodes_are_runtime_errors():
    x, loss = _fields()
    with ti.ad.Tape(loss=loss):
        with pytest.raises(RuntimeError, match='nested'):
            with ti.ad.Tape(loss=loss):
                pass
    y = ti.field(ti.f32, shape=(), needs_dual=True)
    with ti.ad.FwdMode(loss=y, param=y):
        with pytest.raises(RuntimeError, match='nested'):
            with ti.ad.FwdMode(loss=y, param=y):
                pass


def test_fwdmode_without_a_seed_for_a_field_of_several_elements_is_a_runtime_error():
    x = ti.field(ti.f32, shape=3, needs_dual=True)
    y = ti.field(ti.f32, shape=(), needs_dual=True)
    with pytest.raises(RuntimeError, match='seed'):
        ti.ad.FwdMode(loss=y, param=x)


def test_broken_access_rule_in_a_kernel_is_a_taichi_assertion_error_and_keeps_the_data():
    x, loss = _fields(16)
    b = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def broke_rule_1():
        loss[None] = x[1] * b[None]
        b[None] += 100

    x.from_numpy(np.arange(16, dtype=np.float32))
    b[None] = 10
    with pytest.raises(ti.TaichiAssertionError, match='rule 1'):
        with ti.ad.Tape(loss=loss):
            broke_rule_1()
    assert b[None] == 110 and loss[None] == 10  # the forward pass ran; nothing else changed
    np.testing.assert_array_equal(x.to_numpy(), np.arange(16))
    with pytest.raises(errors.AutodiffError):  # still vkdiff's own type too
        broke_rule_1.grad()


def test_overwrite_across_tape_launches_is_a_taichi_assertion_error_both_ways():
    x, loss = _fields()

    @ti.kernel
    def read():
        for i in range(4):
            loss[None] += x[i] * x[i]

    @ti.kernel
    def overwrite():
        for i in range(4):
            x[i] = 0.0

    for validation in (False, True):
        x.from_numpy(np.ones(4, np.float32))
        with pytest.raises(ti.TaichiAssertionError, match='overwr'):
            with ti.ad.Tape(loss=loss, validation=validation):
                read()
                overwrite()


def test_random_in_a_differentiated_value_is_taichis_runtime_error():
    """Taichi's test_ad_rand: RuntimeError whose message holds 'RandStmt not supported'."""
    x, loss = _fields()

    @ti.kernel
    def work():
        loss[None] = x[0] * ti.random()

    with pytest.raises(RuntimeError) as e:
        with ti.ad.Tape(loss):
            work()
    assert 'RandStmt not supported' in e.value.args[0]
