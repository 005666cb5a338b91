"""Dict displays with `**` and dict comprehensions in kernels (compile-time dicts, as Taichi's
test_ast_refactor.py uses them), and Taichi's error types and texts for bitwise operations on
floats, vector assignments of the wrong size and selects of different shapes
(test_type_check.py)."""
import pytest

import vkdiff as ti


def test_dict_unpacking_and_missing_key():
    @ti.kernel
    def foo(x: ti.template()) -> ti.i32:
        a = {1: 2, 3: 4}
        b = {5: 6, **a}
        return b[x] * 10 + len(b)

    assert foo(1) == 23 and foo(5) == 63
    with pytest.raises(ti.TaichiCompilationError):
        foo(2)


def test_dict_comprehension():
    @ti.kernel
    def foo(n: ti.template()) -> ti.i32:
        a = {i: i * i for i in range(n) if i % 3 if i % 2}
        ret = 0
        for i in ti.static(a):
            ret += a[i] * i
        return ret

    assert foo(10) == 1 + 5 ** 3 + 7 ** 3


def test_bitwise_operation_on_a_float_is_a_type_error():
    @ti.kernel
    def bad() -> ti.i32:
        a = 1
        b = 3.1
        return a & b

    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for '&': 'i32' and 'f32'"):
        bad()

    @ti.kernel
    def bad_shift(x: ti.f32) -> ti.i32:
        return 1 << x

    with pytest.raises(ti.TaichiTypeError, match="for '<<'"):
        bad_shift(1.0)


def test_vector_assignment_of_another_size_is_a_type_error():
    f = ti.Vector.field(4, dtype=ti.i32, shape=())

    @ti.kernel
    def k():
        f[None] = ti.Vector([1, 2, 3])

    with pytest.raises(ti.TaichiTypeError,
                       match=r"cannot assign '\[Tensor \(3\) i32\]' to '\[Tensor \(4\) i32\]'"):
        k()


def test_select_of_different_shapes():
    @ti.kernel
    def k(b: ti.i32):
        a = ti.math.vec2(1.0, 1.0)
        c = ti.math.vec3(1.0, 1.0, 2.0)
        d = a if b else c

    with pytest.raises(ti.TaichiCompilationError, match='Cannot broadcast tensor to tensor'):
        k(1)


def test_real_func_annotations_are_required_as_in_taichi():
    with pytest.raises(ti.TaichiSyntaxError, match='must be type annotated'):
        @ti.real_func
        def add(a, b: ti.i32) -> ti.i32:
            return a + b

    with pytest.raises(ti.TaichiCompilationError, match='return value must be annotated'):
        @ti.real_func
        def add2(a: ti.i32, b: ti.i32):
            return a + b

    class Counter:  # a method's self needs no annotation
        @ti.real_func
        def twice(self, a: ti.i32) -> ti.i32:
            return a * 2

    out = ti.field(ti.i32, ())

    @ti.real_func
    def no_value(a: ti.i32):  # no return value: no return annotation needed
        out[None] = a
        return

    @ti.kernel
    def k() -> ti.i32:
        no_value(1)
        return Counter().twice(4)

    assert k() == 8 and out[None] == 1


def test_unpacking_a_matrix_of_several_columns_is_an_error():
    a = ti.field(ti.f32, 4)

    @ti.kernel
    def bad():
        m = ti.Matrix([[2, 3], [4, 5]])
        a[0], a[1], a[2], a[3] = m

    with pytest.raises(ti.TaichiCompilationError, match='more than one columns'):
        bad()

    @ti.kernel
    def good():
        v = ti.Vector([2, 3])
        c = ti.Matrix([[4], [5]])  # one column: its entries
        a[0], a[1] = v
        a[2], a[3] = c

    good()
    assert list(a.to_numpy()) == [2, 3, 4, 5]
