"""Device limits: fields larger than maxStorageBufferRange fail clearly at creation; parallel
loops longer than maxComputeWorkGroupCount x local size still run (grid-stride)."""
import numpy as np
import pytest

import vkdiff as ti


def test_field_larger_than_a_storage_buffer_is_an_error_at_creation():
    limit = ti.lang.state.runtime().limits['max_storage_buffer_range']
    with pytest.raises(ti.VkdiffError, match='maxStorageBufferRange'):
        ti.field(ti.f32, shape=limit // 4 + 1)
    with pytest.raises(ti.VkdiffError, match='maxStorageBufferRange'):
        v = ti.Vector.field(4, ti.f32, shape=None)
        ti.root.dense(ti.i, limit // 16 + 1).place(v)


def test_parallel_loop_beyond_the_dispatch_limit():
    limits = ti.lang.state.runtime().limits
    n = limits['max_workgroup_count_x'] * 128 + 1000  # 8,388,480 + 1000 on lavapipe
    n = min(n, limits['max_storage_buffer_range'] // 4)
    x = ti.field(ti.i32, shape=n)

    @ti.kernel
    def fill():
        for i in range(n):
            x[i] = i * 3

    fill()
    a = x.to_numpy()
    assert a[0] == 0 and a[-1] == 3 * (n - 1)
    np.testing.assert_array_equal(a[::9973], np.arange(0, n, 9973) * 3)


def test_too_many_fields_for_one_shader_is_a_clear_error():
    limit = ti.lang.state.runtime().limits['max_storage_buffers_per_stage']
    fs = [ti.field(ti.f32, shape=4) for _ in range(limit)]
    out = ti.field(ti.f32, shape=4)

    @ti.kernel
    def k():
        for i in range(4):
            s = 0.0
            for j in ti.static(range(len(fs))):
                s += fs[j][i]
            out[i] = s

    with pytest.raises(ti.CompileError, match='fields'):
        k()

    @ti.kernel
    def fits():
        for i in range(4):
            s = 0.0
            for j in ti.static(range(len(fs) - 1)):
                s += fs[j][i]
            out[i] = s

    for f in fs:
        f.fill(1)
    fits()
    np.testing.assert_array_equal(out.to_numpy(), [limit - 1] * 4)
