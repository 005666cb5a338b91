"""Python-scope vector/matrix arithmetic between operands of different shapes follows Taichi
(ops._binary_operation): numpy's broadcasting on the two values, the result a Matrix
(`v == [v * 2, v * 3]` in Taichi's test_ad_ndarray.py compares a vec2 with a 2x2 list). In
kernels a shape mismatch stays an error."""
import numpy as np
import pytest

import vkdiff as ti


def test_vector_compared_with_a_nested_list_broadcasts():
    v = ti.Vector([6.0, 6.0])
    r = v == [v, v * 1.5]           # (2,) against (2, 2): numpy broadcasting
    assert isinstance(r, ti.Matrix) and r.get_shape() == (2, 2)
    np.testing.assert_array_equal(r.to_numpy(), [[True, True], [False, False]])
    r = v != [[6.0, 1.0], [2.0, 6.0]]
    np.testing.assert_array_equal(r.to_numpy(), [[False, True], [True, False]])


def test_arithmetic_broadcasts_as_numpy():
    v = ti.Vector([1.0, 2.0, 3.0])
    m = ti.Matrix([[1.0, 1.0, 1.0], [10.0, 20.0, 30.0]])
    np.testing.assert_array_equal((v + m).to_numpy(), v.to_numpy() + m.to_numpy())
    np.testing.assert_array_equal((m * v).to_numpy(), m.to_numpy() * v.to_numpy())
    np.testing.assert_array_equal((v == v).to_numpy(), [True, True, True])  # same shape: as before
    with pytest.raises(ValueError):   # shapes numpy cannot broadcast: numpy's error, as Taichi
        ti.Vector([1.0, 2.0]) + m


def test_shape_mismatch_in_a_kernel_is_still_an_error():
    @ti.kernel
    def k() -> ti.i32:
        v = ti.Vector([1.0, 2.0])
        w = ti.Matrix([[1.0, 2.0], [3.0, 4.0]])
        return (v == w).all()

    with pytest.raises(ti.TaichiCompilationError, match='shape mismatch'):
        k()
