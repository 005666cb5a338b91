"""Python-scope semantics as Taichi 1.7.4's (issue 10 items 1, 3, 5): element access of vector,
matrix and struct fields writes through; SNode axis labels order a field's indices; sparse
SNodes are a clear NotImplementedError at the call."""
import copy

import numpy as np
import pytest

import vkdiff as ti


def test_vector_element_writes_through():
    v = ti.Vector.field(3, ti.f32, shape=())
    v[None] = [1.0, 2.0, 3.0]
    v[None][0] -= 0.5
    v[None][1] = 7.0
    v[None].z = 9.0
    np.testing.assert_array_equal(v.to_numpy(), [0.5, 7.0, 9.0])
    e = v[None]
    e.x += 1.0       # swizzle read-modify-write
    e[-1] = -1.0     # negative index
    np.testing.assert_array_equal(v.to_numpy(), [1.5, 7.0, -1.0])


def test_matrix_element_writes_through():
    m = ti.Matrix.field(2, 3, ti.f32, shape=4)
    m[1][0, 2] = 5.0
    m[2][1, 0] = 3.0
    m[3][1][2] = 4.0    # a row of a matrix element is live too
    m[0].fill(2.0)
    want = np.zeros((4, 2, 3), np.float32)
    want[1, 0, 2], want[2, 1, 0], want[3, 1, 2], want[0] = 5, 3, 4, 2
    np.testing.assert_array_equal(m.to_numpy(), want)


def test_column_matrix_element_takes_one_index():
    m = ti.Matrix.field(3, 1, ti.f32, shape=2)
    m[0][1] = 5.0
    m[1][2, 0] = 7.0
    assert m[0][1] == 5.0 and m[1].to_list() == [[0.0], [0.0], [7.0]]
    np.testing.assert_array_equal(m.to_numpy().reshape(2, 3), [[0, 5, 0], [0, 0, 7]])


def test_element_reads_follow_kernels():
    """The element reads the field each time: a kernel's later writes show through."""
    v = ti.Vector.field(2, ti.f32, shape=2)

    @ti.kernel
    def bump():
        for i in v:
            v[i] += ti.Vector([1.0, 10.0])

    e = v[1]
    bump()
    assert e[0] == 1.0 and e[1] == 10.0
    bump()
    assert e.to_list() == [2.0, 20.0]


@pytest.mark.requires('float64')
def test_parameter_update_loop_learns():
    """The optimisation step of differentiable-simulation programs: init_v[None][d] -= lr *
    init_v.grad[None][d] (was silently dropped: the loss never fell)."""
    init_v = ti.Vector.field(2, ti.f64, shape=(), needs_grad=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def compute():
        d = init_v[None] - ti.Vector([3.0, -2.0])
        loss[None] = d.dot(d)

    init_v[None] = [0.0, 0.0]
    losses = []
    for _ in range(30):
        with ti.Tape(loss):
            compute()
        losses.append(loss[None])
        for d in range(2):
            init_v[None][d] -= 0.1 * init_v.grad[None][d]
    assert losses[-1] < 1e-4 * losses[0]
    np.testing.assert_allclose(init_v.to_numpy(), [3.0, -2.0], atol=1e-2)


def test_struct_member_elements_write_through():
    s = ti.Struct.field({'pos': ti.math.vec3, 'mass': ti.f32}, shape=3)
    s[1].mass = 2.0
    s[1].pos[2] = 5.0
    s[2].pos.y = 4.0
    np.testing.assert_array_equal(s.mass.to_numpy(), [0, 2, 0])
    np.testing.assert_array_equal(s.pos.to_numpy(), [[0, 0, 0], [0, 0, 5], [0, 4, 0]])


def test_element_behaves_as_a_value():
    """Arithmetic, numpy conversion, printing (numpy's text, as Taichi), copies are values."""
    v = ti.Vector.field(3, ti.f32, shape=2)
    v[0] = [1.0, 2.0, 3.0]
    e = v[0]
    assert isinstance(e, ti.Vector) and isinstance(e, ti.Matrix)
    w = e * 2 + 1
    assert type(w) is ti.Vector and w.to_list() == [3.0, 5.0, 7.0]
    np.testing.assert_array_equal(np.array(e), [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(e.to_numpy(), [1.0, 2.0, 3.0])
    assert str(e) == str(np.array([1.0, 2.0, 3.0])) == repr(e)
    assert e.norm() == pytest.approx(14 ** 0.5)
    c = copy.copy(e)
    v[0] = [0.0, 0.0, 0.0]
    assert c.to_list() == [1.0, 2.0, 3.0] and e.to_list() == [0.0, 0.0, 0.0]
    assert len(e) == 3 and list(e) == [0.0, 0.0, 0.0]


def test_element_write_checks_before_writing():
    v = ti.Vector.field(2, ti.i32, shape=1)
    v[0] = [1, 2]
    with pytest.raises(TypeError):
        v[0][0] = None
    with pytest.raises(OverflowError):
        v[0][1] = 2 ** 40
    with pytest.raises(IndexError):
        v[0][2] = 1
    assert v[0].to_list() == [1, 2]


# ---------------------------------------------------------------- axis labels (item 3)
def test_axis_labels_order_indices():
    x = ti.field(ti.f32)
    ti.root.dense(ti.l, 5).dense(ti.i, 3).place(x)
    assert x.shape == (3, 5)

    @ti.kernel
    def fill():
        for a, b in x:
            x[a, b] = a * 10 + b

    fill()
    want = np.add.outer(np.arange(3) * 10, np.arange(5)).astype(np.float32)
    np.testing.assert_array_equal(x.to_numpy(), want)
    assert x[2, 4] == 24.0


@pytest.mark.parametrize('name', ['i', 'j', 'k', 'l', 'ij', 'ik', 'il', 'jk', 'jl', 'kl', 'ijk',
                                  'ijl', 'ikl', 'jkl', 'ijkl'])
def test_every_axis_alias(name):
    axes = getattr(ti, name)
    n = len(name)
    sizes = (2, 3, 4, 5)[:n]
    x = ti.field(ti.i32)
    ti.root.dense(axes, sizes).place(x)
    assert x.shape == sizes


def test_repeated_axis_multiplies_and_other_orders():
    x, y = ti.field(ti.f32), ti.field(ti.f32)
    ti.root.dense(ti.i, 2).dense(ti.i, 4).place(x)
    ti.root.dense(ti.k, 2).dense(ti.ij, (3, 4)).place(y)
    assert x.shape == (8,) and y.shape == (3, 4, 2)


def test_hash_snodes_and_unsupported_quant_arrays_are_a_clear_error():
    # (quant_array itself works: tests/lang/test_quant_types.py)
    for make in (lambda: ti.root.hash(ti.i, 10), lambda: ti.root.quant_array(ti.i, 10, 64),
                 lambda: ti.root.pointer(ti.i, 4).bit_array(ti.j, 2, 8)):
        with pytest.raises(NotImplementedError, match='not supported') as e:
            make()
        assert isinstance(e.value, ti.VkdiffError) and isinstance(e.value, ti.TaichiRuntimeError)


def test_python_scope_iteration_over_field_is_a_clear_error():
    x = ti.field(ti.i32, shape=3)
    with pytest.raises(NotImplementedError, match='Struct for is only available in Taichi scope'):
        for _ in x:
            pass


def test_numpy_scalar_and_vector_give_a_vector():
    v = ti.Vector([1.0, 2.0])
    for r in (np.cos(0) + v, v + np.cos(0), np.float32(2) * v, np.float64(2.0) / v):
        assert isinstance(r, ti.Vector)
    assert (np.float64(2.0) / v).to_list() == [2.0, 1.0]


def test_python_scope_comparison_is_element_wise():
    """As Taichi: `(x[i] == val).all()` (Taichi's test_fill), `all(v == [2.0, 3.0])`."""
    x = ti.Vector.field(2, ti.f32, shape=3)
    x.fill(ti.Vector([2.0, 3.0]))
    assert (x[1] == ti.Vector([2.0, 3.0])).all() and all(x[2] == [2.0, 3.0])
    assert (x[0] != [2.0, 4.0]).to_list() == [False, True]
    assert not (x[0] == 2.0).all() and (x[0] == 2.0).any()
    m = ti.Matrix([[1, 2], [3, 4]])
    assert (m == ((1, 2), (3, 5))).to_list() == [[True, True], [True, False]]
    assert len({m, ti.Matrix([[1, 2], [3, 4]])}) == 2  # still hashable, by identity


def test_static_of_fields_still_binds_the_fields():
    """Field.__iter__ (the Python-scope error) must not make ti.static() wrap a field."""
    a, b = ti.field(ti.i32, shape=(1,)), ti.field(ti.i32, shape=(1,))

    @ti.kernel
    def foo(xx: ti.template(), yy: ti.template()) -> ti.i32:
        x, y = ti.static(xx, yy)
        x[0] -= 1
        y[0] -= 1
        return x[0] + y[0]

    a[0], b[0] = 2, 3
    assert foo(a, b) == 3
