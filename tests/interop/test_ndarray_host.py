"""ndarrays in Python scope: creation, shapes, host access, numpy I/O, fill, copy_from, grads."""
import copy
import gc

import numpy as np
import pytest

import vkdiff as ti


def test_scalar_ndarray_properties_and_zero_init():
    a = ti.ndarray(ti.f32, (4, 3), needs_grad=True)
    assert a.shape == (4, 3) and a.dtype == ti.f32 and a.element_shape == ()
    assert isinstance(a, ti.ScalarNdarray) and isinstance(a, ti.Ndarray)
    assert a.grad.shape == (4, 3) and a.grad.grad is None
    assert (a.to_numpy() == 0).all() and (a.grad.to_numpy() == 0).all()
    assert ti.ndarray(int, 8).shape == (8,) and ti.ndarray(int, 8).dtype == ti.i32
    assert ti.ndarray(ti.f64, ()).shape == ()


@pytest.mark.requires('float64')
def test_host_read_write_roundtrip():
    a = ti.ndarray(ti.f64, (5, 2))
    ref = np.random.default_rng(0).standard_normal((5, 2))
    for i in range(5):
        for j in range(2):
            a[i, j] = float(ref[i, j])
    np.testing.assert_array_equal(a.to_numpy(), ref)
    assert a[3, 1] == ref[3, 1] and a[-1, 0] == ref[4, 0]
    with pytest.raises(IndexError):
        a[5, 0]
    with pytest.raises(IndexError):
        a[1]
    with pytest.raises(TypeError):
        ti.ndarray(ti.i32, 3)[0] = 1.5      # as on fields: no implicit float -> int


def test_vector_and_matrix_ndarrays():
    v = ti.Vector.ndarray(3, ti.i32, 5)
    assert isinstance(v, ti.VectorNdarray) and v.shape == (5,) and v.n == 3
    v[1][0] = 7
    v[2] = [1, 2, 3]
    ref = np.zeros((5, 3), np.int32)
    ref[1, 0] = 7
    ref[2] = [1, 2, 3]
    np.testing.assert_array_equal(v.to_numpy(), ref)
    m = ti.Matrix.ndarray(2, 3, ti.f32, (2, 2))
    assert isinstance(m, ti.MatrixNdarray) and (m.n, m.m) == (2, 3)
    src = np.arange(24, dtype=np.float32).reshape(2, 2, 2, 3)
    m.from_numpy(src)
    np.testing.assert_array_equal(m.to_numpy(), src)
    assert m[1, 0][1, 2] == src[1, 0, 1, 2]
    m[1, 0][1, 2] = -1.0
    assert m.to_numpy()[1, 0, 1, 2] == -1.0
    t = ti.ndarray(ti.math.vec2, (6, 4))
    assert isinstance(t, ti.VectorNdarray) and t.to_numpy().shape == (6, 4, 2)
    mt = ti.ndarray(ti.types.matrix(3, 4, ti.f64), (2,))
    assert mt.element_shape == (3, 4) and mt.dtype == ti.f64
    assert mt.element_type.n == 3 and mt.element_type.m == 4


def test_fill_copy_from_deepcopy():
    a = ti.ndarray(ti.i32, 8)
    a.fill(2)
    assert (a.to_numpy() == 2).all()
    b = ti.ndarray(ti.i32, 8)
    b.from_numpy(np.arange(8, dtype=np.int32))
    a.copy_from(b)
    np.testing.assert_array_equal(a.to_numpy(), np.arange(8))
    c = copy.deepcopy(a)
    a[0] = 100
    assert c[0] == 0 and a[0] == 100
    with pytest.raises(ValueError):
        a.copy_from(ti.ndarray(ti.i32, 9))
    with pytest.raises(TypeError):
        a.copy_from(np.zeros(8))
    m = ti.Matrix.ndarray(2, 2, ti.f32, 3)
    m.fill(1.5)
    assert (m.to_numpy() == 1.5).all()


def test_bad_input_leaves_data_intact():
    a = ti.ndarray(ti.i32, 4)
    a.from_numpy(np.arange(4, dtype=np.int32))
    with pytest.raises(ValueError):
        a.from_numpy(np.zeros(5))
    with pytest.raises(OverflowError):
        a.from_numpy(np.array([1, 2, 3, 2**40]))
    np.testing.assert_array_equal(a.to_numpy(), np.arange(4))


@pytest.mark.parametrize('shape', [2**31, 1.5, 0, (1, 0), (1, 0.5), (1, 2**31), True])
def test_invalid_shapes(shape):
    with pytest.raises(ValueError, match='is not a valid shape for ndarray'):
        ti.ndarray(ti.f32, shape)


def test_needs_grad_needs_float():
    with pytest.raises(RuntimeError):
        ti.ndarray(ti.i32, 3, needs_grad=True)


def test_ndarrays_are_freed():
    """Ndarrays are values, not program state: dropped ones free their device memory."""
    import weakref
    a = ti.ndarray(ti.f32, (256, 256))
    a.fill(1.0)
    r = weakref.ref(a)
    del a
    gc.collect()
    assert r() is None


def test_reset_drops_storage():
    a = ti.ndarray(ti.f32, 3)
    a.fill(1.0)
    ti.reset()
    ti.init()
    with pytest.raises(ti.VkdiffError, match='previous ti.init'):
        a.to_numpy()


def test_element_type_of_vector_and_matrix_ndarrays():
    """Taichi's TensorType API on an ndarray's element type: element_type() is the entries'
    dtype, shape() the entry shape as a list (test_ndarray.py::test_ndarray_compound_element)."""
    b = ti.ndarray(ti.types.vector(3, ti.i32), shape=(4, 4))
    assert isinstance(b, ti.VectorNdarray)
    assert b.element_type.element_type() == ti.i32
    assert b.element_type.shape() == [3]
    c = ti.ndarray(ti.types.matrix(3, 4, float), shape=(4, 5))
    assert isinstance(c, ti.MatrixNdarray)
    assert c.shape == (4, 5)
    assert c.element_type.element_type() == ti.f32
    assert c.element_type.shape() == [3, 4]
    assert ti.math.vec2.shape() == [2] and ti.math.mat3.element_type() == ti.f32
