"""`ti.simt.block.SharedArray` and `ti.simt.block.sync()` (Taichi 1.7.4): workgroup-shared arrays
of the `ti.loop_config(block_dim=B)` block of B consecutive iterations, checked against numpy."""
import numpy as np
import pytest

import vkdiff as ti


@pytest.mark.parametrize('block_dim', [32, 64, 128])
def test_block_tiled_matvec_matches_numpy(block_dim):
    nblocks = 8
    n = nblocks * block_dim
    rng = np.random.default_rng(1)
    v, d = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
    a = np.zeros(n, np.float32)

    @ti.kernel
    def tiled(v: ti.types.ndarray(), d: ti.types.ndarray(), a: ti.types.ndarray()):
        ti.loop_config(block_dim=block_dim)
        for i in range(n):
            tid = i % block_dim
            pad = ti.simt.block.SharedArray((block_dim,), ti.f32)
            acc = 0.0
            for k in range(nblocks):
                pad[tid] = d[k * block_dim + tid] * (k + 1)
                ti.simt.block.sync()
                for j in range(block_dim):
                    acc += v[i] * pad[j]
                ti.simt.block.sync()
            a[i] = acc

    tiled(v, d, a)
    want = v * (d.reshape(nblocks, block_dim).sum(1) * np.arange(1, nblocks + 1)).sum()
    np.testing.assert_allclose(a, want, rtol=1e-4, atol=1e-3)


def test_shared_atomics_and_a_2d_array():
    n, b = 256, 32
    out = ti.ndarray(ti.i32, n)
    out2 = ti.ndarray(ti.f32, n)

    @ti.kernel
    def k(out: ti.types.ndarray(), out2: ti.types.ndarray()):
        ti.loop_config(block_dim=b)
        for i in range(n):
            tid = i % b
            s = ti.simt.block.SharedArray((b,), ti.i32)
            m = ti.simt.block.SharedArray((2, b), ti.f32)
            s[tid] = i
            m[0, tid] = 0.0
            m[1, tid] = i * 0.5
            ti.simt.block.sync()
            s[0] += tid
            ti.atomic_max(m[0, 0], ti.cast(i, ti.f32))
            ti.simt.block.sync()
            out[i] = s[tid]
            out2[i] = m[0, 0] + m[1, (tid + 1) % b]

    k(out, out2)
    i = np.arange(n)
    first = i - i % b
    want = np.where(i % b == 0, first + b * (b - 1) // 2, i)
    np.testing.assert_array_equal(out.to_numpy(), want)
    np.testing.assert_allclose(out2.to_numpy(), (first + b - 1) + (first + (i + 1) % b) * 0.5)


def test_shared_array_errors():
    x = ti.field(ti.f32, shape=4, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def grad_through_shared():
        ti.loop_config(block_dim=4)
        for i in range(4):
            s = ti.simt.block.SharedArray((4,), ti.f32)
            s[i] = x[i]
            ti.simt.block.sync()
            loss[None] += s[(i + 1) % 4]

    grad_through_shared()
    with pytest.raises(ti.AutodiffError, match='SharedArray'):
        grad_through_shared.grad()
    with pytest.raises(TypeError, match='inside a kernel'):
        ti.simt.block.SharedArray((4,), ti.f32)
