"""Taichi-style programs, written as a Taichi user would, checked against numpy references."""
import numpy as np
import pytest

import vkdiff as ti


# ---------------------------------------------------------------- ti.loop_config
def test_loop_config_serialize_prefix_sum():
    B = 16
    data = ti.field(ti.i32, shape=1000)
    hist = ti.field(ti.i32, shape=B)
    pre = ti.field(ti.i32, shape=B + 1)

    @ti.kernel
    def histogram():
        for i in data:
            ti.atomic_add(hist[data[i] % B], 1)

    @ti.kernel
    def prefix():
        pre[0] = 0
        ti.loop_config(serialize=True)
        for i in range(B):  # each iteration reads the previous one's result: must run in order
            pre[i + 1] = pre[i] + hist[i]

    d = np.random.default_rng(1).integers(0, 1000, 1000).astype(np.int32)
    data.from_numpy(d)
    histogram()
    prefix()
    h = np.bincount(d % B, minlength=B)
    np.testing.assert_array_equal(hist.to_numpy(), h)
    np.testing.assert_array_equal(pre.to_numpy(), np.concatenate([[0], np.cumsum(h)]))


def test_loop_config_serialize_break_and_grad():
    x = ti.field(ti.f32, shape=8, needs_grad=True)
    c = ti.field(ti.f32, shape=9, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def cumsum():
        ti.loop_config(serialize=True)
        for i in range(8):
            c[i + 1] = c[i] + x[i] * x[i]

    @ti.kernel
    def total():
        for i in c:
            loss[None] += c[i]

    @ti.kernel
    def first_square_above(t: ti.i32) -> ti.i32:
        r = -1
        ti.loop_config(serialize=True, block_dim=64)
        for i in range(100):
            if i * i > t:
                r = i
                break
        return r

    xs = np.arange(8, dtype=np.float32)
    x.from_numpy(xs)
    with ti.Tape(loss):
        cumsum()
        total()
    np.testing.assert_allclose(c.to_numpy(), np.concatenate([[0], np.cumsum(xs ** 2)]))
    np.testing.assert_allclose(x.grad.to_numpy(), 2 * xs * (8 - np.arange(8)))
    assert first_square_above(50) == 8


# ---------------------------------------------------------------- @ti.data_oriented classes
def test_data_oriented_class_kernels_funcs_and_grad():
    @ti.data_oriented
    class Sim:
        def __init__(self, n):
            self.n = n
            self.x = ti.field(ti.f32, shape=n, needs_grad=True)
            self.loss = ti.field(ti.f32, shape=(), needs_grad=True)

        @ti.func
        def weight(self, i):
            return ti.cast(i, ti.f32) * self.n

        @ti.kernel
        def step(self, a: ti.f32):
            for i in self.x:
                self.x[i] += a * self.weight(i)

        @ti.kernel
        def total(self) -> ti.f32:
            s = 0.0
            for i in range(self.n):
                s += self.x[i]
            return s

        @ti.kernel
        def compute_loss(self):
            for i in self.x:
                self.loss[None] += self.x[i] ** 2

    a, b = Sim(8), Sim(4)  # two instances: one compiled kernel each
    a.step(2.0)
    a.step(1.0)
    b.step(1.0)
    want = 3.0 * 8 * np.arange(8)
    np.testing.assert_allclose(a.x.to_numpy(), want)
    np.testing.assert_allclose(b.x.to_numpy(), 4.0 * np.arange(4))
    assert a.total() == want.sum()
    with ti.Tape(a.loss):
        a.compute_loss()
    np.testing.assert_allclose(a.x.grad.to_numpy(), 2 * want)
    a.x.grad.fill(0)
    a.loss.grad[None] = 1
    a.compute_loss.grad()
    np.testing.assert_allclose(a.x.grad.to_numpy(), 2 * want)


# ---------------------------------------------------------------- Julia set (Taichi's hello world)
def test_julia_set_any_arch_name():
    for arch in (ti.cuda, ti.metal, ti.opengl, ti.x64, ti.cpu, ti.gpu):
        assert arch == ti.vulkan
    ti.init(arch=ti.cuda)
    n = 32
    pixels = ti.field(dtype=float, shape=(n * 2, n))

    @ti.func
    def complex_sqr(z):
        return ti.Vector([z[0] ** 2 - z[1] ** 2, z[1] * z[0] * 2])

    @ti.kernel
    def paint(t: float):
        for i, j in pixels:
            c = ti.Vector([-0.8, ti.cos(t) * 0.2])
            z = ti.Vector([i / n - 1, j / n - 0.5]) * 2
            iterations = 0
            while z.norm() < 20 and iterations < 50:
                z = complex_sqr(z) + c
                iterations += 1
            pixels[i, j] = 1 - iterations * 0.02

    paint(0.03)
    c = complex(-0.8, np.cos(np.float32(0.03)) * 0.2)
    ii, jj = np.meshgrid(np.arange(2 * n), np.arange(n), indexing='ij')
    z = ((ii / n - 1) * 2 + 1j * (jj / n - 0.5) * 2).astype(np.complex64)
    it = np.zeros(z.shape, np.int32)
    for _ in range(50):
        alive = np.abs(z) < 20
        z = np.where(alive, z * z + np.complex64(c), z)
        it += alive
    got = pixels.to_numpy()
    # iteration counts may differ where |z| lands within rounding of 20: allow a few pixels
    assert (np.abs(got - (1 - it * 0.02)) > 1e-5).sum() <= 2


# ---------------------------------------------------------------- kernel arguments
def test_kernel_default_and_keyword_arguments():
    v = ti.Vector.field(3, ti.f32, shape=(2, 3))

    @ti.kernel
    def fill(scale: ti.f32 = 2.0, offset: ti.i32 = 0):
        for I in ti.grouped(v):
            v[I] = ti.Vector([I[0], I[1], I[0] * I[1]]) * scale + offset

    ii, jj = np.meshgrid(np.arange(2), np.arange(3), indexing='ij')
    base = np.stack([ii, jj, ii * jj], -1).astype(np.float32)
    fill()
    np.testing.assert_allclose(v.to_numpy(), base * 2)
    fill(offset=1)
    np.testing.assert_allclose(v.to_numpy(), base * 2 + 1)
    fill(3.0)
    np.testing.assert_allclose(v.to_numpy(), base * 3)
    with pytest.raises(ti.VkdiffError, match='unexpected keyword|got an unexpected'):
        fill(bogus=1)
