"""The accumulation (reduction) pass under both launch geometries: the CPU-driver one used on
lavapipe, and the GPU one (grid-stride for uniform targets, 1024 reduction workgroups), forced
here so that it is tested without a GPU."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.lang import compiled


@pytest.fixture(params=['cpu', 'gpu'])
def geometry(request, monkeypatch):
    if request.param == 'gpu':
        monkeypatch.setattr(compiled, '_is_cpu_driver', lambda rt: False)
    ti.init()
    return request.param


def test_gravity_energy_and_gradient(geometry):
    N = 300
    x = ti.Vector.field(2, dtype=ti.f32, shape=N, needs_grad=True)
    U = ti.field(dtype=ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def compute_U():
        for i, j in ti.ndrange(N, N):
            r = x[i] - x[j]
            U[None] += -1 / r.norm(1e-3)

    xs = np.random.default_rng(0).random((N, 2)).astype(np.float32)
    x.from_numpy(xs)
    with ti.Tape(U):
        compute_U()
    X = xs.astype(np.float64)
    d = X[:, None, :] - X[None, :, :]
    r2 = (d ** 2).sum(-1) + 1e-3
    assert U[None] == pytest.approx(-(r2 ** -0.5).sum(), rel=1e-6)
    g = 2 * (d * r2[..., None] ** -1.5).sum(1)
    np.testing.assert_allclose(x.grad.to_numpy(), g, rtol=1e-4, atol=1e-5 * np.abs(g).max())


def test_histogram_and_sums(geometry):
    n = 100_003
    v = ti.field(ti.i32, shape=n)
    hist = ti.field(ti.i32, shape=16)
    total = ti.field(ti.f32, shape=())
    neg = ti.field(ti.i32, shape=())

    @ti.kernel
    def k():
        for i in v:
            hist[v[i] % 16] += 1
            total[None] += v[i] * 0.5
            neg[None] -= 1

    a = np.random.default_rng(1).integers(0, 1000, n).astype(np.int32)
    v.from_numpy(a)
    k()
    np.testing.assert_array_equal(hist.to_numpy(), np.bincount(a % 16, minlength=16))
    assert total[None] == pytest.approx(a.sum() * 0.5, rel=1e-7)
    assert neg[None] == -n
