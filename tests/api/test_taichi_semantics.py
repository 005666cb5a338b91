"""Taichi 1.7.4 semantics that its own test suite checks (issue 11): indexing rules, operators,
error types and messages. Each test asserts values or the exact exception type a Taichi user
catches."""
import numpy as np
import pytest

import vkdiff as ti


# ---------------------------------------------------------------- local matrix indexing
def test_kernel_matrix_needs_two_indices_vector_one():
    @ti.kernel
    def row_of_matrix():
        m = ti.Matrix([[1.0, 2.0], [3.0, 4.0]])
        print(m[0])

    with pytest.raises(ti.TaichiCompilationError, match=r'Expected 2 indices, got 1'):
        row_of_matrix()

    @ti.kernel
    def two_on_vector():
        v = ti.Vector([1, 2, 3])
        print(v[0, 0])

    with pytest.raises(ti.TaichiIndexError, match=r'Expected 1 indices, got 2'):
        two_on_vector()

    f = ti.Matrix.field(3, 3, ti.f32, shape=())

    @ti.kernel
    def row_of_field_element():
        f[None][0] = 1.0

    with pytest.raises(ti.TaichiCompilationError, match=r'Expected 2 indices, got 1'):
        row_of_field_element()


def test_kernel_matrix_two_indices_still_work():
    @ti.kernel
    def k(i: ti.i32) -> ti.f32:
        m = ti.Matrix([[1.0, 2.0], [3.0, 4.0]])
        m[1, 0] = 7.0
        return m[i, 1] + m[1, 0]

    assert k(0) == 9.0 and k(1) == 11.0


# ---------------------------------------------------------------- matrix operators
def test_matrix_shifts_and_invert_entrywise():
    a = ti.Matrix([[1, 2], [3, 4]])
    b = ti.Matrix([[1, 1], [2, 0]])
    a <<= b
    np.testing.assert_array_equal(a.to_numpy(), [[2, 4], [12, 4]])
    a >>= 1
    np.testing.assert_array_equal(a.to_numpy(), [[1, 2], [6, 2]])
    np.testing.assert_array_equal((~b).to_numpy(), [[-2, -2], [-3, -1]])
    np.testing.assert_array_equal((1 << b).to_numpy(), [[2, 2], [4, 1]])

    @ti.kernel
    def k() -> ti.i32:
        m = ti.Matrix([[1, 2], [3, 4]])
        m <<= 2
        m = m >> ti.Matrix([[0, 1], [0, 1]])
        return m[1, 1] + (~m)[0, 0]   # 8 + ~4

    assert k() == 8 + ~4


# ---------------------------------------------------------------- syntax rules (TaichiSyntaxError)
def _raises_syntax(kernel, match, *args):
    with pytest.raises(ti.TaichiSyntaxError, match=match) as e:
        kernel(*args)
    assert isinstance(e.value, ti.TaichiCompilationError) and isinstance(e.value, SyntaxError)


def test_unsupported_statement_names_the_node():
    @ti.kernel
    def k():
        raise ValueError()

    _raises_syntax(k, 'Unsupported node "Raise"')


def test_is_never_and_in_only_in_static_scope():
    a = ti.field(ti.i32, shape=())
    b = ti.field(ti.i32, shape=())

    @ti.kernel
    def is_():
        x = a is b

    @ti.kernel
    def in_():
        x = 1 in [1, 2]

    _raises_syntax(is_, 'Operator "is" in Taichi scope is not supported')
    _raises_syntax(in_, '"In" is only supported inside `ti.static`')

    names = [1, 3]

    @ti.kernel
    def static_in() -> ti.i32:
        s = 0
        if ti.static(3 in names and 2 not in names):
            s += 10
        ti.static_assert(1 in names)
        return s + sum([k for k in range(5) if k not in names])   # comprehension ifs: static

    assert static_in() == 10 + 0 + 2 + 4


def test_loop_control_and_definitions():
    @ti.kernel
    def outer_break():
        for i in range(4):
            break

    @ti.kernel
    def static_continue_in_runtime_if():
        for i in ti.static(range(3)):
            x = 0.5
            if x == 0.0:
                continue

    @ti.kernel
    def nested_def():
        def inner():
            pass

    _raises_syntax(outer_break, 'Cannot break in the outermost loop')
    _raises_syntax(static_continue_in_runtime_if, 'trying to `continue` a static `for` loop')
    _raises_syntax(nested_def, "Function definition is not allowed in 'ti.kernel'")


def test_kernel_arguments_are_immutable_but_func_arguments_not():
    @ti.kernel
    def assign(a: ti.i32) -> ti.i32:
        a = 5
        return a

    @ti.kernel
    def augment(a: ti.template()):
        a += 1

    _raises_syntax(assign, 'Kernel argument "a" is immutable', 1)
    _raises_syntax(augment, 'Kernel argument "a" is immutable', 1)

    @ti.func
    def bump(a):
        a += 1
        return a

    @ti.kernel
    def ok(a: ti.i32) -> ti.i32:
        b = a
        b += 1
        return bump(b)

    assert ok(1) == 3


def test_loop_target_must_be_a_new_name():
    x = ti.field(ti.f32, shape=4)

    @ti.kernel
    def range_for():
        i = 0
        for i in range(10):
            pass

    @ti.kernel
    def struct_for():
        j = 0
        for j in x:
            pass

    _raises_syntax(range_for, "Variable 'i' is already declared in the outer scope")
    _raises_syntax(struct_for, "Variable 'j' is already declared")

    @ti.kernel
    def sequential_loops_reuse_a_name() -> ti.i32:
        s = 0
        for i in range(3):
            s += i
        for i in range(4):
            s += i
        return s

    assert sequential_loops_reuse_a_name() == 3 + 6


def test_decorator_nesting_rules_and_static_grouped_ndrange():
    v = ti.field(ti.i32, shape=(2, 2))

    @ti.kernel
    def nested_static():
        for i in ti.static(ti.static(range(1))):
            pass

    @ti.kernel
    def static_grouped_field():
        for I in ti.static(ti.grouped(v)):
            pass

    _raises_syntax(nested_static, "'ti.static' cannot be nested")
    _raises_syntax(static_grouped_field, "Only 'ti.ndrange' is allowed")

    @ti.kernel
    def unrolled():
        for I in ti.static(ti.grouped(ti.ndrange(2, (1, 3)))):
            v[I[0], I[1] - 1] = I[0] * 10 + I[1]

    unrolled()
    np.testing.assert_array_equal(v.to_numpy(), [[1, 2], [11, 12]])


def test_loop_inside_a_non_static_if_is_serial_and_may_break():
    """Taichi: `if True:` is a run-time if (only `if ti.static(...)` is static), so the loop in
    it is not the outermost parallel loop and `break` works."""
    @ti.kernel
    def k() -> ti.i32:
        a = 0
        if True:
            for i in range(1000):
                if i == 100:
                    break
                a += 1
        return a

    assert k() == 100

    @ti.kernel
    def static_if():
        if ti.static(True):
            for i in range(10):
                break

    _raises_syntax(static_if, 'Cannot break in the outermost loop')


def test_index_vector_counts_as_its_entries_and_numpy_range_bounds():
    x = ti.Matrix.field(2, 3, dtype=ti.i32, shape=2)
    lo, hi = np.int32(1), np.array(2, dtype=np.int64)

    @ti.kernel
    def k():
        for i in range(lo, hi):
            for I in ti.static(ti.grouped(ti.ndrange(2, 3))):
                x[i][I] = I[0] * 10 + I[1]
        m = ti.Matrix([[0, 1], [2, 3]])
        x[0][0, 0] = m[ti.Vector([1, 0])]

    k()
    np.testing.assert_array_equal(x.to_numpy()[1], [[0, 1, 2], [10, 11, 12]])
    assert x[0][0, 0] == 2


# ---------------------------------------------------------------- returns
def test_return_statement_rules():
    @ti.kernel
    def void_return():
        return

    @ti.kernel
    def none_return():
        return None

    void_return()
    none_return()

    @ti.kernel
    def no_return() -> ti.i32:
        pass

    @ti.func
    def f_no_return() -> ti.i32:
        pass

    @ti.kernel
    def calls_f() -> ti.i32:
        return f_no_return()

    @ti.kernel
    def in_loop() -> ti.i32:
        for i in range(10):
            return i

    @ti.kernel
    def unannotated():
        return 1

    _raises_syntax(no_return, 'Kernel has a return type but does not have a return statement')
    _raises_syntax(calls_f, 'Function has a return type but does not have a return statement')
    _raises_syntax(in_loop, 'Return inside non-static if/for is not supported')
    _raises_syntax(unannotated, 'must be annotated with a return type')


def test_kernel_returns_a_struct():
    s0 = ti.types.struct(a=ti.math.vec3, b=ti.i16)
    s1 = ti.types.struct(a=ti.f32, b=s0)

    @ti.kernel
    def k(x: ti.f32) -> s1:
        return s1(a=x * 2, b=s0(a=ti.math.vec3([100, x, 3]), b=65537))

    r = k(0.25)
    assert r.a == 0.5 and r.b.b == 1    # 65537 wraps to 1 in i16
    np.testing.assert_allclose(r.b.a.to_numpy(), [100, 0.25, 3])

    tp = ti.types.struct(a=ti.i32)
    f = tp.field(shape=2)
    f[1].a = 7

    @ti.func
    def get(i) -> tp:
        return f[i]

    @ti.kernel
    def from_field(i: ti.i32) -> tp:
        return get(i)

    assert from_field(1).a == 7 and from_field(0).a == 0


def test_kernel_struct_return_type_must_match():
    sphere = ti.types.struct(center=ti.math.vec3, radius=float)
    circle = ti.types.struct(center=ti.math.vec2, radius=float)
    sphere_i = ti.types.struct(center=ti.math.vec3, radius=int)

    @ti.kernel
    def wrong_shape() -> sphere:
        return circle(center=ti.math.vec2([1, 2]), radius=2)

    @ti.kernel
    def wrong_member_type() -> sphere:
        return sphere_i(center=ti.math.vec3([1, 2, 3]), radius=2)

    for k in (wrong_shape, wrong_member_type):
        with pytest.raises(ti.TaichiTypeError, match='this kernel returns'):
            k()


# ---------------------------------------------------------------- typed literals
def test_primitive_type_calls_in_kernels():
    @ti.kernel
    def ok(x: ti.f32) -> ti.u32:
        a = ti.u32(4294967295)          # in range of u32
        b = ti.i32(x)                   # a run-time value is cast
        return a - ti.u32(b) + ti.u32(ti.f32(0.5) < x)

    assert ok(3.7) == 4294967295 - 3 + 1

    @ti.kernel
    def two_args():
        a = ti.i64(1, 2)

    @ti.kernel
    def keyword():
        a = ti.f64(1, x=2)

    @ti.kernel
    def compound():
        a = ti.f32(ti.Vector([1.0]))

    @ti.kernel
    def int_as_float():
        a = ti.f32(0)

    @ti.kernel
    def float_as_int():
        a = ti.i32(0.0)

    @ti.kernel
    def out_of_range():
        a = ti.u16(-1)

    @ti.kernel
    def beyond_default_ip():
        b = 0x80000000

    cases = [(two_args, ti.TaichiSyntaxError, 'can only decorate a single expression'),
             (keyword, ti.TaichiSyntaxError, 'can only decorate a single expression'),
             (compound, ti.TaichiSyntaxError, 'compound type'),
             (int_as_float, ti.TaichiTypeError, 'Integer literals must be annotated with a integer type'),
             (float_as_int, ti.TaichiTypeError, 'Floating-point literals must be annotated'),
             (out_of_range, ti.TaichiTypeError, 'exceeded the range of specified dtype: u16'),
             (beyond_default_ip, ti.TaichiTypeError, 'exceeded the range of default_ip')]
    for kernel, exc, match in cases:
        with pytest.raises(exc, match=match):
            kernel()
    assert issubclass(ti.TaichiTypeError, TypeError)


# ---------------------------------------------------------------- call arguments
def test_kernel_call_argument_errors():
    @ti.kernel
    def k(a: ti.i32, b: ti.i32 = 5) -> ti.i32:
        return a * 10 + b

    assert k(1) == 15 and k(b=2, a=1) == 12
    for call, match in [(lambda: k(b=2), r'Parameter `a : i32` missing'),
                        (lambda: k(1, 2, c=2), "Unexpected argument 'c'"),
                        (lambda: k(1, 2, 3), r'Too many arguments. Expected \(a : i32, b : i32\)'),
                        (lambda: k(1, a=2), "Multiple values for argument 'a'")]:
        with pytest.raises(ti.TaichiSyntaxError, match=match) as e:
            call()
        assert isinstance(e.value, TypeError)


def test_func_call_argument_errors():
    @ti.func
    def f(a, b, c=3):
        return a * 100 + b * 10 + c

    @ti.kernel
    def ok() -> ti.i32:
        return f(1, c=4, b=2)

    @ti.kernel
    def missing():
        f(1, c=3)

    @ti.kernel
    def unexpected():
        f(1, 2, 3, d=3)

    @ti.kernel
    def too_many():
        f(1, 2, 3, 4)

    @ti.kernel
    def twice():
        f(1, a=3, b=3)

    assert ok() == 124
    for kernel, match in [(missing, 'Parameter `b` missing'), (unexpected, "Unexpected argument 'd'"),
                          (too_many, 'Too many arguments'),
                          (twice, "Multiple values for argument 'a'")]:
        with pytest.raises(ti.TaichiSyntaxError, match=match):
            kernel()


def test_fill_inside_a_kernel():
    s = ti.field(ti.i32, shape=(3, 4))
    m = ti.Matrix.field(2, 2, ti.f32, shape=3, offset=(-1,))

    @ti.kernel
    def k(v: ti.i32):
        s.fill(v)
        m.fill(ti.Matrix([[1.0, 2.0], [3.0, v]]))
        for i in range(1):
            s[0, 0] = s[1, 1] + 1      # the fill (a loop of its own) ran before this loop

    k(7)
    want = np.full((3, 4), 7)
    want[0, 0] = 8
    np.testing.assert_array_equal(s.to_numpy(), want)
    np.testing.assert_array_equal(m.to_numpy(), np.tile([[1, 2], [3, 7]], (3, 1, 1)))


# ---------------------------------------------------------------- error messages (Taichi's layout)
def test_error_message_shows_the_source_with_carets_and_the_func_chain():
    import inspect
    first = inspect.currentframe().f_lineno

    @ti.func
    def inner():
        undefined_name(1,	2)

    @ti.func
    def middle():
        inner()

    @ti.kernel
    def k():
        middle()

    with pytest.raises(ti.TaichiNameError) as e:
        k()
    assert isinstance(e.value, NameError) and isinstance(e.value, ti.TaichiCompilationError)
    file = __file__
    want = (f'\nFile "{file}", line {first + 12}, in k:\n        middle()\n        ^^^^^^^^\n'
            f'File "{file}", line {first + 8}, in middle:\n        inner()\n        ^^^^^^^\n'
            f'File "{file}", line {first + 4}, in inner:\n'
            '        undefined_name(1,   2)\n        ^^^^^^^^^^^^^^\n'
            'Name "undefined_name" is not defined')
    assert e.value.args[0] == want


def test_walrus_in_a_kernel_assigns_and_yields_the_value():
    # Taichi's build_NamedExpr; examples/algorithm/poisson_disk_sampling.py:
    # `samples[0] = (p0 := iMouse[None])`
    src = ti.Vector.field(2, ti.f32, ())
    dst = ti.Vector.field(2, ti.f32, 2)

    @ti.kernel
    def k():
        dst[0] = (p0 := src[None])
        dst[1] = p0 * 2 + (n := 1.5) * n

    src[None] = [1.0, 2.0]
    k()
    np.testing.assert_allclose(dst.to_numpy(), [[1, 2], [4.25, 6.25]])
