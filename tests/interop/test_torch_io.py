"""PyTorch I/O on the host side: to_torch / from_torch on fields, struct fields and ndarrays."""
import numpy as np
import pytest

import vkdiff as ti

torch = pytest.importorskip('torch')


def test_field_to_from_torch_roundtrip():
    x = ti.Matrix.field(3, 2, ti.f32, shape=(4, 5))
    t = torch.arange(4 * 5 * 6, dtype=torch.float32).reshape(4, 5, 3, 2)
    x.from_torch(t)
    assert x[2, 3][1, 0] == t[2, 3, 1, 0].item()
    back = x.to_torch()
    assert back.dtype == torch.float32 and back.shape == (4, 5, 3, 2)
    assert torch.equal(back, t)
    back[0, 0, 0, 0] = 123.0                  # a fresh tensor: the field is not changed
    assert x[0, 0][0, 0] == 0.0
    assert x.to_torch(device='cpu').device == torch.device('cpu')


@pytest.mark.requires('float64')
def test_from_torch_requires_grad_and_f64():
    y = ti.field(ti.f64, shape=3)
    t = torch.tensor([1.5, -2.0, 3.25], dtype=torch.float64, requires_grad=True)
    y.from_torch(t)
    np.testing.assert_array_equal(y.to_numpy(), [1.5, -2.0, 3.25])
    assert y.to_torch().dtype == torch.float64


def test_vector_field_and_0d():
    v = ti.Vector.field(3, ti.f32, shape=())
    v.from_torch(torch.tensor([1.0, 2.0, 3.0]))
    assert v[None][2] == 3.0
    mat = ti.Matrix.field(2, 6, dtype=ti.f32, shape=(), needs_grad=True)
    z = torch.zeros((2, 6))
    z[1, 2] = 3
    mat.from_torch(z + 1)
    assert mat[None][1, 2] == 4 and mat.to_torch()[1, 2] == 4


def test_struct_field_torch():
    s = ti.Struct.field({'a': ti.i32, 'b': ti.f32}, shape=(6,))
    s.from_torch({'a': torch.full((6,), 2, dtype=torch.int32), 'b': torch.full((6,), 3.0)})
    assert s[4].a == 2 and s[4].b == 3.0
    out = s.to_torch()
    assert out['a'].dtype == torch.int32 and (out['b'] == 3.0).all()


@pytest.mark.requires('float64')
def test_ndarray_torch_io():
    a = ti.Vector.ndarray(2, ti.f32, (3,))
    t = torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    a.from_torch(t)
    assert a[2][1] == 6.0
    assert torch.equal(a.to_torch(), t)
    g = ti.ndarray(ti.f64, (2, 2), needs_grad=True)
    g.grad.from_torch(torch.eye(2, dtype=torch.float64))
    assert torch.equal(g.grad.to_torch(), torch.eye(2, dtype=torch.float64))


def test_from_numpy_takes_cpu_tensors_and_checks_them():
    x = ti.field(ti.i32, shape=4)
    x.from_numpy(torch.arange(4, dtype=torch.int64))
    np.testing.assert_array_equal(x.to_numpy(), [0, 1, 2, 3])
    with pytest.raises(ValueError):
        x.from_torch(torch.zeros(5))
    with pytest.raises(OverflowError):
        x.from_torch(torch.tensor([0, 1, 2, 2**40]))
    np.testing.assert_array_equal(x.to_numpy(), [0, 1, 2, 3])   # intact after bad input


def test_noncontiguous_tensor_from_torch_is_copied_correctly():
    x = ti.field(ti.f32, shape=(3, 3))
    t = torch.arange(9, dtype=torch.float32).reshape(3, 3).T
    x.from_torch(t)
    np.testing.assert_array_equal(x.to_numpy(), t.numpy())


@pytest.mark.requires('float64')
def test_dlpack_export_is_a_host_copy():
    a = ti.Vector.ndarray(3, ti.f64, (4,))
    a.from_numpy(np.arange(12.0).reshape(4, 3))
    t = torch.from_dlpack(a)
    assert t.dtype == torch.float64 and t.shape == (4, 3)
    assert torch.equal(t, torch.arange(12.0, dtype=torch.float64).reshape(4, 3))
    np.testing.assert_array_equal(np.from_dlpack(a), a.to_numpy())


def test_tensors_off_the_cpu_are_a_clear_error():
    """Kernels take CPU tensors only (zero-copy from CUDA through Vulkan external memory is not
    built); a tensor on another device ('meta' here: no GPU needed) is refused before anything
    runs. from_torch copies from any device."""
    @ti.kernel
    def k(a: ti.types.ndarray()):
        for i in a:
            a[i] = 1.0

    with pytest.raises(ValueError, match='CPU tensors'):
        k(torch.empty(3, device='meta'))
