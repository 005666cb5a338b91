"""The static global-data-access check (autodiff/access_rules.py) proves time slices apart
through nested constant offsets: DiffTaichi's smoke_taichi_cpu.py Gauss-Seidel step
`a = k + t * n; p[a + 1, y, x] = f(p[a, ...])` (k a template constant, t a kernel argument)
reads slice a and writes slice a + 1, never the same element; it was refused as a rule-1 break.
The gradient is checked against the linear map's transpose (numpy); a real overwrite of the
slice it reads is still refused."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.errors import AccessRuleError

N, T, K = 6, 3, 2  # cells, time steps, relaxation sweeps per step


def _setup():
    p = ti.field(ti.f64, shape=(T * K + 1, N), needs_grad=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def relax(t: ti.i32, k: ti.template()):
        for y in range(N):
            a = k + t * K
            p[a + 1, y] = (p[a, (y + 1) % N] + 2.0 * p[a, y] + p[a, (y + N - 1) % N]) / 4.0

    @ti.kernel
    def compute_loss():
        for y in range(N):
            loss[None] += p[T * K, y] ** 2

    return p, loss, relax, compute_loss


@pytest.mark.requires('float64')
def test_time_slice_through_nested_offsets_is_not_an_overwrite():
    ti.init(default_fp=ti.f64)
    p, loss, relax, compute_loss = _setup()
    p0 = np.sin(np.arange(N) * 1.3) + 0.5
    p.from_numpy(np.vstack([p0, np.zeros((T * K, N))]))
    with ti.ad.Tape(loss):
        for t in range(T):
            for k in range(K):
                relax(t, k)
        compute_loss()
    M = (np.roll(np.eye(N), 1, axis=1) + 2 * np.eye(N) + np.roll(np.eye(N), -1, axis=1)) / 4
    A = np.linalg.matrix_power(M, T * K)
    pend = A @ p0
    assert loss[None] == pytest.approx(float(pend @ pend), rel=1e-12)
    np.testing.assert_allclose(p.grad.to_numpy()[0], 2 * A.T @ pend, rtol=1e-12)


@pytest.mark.requires('float64')
def test_reading_and_overwriting_the_same_slice_is_still_refused():
    ti.init(default_fp=ti.f64)
    p = ti.field(ti.f64, shape=(4, N), needs_grad=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def smooth(t: ti.i32, k: ti.template()):
        for y in range(N):
            a = k + t * 2
            p[a + 1 - 1, y] = p[a, (y + 1) % N] * 0.5

    @ti.kernel
    def compute_loss():
        loss[None] = p[0, 0]

    with pytest.raises(AccessRuleError, match='rule 1'):
        with ti.ad.Tape(loss):
            smooth(0, 0)
            compute_loss()
