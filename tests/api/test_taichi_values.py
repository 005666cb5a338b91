"""Taichi 1.7.4 semantics of values that its own test suite checks (issue 11): swizzles, matrix
slices, structs, fill, ndrange, operators. Each test asserts values or the exception type a Taichi
user catches."""
import numpy as np
import pytest

import vkdiff as ti


def _raises_syntax(kernel, match, *args):
    with pytest.raises(ti.TaichiSyntaxError, match=match) as e:
        kernel(*args)
    assert isinstance(e.value, ti.TaichiCompilationError) and isinstance(e.value, SyntaxError)


# ---------------------------------------------------------------- swizzles
def test_swizzles_in_python_scope():
    v = ti.math.vec3(1, 2, 3)
    np.testing.assert_array_equal(v.zyx.to_numpy(), [3, 2, 1])
    np.testing.assert_array_equal(v.ssp.to_numpy(), [1, 1, 3])
    v.rgb += 1
    v.xy = [7, 8]
    np.testing.assert_array_equal(v.to_numpy(), [7, 8, 4])
    np.testing.assert_array_equal(ti.math.vec4(v.bgr, 0).to_numpy(), [4, 8, 7, 0])
    a = ti.math.vec2(1, 2)
    with pytest.raises(ti.TaichiSyntaxError, match=r"vec2 only has attributes=\('x', 'y'\), got=\('z',\)"):
        a.z = 3
    with pytest.raises(ti.TaichiRuntimeError, match='value len does not match the swizzle pattern=xy'):
        a.xy = [1, 2, 3]
    f = ti.Vector.field(3, ti.f32, shape=())
    f[None].zx = [5, 6]          # a field element's swizzle writes through
    np.testing.assert_array_equal(f.to_numpy(), [6, 0, 5])


def test_swizzles_in_kernels():
    @ti.kernel
    def k() -> ti.math.vec4:
        v = ti.Vector([1, 2, 3])
        v.zxy += [v.z, v.y, v.x]        # (3+3, 1+2, 2+1) -> z, x, y
        w = v.yxz
        w.bg = ti.Vector([10, 20])
        return ti.math.vec4(w.x, w.stp)

    np.testing.assert_array_equal(k().to_numpy(), [3, 3, 20, 10])

    @ti.kernel
    def bad():
        b = ti.math.vec2(1, 2)
        b.xyz = [1, 2, 3]

    with pytest.raises(ti.TaichiSyntaxError, match=r"got=\('x', 'y', 'z'\)"):
        bad()


# ---------------------------------------------------------------- matrix slices
def test_matrix_slices_read_and_write():
    np.testing.assert_array_equal(ti.Vector([1, 2, 3, 4, 5, 6])[2::3].to_numpy(), [3, 6])
    np.testing.assert_array_equal(ti.Matrix([[1, 2], [3, 4]])[:, 1].to_numpy(), [2, 4])

    @ti.kernel
    def read(j: ti.i32) -> ti.types.matrix(2, 3, ti.i32):
        a = ti.Matrix([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
        col = a[:, j]                       # a run-time column index
        b = a[1:, :]
        b[0, :] += col                      # a slice as an assignment target
        b[1, 1:] = ti.Vector([0, -1])
        return b

    np.testing.assert_array_equal(read(2).to_numpy(), [[7, 11, 15], [7, 0, -1]])

    @ti.kernel
    def write(i: ti.i32) -> ti.types.matrix(3, 2, ti.i32):
        m = ti.Matrix([[0, 0] for _ in range(3)])
        m[i, :] = ti.Vector([1, 2])
        m[::2, 1] += ti.Vector([10, 20])
        return m

    np.testing.assert_array_equal(write(1).to_numpy(), [[0, 10], [1, 2], [0, 20]])

    @ti.kernel
    def variable_bound(i: ti.i32):
        a = ti.Vector([0, 1, 2, 3])
        b = a[i::2]

    with pytest.raises(ti.TaichiCompilationError, match='does not support variables in slice'):
        variable_bound(1)


def test_raw_div_and_raw_mod_entrywise():
    @ti.kernel
    def k(s: ti.i32) -> ti.types.matrix(2, 2, ti.i32):
        a = ti.Matrix([[7, -7], [9, -9]])
        return ti.raw_div(a, s) * 10 + ti.raw_mod(a, ti.Matrix([[s, s], [4, 4]]))

    # C semantics: 7/2=3 r1, -7/2=-3 r-1, 9/4=2 r1, -9/4=-2 r-1 (raw_div by s=2)
    np.testing.assert_array_equal(k(2).to_numpy(), [[31, -31], [41, -41]])
    np.testing.assert_array_equal(ti.raw_div(ti.Vector([-7, 7]), 2).to_numpy(), [-3, 3])


# ---------------------------------------------------------------- structs
def test_struct_type_call_is_positional_and_broadcasts():
    line = ti.types.struct(linedir=ti.math.vec3, length=float)
    s = line(1)                          # linedir = vec3(1), length = 0
    np.testing.assert_array_equal(s.linedir.to_numpy(), [1, 1, 1])
    assert s.length == 0

    @ti.dataclass
    class A:
        i: int
        j: float

    @ti.dataclass
    class B:
        a1: A
        a2: A

    b = B(A(1, 2.0))                     # a1 = the struct, a2 = A(0)
    assert (b.a1.i, b.a1.j, b.a2.i, b.a2.j) == (1, 2.0, 0, 0.0)

    @ti.kernel
    def k() -> ti.f32:
        x = line(2)
        x.length = 0.5
        return x.linedir.sum() + x.length

    assert k() == 6.5


def test_fill_writes_through_locals_and_members():
    x = ti.Struct.field({'a': ti.f32, 'b': ti.types.vector(3, ti.i32)}, shape=4)

    @ti.kernel
    def k() -> ti.i32:
        for i in x:
            x[i].b.fill(i + 0.5)        # truncated to i in the i32 member
        v = ti.Vector([1, 2, 3])
        v.fill(7)
        return v.sum()

    assert k() == 21
    np.testing.assert_array_equal(x.b.to_numpy(), np.repeat(np.arange(4), 3).reshape(4, 3))


def test_a_field_is_no_operand():
    x = ti.field(int, shape=())

    @ti.kernel
    def k():
        a = ti.Vector([1, 1, 1])
        b = a * x

    with pytest.raises(ti.TaichiTypeError, match="unsupported operand type.*'mul'.*'Field'"):
        k()


def test_fields_take_up_to_twelve_indices():
    assert ti._lib.core.get_max_num_indices() == 12
    d = 12
    x = ti.Vector.field(2, dtype=ti.i32, shape=(2,) * d)

    @ti.kernel
    def fill():
        for I in ti.grouped(x):
            x[I] += ti.Vector([I.sum(), I[0]])

    x[(1,) * d][0] = 5
    fill()
    idx = np.indices((2,) * d)
    want = np.stack([idx.sum(0), idx[0]], -1)
    want[(1,) * d + (0,)] += 5
    np.testing.assert_array_equal(x.to_numpy(), want)
    with pytest.raises(ValueError, match='at most 12 dimensions'):
        ti.field(ti.f32, shape=(1,) * 13)


def test_ndrange_argument_rules():
    a, b = np.int64(1), np.int32(4)

    @ti.kernel
    def ok(n: ti.i32) -> ti.i32:
        s = 0
        for i, j in ti.ndrange((a, b), n):
            s += i * j
        return s

    assert ok(3) == sum(i * j for i in range(1, 4) for j in range(3))

    @ti.kernel
    def three():
        for i in ti.ndrange((1, 2, 3)):
            pass

    @ti.kernel
    def floats():
        for i in ti.ndrange((1.1, 10.5)):
            pass

    @ti.kernel
    def too_few_names():
        for i in ti.ndrange(4, 4):
            pass

    @ti.kernel
    def range_two_names():
        for i, j in range(4):
            pass

    _raises_syntax(three, r'should be a scalar or a tuple/list like \(begin, end\)')
    with pytest.raises(ti.TaichiTypeError, match='should be an integer scalar'):
        floats()
    _raises_syntax(too_few_names, 'number of the loop variables not equal to the dimension')
    with pytest.raises(ti.CompileError, match='binds 2 names but iterates over 1'):
        range_two_names()


# ---------------------------------------------------------------- operators and expressions
def test_and_or_return_an_operand_as_in_python():
    @ti.kernel
    def and_(x: ti.i32, y: ti.i32) -> ti.i32:
        return x and y

    @ti.kernel
    def or_(x: ti.i32, y: ti.i32) -> ti.i32:
        return x or y

    assert [and_(1, 2), and_(2, 1), and_(0, 1), and_(1, 0)] == [2, 1, 0, 0]
    assert [or_(1, 2), or_(2, 1), or_(0, 3), or_(0, 0)] == [1, 2, 3, 0]


def test_not_and_invert_take_integers_only():
    @ti.kernel
    def inv(x: ti.f32) -> ti.i32:
        return ~x

    @ti.kernel
    def not_(x: ti.f32) -> ti.i32:
        return not x

    @ti.kernel
    def ok(x: ti.i32) -> ti.i32:
        return (not x) * 10 + ~x

    for k in (inv, not_):
        with pytest.raises(ti.TaichiTypeError, match="takes integral inputs only, however 'f32'"):
            k(1.0)
    assert ok(0) == 10 - 1 and ok(5) == -6


def test_vector_condition_in_if_expression_and_negative_indices():
    @ti.kernel
    def ifexp() -> ti.i32:
        v = ti.Vector([1, -1])
        w = 0 if v > 0 else v
        return w[0]

    @ti.kernel
    def negative(i: ti.i32) -> ti.i32:
        x = ti.Vector([i, i + 1, i + 2])
        return x[-1]

    @ti.kernel
    def negative_slice(i: ti.i32) -> ti.i32:
        x = ti.Vector([i, i + 1, i + 2])
        return x[:-1].sum()

    _raises_syntax(ifexp, 'Please use "ti.select" instead')
    _raises_syntax(negative, 'Negative indices are not supported in Taichi kernels', 0)
    _raises_syntax(negative_slice, 'Negative indices are not supported', 0)
    assert ti.Vector([1, 2, 3])[-1] == 3        # Python scope allows them


def test_annotated_reassignment_keeps_its_type():
    @ti.kernel
    def k():
        d: ti.i32 = 2
        d: ti.f32 = 2.0

    @ti.kernel
    def same() -> ti.i32:
        d: ti.i32 = 2
        d: ti.i32 = 3.7
        b: ti.u1 = True
        b: ti.u1 = False
        return d + b

    _raises_syntax(k, 'Static assign cannot have type overloading')
    assert same() == 3
