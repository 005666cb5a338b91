"""Issue 23 item 3: limits are read from the device, never assumed. Run on lavapipe and on
SwiftShader (VK_ICD_FILENAMES=.../vk_swiftshader_icd.json), whose limits are lower: 256
invocations per workgroup, 65,536 texel-buffer elements, subgroups of 4. The device-free parts
compile against lavapipe's options with SwiftShader's limits."""
import dataclasses

import numpy as np
import pytest

import vkdiff as ti
from vkdiff import compiler
from vkdiff.lang import state


def _block_kernel(block_dim, n_blocks):
    n = block_dim * n_blocks
    out = ti.field(ti.f32, shape=n)
    src = ti.field(ti.f32, shape=n)

    @ti.kernel
    def block_sums():
        ti.loop_config(block_dim=block_dim)
        for i in range(n):
            tid = i % block_dim
            pad = ti.simt.block.SharedArray((block_dim,), ti.f32)
            pad[tid] = src[i]
            ti.simt.block.sync()
            out[i] = pad[(tid + 1) % block_dim] + pad[0]
    return block_sums, src, out


def _workgroup_cap(limits):
    return min(limits['max_workgroup_invocations'], limits['max_workgroup_size_x'])


def test_block_dim_at_the_device_limit_runs():
    cap = min(_workgroup_cap(state.runtime().limits), 1024)
    k, src, out = _block_kernel(cap, 3)
    x = np.arange(3 * cap, dtype=np.float32) * 0.5
    src.from_numpy(x)
    k()
    blocks = x.reshape(3, cap)
    want = np.roll(blocks, -1, axis=1) + blocks[:, :1]
    np.testing.assert_array_equal(out.to_numpy(), want.ravel())


def test_block_dim_above_the_device_limit_is_a_clear_error():
    cap = _workgroup_cap(state.runtime().limits)
    if cap >= 1024:  # (lavapipe: 1024, Taichi's own maximum of block_dim)
        pytest.skip('this device allows every block_dim Taichi allows (1024)')
    k, _, _ = _block_kernel(2 * cap, 1)
    with pytest.raises(ti.CompileError, match=f'block_dim={2 * cap}.*this device allows.*{cap}'):
        k()


def _offline(**limits):
    base = compiler.lavapipe_like()
    state.init_offline(dataclasses.replace(base, limits={**base.limits, **limits}))


def test_block_dim_limit_without_a_device():
    """SwiftShader's maxComputeWorkGroupInvocations (256) on lavapipe's options: block_dim 512
    is refused at compile time, naming the limit; 256 compiles to LocalSize 256."""
    _offline(max_workgroup_invocations=256, max_workgroup_size_x=256)
    k, _, _ = _block_kernel(512, 1)
    with pytest.raises(ti.CompileError, match='block_dim=512.*256'):
        k.ir(after='codegen')
    k2, _, _ = _block_kernel(256, 1)
    assert 'LocalSize 256 1 1' in k2.ir(after='codegen')


def test_texel_reads_fall_back_to_storage_buffers_past_the_texel_limit():
    """A field with more elements than maxTexelBufferElements (65,536 on SwiftShader) is read
    through a storage buffer; one within it through a texel view (where the device has them)."""
    _offline(max_texel_buffer_elements=65536)
    big, small, out = ti.field(ti.f32, 65537), ti.field(ti.f32, 65536), ti.field(ti.f32, 65536)

    @ti.kernel
    def add():
        for i in range(65536):
            out[i] = big[i + 1] + small[i]
    asm = add.ir(after='codegen')
    assert asm.count('OpImageRead') == 1  # small only


def test_texel_limit_values_on_this_device():
    rt = state.runtime()
    n = min(rt.limits['max_texel_buffer_elements'] + 7, 1 << 20)
    big = ti.field(ti.f32, n)
    out = ti.field(ti.f32, n)
    x = (np.arange(n, dtype=np.float32) % 1001) * 0.25
    big.from_numpy(x)

    @ti.kernel
    def rev():
        for i in range(n):
            out[i] = big[n - 1 - i] * 2

    rev()
    np.testing.assert_array_equal(out.to_numpy(), x[::-1] * 2)


def test_workgroup_reductions_at_every_local_size():
    """Sums of 1..n for trip counts that give every power-of-two local size (fitted_local_size),
    so that the subgroup reduce and the per-subgroup partials run at the device's subgroup size
    (4 on SwiftShader, 8 on lavapipe) with full, partial and single subgroups."""
    for n in (1, 2, 3, 5, 8, 13, 16, 31, 64, 100, 128, 1000, 4099):
        s = ti.field(ti.i32, shape=())
        f = ti.field(ti.f32, shape=())

        @ti.kernel
        def total():
            for i in range(n):
                s[None] += i + 1
                f[None] += 0.5

        total()
        assert s[None] == n * (n + 1) // 2, n
        assert f[None] == 0.5 * n, n
