"""`Tape(validation=True)` on ndarray arguments: element by element, as on fields. A launch that
overwrites elements of an array (a vkdiff ndarray, a numpy array) that an earlier recorded launch
read is an AccessRuleError naming the array and the first element; overwriting other elements of
the same array is legal and its gradients are right (the static check cannot tell them apart)."""
import numpy as np
import pytest

import vkdiff as ti


@ti.kernel
def _use(x: ti.types.ndarray(), loss: ti.types.ndarray(), lo: ti.i32, hi: ti.i32):
    for i in range(lo, hi):
        loss[None] += x[i] ** 2


@ti.kernel
def _overwrite(x: ti.types.ndarray(), lo: ti.i32, hi: ti.i32):
    for i in range(lo, hi):
        x[i] = -1.0


@ti.kernel
def _use2(x: ti.types.ndarray(), c: ti.types.ndarray(), loss: ti.types.ndarray()):
    for i, j in x:
        loss[None] += c[i, j] * x[i, j][1]


def _arrays(n=8):
    x = ti.ndarray(ti.f64, n, needs_grad=True)
    loss = ti.ndarray(ti.f64, (), needs_grad=True)
    x.from_numpy(np.arange(n, dtype=np.float64))
    return x, loss


@pytest.mark.requires('float64')
def test_disjoint_overwrite_of_an_ndarray_passes_with_right_gradient():
    x, loss = _arrays()
    with pytest.raises(ti.AutodiffError):        # statically: the same array, overlap unknown
        with ti.ad.Tape(loss=loss):
            _use(x, loss, 0, 4)
            _overwrite(x, 4, 8)
    x.from_numpy(np.arange(8, dtype=np.float64))
    with ti.ad.Tape(loss=loss, validation=True):
        _use(x, loss, 0, 4)
        _overwrite(x, 4, 8)
    assert loss[None] == 0 + 1 + 4 + 9
    np.testing.assert_array_equal(x.grad.to_numpy(), [0, 2, 4, 6, 0, 0, 0, 0])
    np.testing.assert_array_equal(x.to_numpy(), [0, 1, 2, 3, -1, -1, -1, -1])


@pytest.mark.requires('float64')
def test_overlapping_overwrite_of_an_ndarray_is_caught_with_its_element():
    x, loss = _arrays()
    with pytest.raises(ti.AutodiffError, match=r'validation=True.*2 element\(s\) of x.*x\[2\]'):
        with ti.ad.Tape(loss=loss, validation=True):
            _use(x, loss, 0, 4)
            _overwrite(x, 2, 6)
    with pytest.raises(ti.TaichiAssertionError):  # (Taichi's type for the checker's error)
        with ti.ad.Tape(loss=loss, validation=True):
            _use(x, loss, 0, 8)
            _overwrite(x, 7, 8)


@pytest.mark.requires('float64')
def test_overwrite_through_another_parameter_is_caught():
    """The same array passed to a different parameter of another kernel: its marks follow the
    array, not the parameter."""
    @ti.kernel
    def copy_into(src: ti.types.ndarray(), dst: ti.types.ndarray()):
        for i in range(3):
            dst[i + 5] = src[i]

    x, loss = _arrays()
    y = ti.ndarray(ti.f64, 8, needs_grad=True)
    with ti.ad.Tape(loss=loss, validation=True):   # writes x[5:8], read x[0:4]: legal
        _use(x, loss, 0, 4)
        copy_into(y, x)
    np.testing.assert_array_equal(x.grad.to_numpy(), [0, 2, 4, 6, 0, 0, 0, 0])
    x.from_numpy(np.arange(8, dtype=np.float64))
    with pytest.raises(ti.AutodiffError, match=r'1 element\(s\) of x.*x\[5\]'):
        with ti.ad.Tape(loss=loss, validation=True):
            _use(x, loss, 5, 6)
            copy_into(y, x)


def test_numpy_array_read_as_a_constant_then_overwritten_is_caught():
    """A numpy array without gradient is still a value the adjoint replays (c in loss += c * x):
    overwriting the elements read is caught, other elements are not."""
    x = ti.Vector.ndarray(2, ti.f32, (2, 3), needs_grad=True)
    loss = ti.ndarray(ti.f32, (), needs_grad=True)
    xs = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    x.from_numpy(xs)
    c = np.arange(6, dtype=np.float32).reshape(2, 3) + 1

    @ti.kernel
    def bump(c: ti.types.ndarray(), i: ti.i32, j: ti.i32):
        c[i, j] = 100.0

    with ti.ad.Tape(loss=loss, validation=True):
        _use2(x, c, loss)
        bump(np.zeros((2, 3), np.float32), 1, 2)  # another array: fine
    assert loss[None] == pytest.approx((c * xs[..., 1]).sum())
    np.testing.assert_array_equal(x.grad.to_numpy()[..., 1], c)
    np.testing.assert_array_equal(x.grad.to_numpy()[..., 0], 0)
    with pytest.raises(ti.AutodiffError, match=r'1 element\(s\) of c.*\[1, 2\]'):
        with ti.ad.Tape(loss=loss, validation=True):
            _use2(x, c, loss)
            bump(c, 1, 2)
    assert c[1, 2] == 100.0   # (the launch itself ran, as Taichi's do)


def test_vector_components_are_marked_one_by_one():
    """Only component 1 of each element is read by _use2: overwriting component 0 is legal."""
    x = ti.Vector.ndarray(2, ti.f32, (2, 3), needs_grad=True)
    loss = ti.ndarray(ti.f32, (), needs_grad=True)
    x.fill(1.0)
    c = np.ones((2, 3), np.float32)

    @ti.kernel
    def set_comp(x: ti.types.ndarray(), k: ti.i32):
        for i, j in x:
            x[i, j][k] = 7.0

    with ti.ad.Tape(loss=loss, validation=True):
        _use2(x, c, loss)
        set_comp(x, 0)
    np.testing.assert_array_equal(x.grad.to_numpy()[..., 1], 1.0)
    with pytest.raises(ti.AutodiffError, match='6 element'):
        with ti.ad.Tape(loss=loss, validation=True):
            _use2(x, c, loss)
            set_comp(x, 1)


@pytest.mark.requires('float64')
def test_torch_tensor_overwritten_after_a_read_is_caught():
    torch = pytest.importorskip('torch')
    x, loss = _arrays()
    t = torch.arange(8, dtype=torch.float64)

    @ti.kernel
    def use_t(t: ti.types.ndarray(), x: ti.types.ndarray(), loss: ti.types.ndarray()):
        for i in range(2, 4):
            loss[None] += t[i] * x[i]

    with ti.ad.Tape(loss=loss, validation=True):   # t[4:] overwritten: legal
        use_t(t, x, loss)
        _overwrite(t, 4, 8)
    np.testing.assert_array_equal(x.grad.to_numpy(), [0, 0, 2, 3, 0, 0, 0, 0])
    assert t[5].item() == -1.0
    with pytest.raises(ti.AutodiffError, match=r'1 element\(s\) of t.*t\[3\]'):
        with ti.ad.Tape(loss=loss, validation=True):
            use_t(t, x, loss)
            _overwrite(t, 3, 4)
