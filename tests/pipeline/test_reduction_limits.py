"""The reduction pass on tasks with many contended accumulators (the tangent of an adjoint has
dozens): they must stay within the device's limits on storage buffers per shader stage and on
workgroup shared memory (a dispatch that exceeds them crashes or is undefined behaviour)."""
import numpy as np

import vkdiff as ti


def test_twenty_accumulators_with_their_own_inputs_share_one_partials_buffer():
    """20 accumulations into distinct 0-D fields, each reading its own input: with one partials
    buffer per accumulator the task bound 40 storage buffers (lavapipe allows 32) and crashed."""
    m = 20
    accs = [ti.field(ti.f32, shape=()) for _ in range(m)]
    xs = [ti.field(ti.f32, shape=1000) for _ in range(m)]

    @ti.kernel
    def k():
        for i in range(1000):
            for a, xx in ti.static(list(zip(accs, xs))):
                a[None] += xx[i]
    for c in range(m):
        xs[c].fill(c)
    k()
    assert [a[None] for a in accs] == [1000.0 * c for c in range(m)]


def test_forty_accumulators_share_the_workgroup_sum_array():
    """40 accumulations into the components of one 0-D vector: one shared array per workgroup
    sum was 40 KiB of f64, beyond maxComputeSharedMemorySize (32 KiB on lavapipe): invalid
    SPIR-V for the device (VUID-RuntimeSpirv-Workgroup-06530 under VKDIFF_VALIDATION=1)."""
    n = 40
    acc = ti.Vector.field(n, ti.f32, shape=())
    x = ti.field(ti.f32, shape=1000)

    @ti.kernel
    def k():
        for i in x:
            for c in ti.static(range(n)):
                acc[None][c] += x[i] * (c + 1)
    x.fill(1)
    k()
    np.testing.assert_array_equal(acc.to_numpy(), 1000.0 * np.arange(1, n + 1))
