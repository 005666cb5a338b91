"""Issue 23 item 3: a device allows maxMemoryAllocationCount device-memory allocations at once
(4,096 on SwiftShader and on most GPUs). Small fields are sub-allocated from a few blocks, so a
program with 5,000 fields runs there, with every value intact; the count vkdiff holds stays far
below the limit. Before the allocator each field held an allocation of its own: under
VKDIFF_VALIDATION=1 on SwiftShader the layer reported VUID-vkAllocateMemory-maxMemoryAllocationCount-04101
at the 4,096th field."""
import numpy as np

import vkdiff as ti
from vkdiff.lang import state

N_FIELDS = 5000


def test_5000_small_fields_fit_the_device_allocation_limit():
    rt = state.runtime()
    fields = [ti.field(ti.f32, shape=3) for _ in range(N_FIELDS)]
    for k, f in enumerate(fields):
        f.from_numpy(np.array([k, k + 0.5, -k], np.float32))

    first, last = fields[0], fields[-1]

    @ti.kernel
    def combine():
        for i in range(3):
            last[i] = last[i] * 2 + first[i]

    combine()
    expect = np.array([[k, k + 0.5, -k] for k in range(N_FIELDS)], np.float32)
    expect[-1] = expect[-1] * 2 + expect[0]
    got = np.stack([f.to_numpy() for f in fields])
    np.testing.assert_array_equal(got, expect)
    assert rt.device.memory_allocations < 64 <= rt.limits['max_memory_allocation_count']


def test_freed_fields_return_their_memory():
    """Ranges of released fields are reused: building and dropping fields in a loop does not
    grow the allocations the device holds, and new fields read zeros."""
    from vkdiff.runtime import _vkrt
    dev = _vkrt.Device()
    try:
        keep = [dev.buffer(64) for _ in range(10)]
        for b in keep:
            b.host[:] = 7
        base = dev.memory_allocations
        for _ in range(5):
            tmp = [dev.buffer(1000) for _ in range(2000)]  # ~2 MB: more than one block
            assert all(not t.host.any() for t in tmp[::97])
            for t in tmp:
                t.host[:] = 1
            del tmp
        assert dev.memory_allocations <= base + 1
        assert all((b.host == 7).all() for b in keep)
        big = dev.buffer(8 << 20)  # a large buffer: an allocation of its own
        assert dev.memory_allocations == base + 1 or dev.memory_allocations == base + 2
        del big
        assert dev.memory_allocations <= base + 1
    finally:
        dev.close()
