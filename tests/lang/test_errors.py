"""Compile errors: every unsupported construct or type error is a vkdiff.CompileError whose message
names the user's file, line and source text."""
import inspect

import numpy as np
import pytest

import vkdiff
import vkdiff as ti

GLOBAL_COUNTER = 0


def _compile_error(kernel, *args, line_text):
    """Calling `kernel` raises CompileError naming this file and the line `line_text`."""
    with pytest.raises(ti.CompileError) as info:
        kernel(*args)
    msg = str(info.value)
    assert 'test_errors.py' in msg, msg
    assert line_text in msg, msg
    # the line number in the message is the line that holds the text
    src, first = inspect.getsourcelines(kernel.fn if hasattr(kernel, 'fn') else kernel)
    lines = [first + k for k, l in enumerate(src) if line_text in l]
    assert any(f'line {n}' in msg for n in lines), (msg, lines)
    return msg


def test_exceptions_exported():
    assert issubclass(ti.CompileError, ti.VkdiffError)
    assert issubclass(ti.AutodiffError, ti.VkdiffError)
    assert ti.CompileError is vkdiff.CompileError
    assert issubclass(ti.VkdiffError, Exception)


def test_field_index_count_mismatch():
    x = ti.field(ti.f32, shape=(4, 4))

    @ti.kernel
    def k():
        for i in range(4):
            x[i] = 1.0

    _compile_error(k, line_text='x[i] = 1.0')


def test_field_index_count_mismatch_on_read():
    x = ti.field(ti.f32, shape=4)
    y = ti.field(ti.f32, shape=())

    @ti.kernel
    def k():
        y[None] = x[1, 2] + 1

    _compile_error(k, line_text='y[None] = x[1, 2] + 1')


def test_zero_d_needs_none():
    s = ti.field(ti.f32, shape=())

    @ti.kernel
    def k():
        s[0] = 1.0

    msg = _compile_error(k, line_text='s[0] = 1.0')
    assert 'None' in msg


def test_constant_index_out_of_range():
    x = ti.field(ti.f32, shape=4)

    @ti.kernel
    def k():
        x[4] = 1.0

    _compile_error(k, line_text='x[4] = 1.0')


def test_undefined_name():
    x = ti.field(ti.f32, shape=4)

    @ti.kernel
    def k():
        for i in x:
            x[i] = undefined_function(i)  # noqa: F821

    msg = _compile_error(k, line_text='x[i] = undefined_function(i)')
    assert 'undefined_function' in msg


def test_assign_to_python_global():
    @ti.kernel
    def k():
        for i in range(4):
            GLOBAL_COUNTER = i  # noqa: F841 - a kernel local shadows nothing: must be a local

    # Taichi semantics: this binds a new kernel local, which is fine...
    k()

    @ti.kernel
    def k2():
        global GLOBAL_COUNTER
        GLOBAL_COUNTER = 1

    _compile_error(k2, line_text='global GLOBAL_COUNTER')


def test_augassign_to_python_global():
    @ti.kernel
    def k():
        for i in range(4):
            GLOBAL_COUNTER += 1  # noqa: F823

    _compile_error(k, line_text='GLOBAL_COUNTER += 1')


def test_break_in_parallel_loop():
    x = ti.field(ti.i32, shape=8)

    @ti.kernel
    def k():
        for i in x:
            if i > 3:
                break
            x[i] = 1

    _compile_error(k, line_text='break')


def test_bitwise_on_float():
    x = ti.field(ti.f32, shape=4)

    @ti.kernel
    def k():
        for i in x:
            x[i] = x[i] & 1

    _compile_error(k, line_text='x[i] = x[i] & 1')


def test_float_field_index():
    x = ti.field(ti.f32, shape=4)

    @ti.kernel
    def k():
        for i in x:
            x[i * 0.5] = 1.0

    msg = _compile_error(k, line_text='x[i * 0.5] = 1.0')
    assert 'integer' in msg and 'f32' in msg


def test_runtime_value_as_python_bool():
    x = ti.field(ti.f32, shape=4)

    @ti.kernel
    def k():
        for i in x:
            x[i] = 1.0 if ti.static(i > 2) else 0.0

    _compile_error(k, line_text='ti.static(i > 2)')


def test_unsupported_statement():
    x = ti.field(ti.f32, shape=4)

    @ti.kernel
    def k():
        for i in x:
            try:
                x[i] = 1.0
            except Exception:
                pass

    _compile_error(k, line_text='try:')


def test_unsupported_expression():
    x = ti.field(ti.f32, shape=4)

    @ti.kernel
    def k():
        for i in x:
            x[i] = len({j for j in range(3)})

    _compile_error(k, line_text='x[i] = len({j for j in range(3)})')


def test_lambda_in_kernel():
    x = ti.field(ti.f32, shape=4)

    @ti.kernel
    def k():
        for i in x:
            f = lambda v: v + 1  # noqa: E731
            x[i] = f(i)

    _compile_error(k, line_text='f = lambda v: v + 1')


def test_kernel_calls_kernel():
    @ti.kernel
    def inner():
        pass

    @ti.kernel
    def outer():
        inner()

    _compile_error(outer, line_text='inner()')


def test_runtime_index_into_local_vector_is_supported():
    """(Was an error; run-time component indices now select among the entries.)"""
    x = ti.field(ti.f32, shape=4)

    @ti.kernel
    def k():
        for i in x:
            v = ti.Vector([1.0, 2.0, 3.0, 4.0])
            v[i] += 10.0
            x[i] = v[i] + v[(i + 1) % 4]

    k()
    np.testing.assert_array_equal(x.to_numpy(), [13, 15, 17, 15])


def test_runtime_component_index_on_vector_and_matrix_fields():
    v = ti.Vector.field(3, ti.f32, shape=4, needs_grad=True)
    M = ti.Matrix.field(2, 2, ti.f32, shape=4)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def fill():
        for i in v:
            for c in range(3):
                v[i][c] = i * 10 + c
            for r in range(2):
                for c in range(2):
                    M[i][r, c] = r * 2 + c + i

    @ti.kernel
    def energy():
        for i in v:
            for c in range(3):
                loss[None] += v[i][c] ** 2 * (c + 1)

    fill()
    np.testing.assert_array_equal(v.to_numpy(), np.arange(4)[:, None] * 10 + np.arange(3))
    np.testing.assert_array_equal(M.to_numpy()[2], [[2, 3], [4, 5]])
    with ti.Tape(loss):
        energy()
    np.testing.assert_array_equal(v.grad.to_numpy(), 2 * v.to_numpy() * [1, 2, 3])


def test_vector_shape_mismatch():
    v = ti.Vector.field(3, ti.f32, shape=4)

    @ti.kernel
    def k():
        for i in v:
            v[i] = ti.Vector([1.0, 2.0])

    _compile_error(k, line_text='v[i] = ti.Vector([1.0, 2.0])')


def test_error_in_func_names_func_line():
    x = ti.field(ti.f32, shape=4)

    @ti.func
    def bad(a):
        return a.nonexistent_attribute

    @ti.kernel
    def k():
        for i in x:
            x[i] = bad(x[i])

    with pytest.raises(ti.CompileError) as info:
        k()
    msg = str(info.value)
    assert 'test_errors.py' in msg and 'return a.nonexistent_attribute' in msg


def test_return_without_annotation():
    @ti.kernel
    def k():
        return 1

    _compile_error(k, line_text='return 1')


def test_return_in_loop_in_func():
    x = ti.field(ti.i32, shape=4)

    @ti.func
    def first_above(v):
        for j in range(10):
            if j > v:
                return j
        return -1

    @ti.kernel
    def k():
        for i in x:
            x[i] = first_above(i)

    with pytest.raises(ti.CompileError) as info:
        k()
    assert 'test_errors.py' in str(info.value) and 'return j' in str(info.value)


def test_kernel_return_inside_if():
    @ti.kernel
    def k(v: ti.i32) -> ti.i32:
        if v > 0:
            return 1
        return 2

    _compile_error(k, 1, line_text='return 1')


def test_vector_as_condition():
    x = ti.field(ti.i32, shape=4)

    @ti.kernel
    def k():
        for i in x:
            v = ti.Vector([i, i + 1])
            if v > 1:
                x[i] = 1

    _compile_error(k, line_text='if v > 1:')


@ti.func
def count_down(n):
    r = 0
    if n > 0:
        r = count_down(n - 1) + 1
    return r


def test_runtime_recursion_in_func():
    x = ti.field(ti.i32, shape=())

    @ti.kernel
    def k():
        x[None] = count_down(x[None])

    with pytest.raises(ti.CompileError) as info:
        k()
    assert 'test_errors.py' in str(info.value) and 'recursion' in str(info.value)

    @ti.kernel
    def static_recursion():
        x[None] = count_down(5)  # compile-time argument: the recursion ends while inlining

    static_recursion()
    assert x[None] == 5


def test_wrong_argument_count():
    @ti.kernel
    def k(a: ti.i32):
        pass

    with pytest.raises(ti.VkdiffError):
        k()
    with pytest.raises(ti.VkdiffError):
        k(1, 2)


def test_range_with_float_bound():
    x = ti.field(ti.f32, shape=4)

    @ti.kernel
    def k():
        for i in range(2.5):
            x[0] = 1.0

    _compile_error(k, line_text='for i in range(2.5):')


def test_loop_target_count_mismatch():
    x = ti.field(ti.f32, shape=(4, 4))

    @ti.kernel
    def k():
        for i in x:
            x[i, 0] = 1.0

    _compile_error(k, line_text='for i in x:')


def test_break_in_static_loop_under_runtime_if():
    x = ti.field(ti.f32, shape=4)

    @ti.kernel
    def k():
        for i in x:
            for j in ti.static(range(3)):
                if i == j:
                    break

    _compile_error(k, line_text='break')


def test_continue_in_static_loop_under_runtime_if():
    x = ti.field(ti.f32, shape=4)

    @ti.kernel
    def k():
        for i in x:
            for j in ti.static(range(3)):
                if x[i] > j:
                    continue
                x[i] += 1

    _compile_error(k, line_text='continue')


def test_error_does_not_poison_later_kernels():
    x = ti.field(ti.f32, shape=4)

    @ti.kernel
    def bad():
        for i in x:
            x[i] = nope  # noqa: F821

    @ti.kernel
    def good():
        for i in x:
            x[i] = 2.0

    with pytest.raises(ti.CompileError):
        bad()
    good()
    assert x[3] == 2.0


def test_bad_argument_annotation_names_the_def_line():
    @ti.kernel
    def k(a: str):
        pass

    with pytest.raises(ti.CompileError) as e:
        k('x')
    msg = str(e.value)
    assert 'test_errors.py' in msg and 'def k(a: str):' in msg and "argument 'a'" in msg


def test_bad_scalar_argument_value_is_a_clear_error():
    x = ti.field(ti.f32, shape=2)

    @ti.kernel
    def k(a: ti.f32):
        for i in x:
            x[i] = a

    k(1.5)
    with pytest.raises(ti.VkdiffError, match="kernel k: argument 'a' .*got str 'nope'") as e:
        k('nope')
    assert isinstance(e.value, TypeError)
    np.testing.assert_array_equal(x.to_numpy(), [1.5, 1.5])  # data intact
