"""Field memory (issue 13 item 3): on unified-memory devices (lavapipe, integrated GPUs: the native
feature 'unified_memory') a field is one device-local buffer the host maps, with no staging copy
and no copy commands; elsewhere (and with disable_features=['unified_memory']) a device buffer
plus a staging copy. Every test runs both ways. Host access must still see the order of the
program: a host read waits for the commands that may write the field (recorded, or submitted
without waiting), a host write for those that use it, and a write reaches the commands recorded
after it. Under VKDIFF_VALIDATION=1 the layer (synchronization validation on) must stay quiet."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.lang import state
from vkdiff.runtime import program


@pytest.fixture(params=[pytest.param('unified', marks=pytest.mark.requires('unified_memory')),
                        'staged'], autouse=True)
def memory(request):
    if not hasattr(program._load_native().Buffer, 'allocated_bytes'):
        pytest.skip('the native module predates unified memory: bash tools/setup.sh rebuilds it')
    ti.init(disable_features=['unified_memory'] if request.param == 'staged' else [])
    return request.param


@pytest.fixture(params=['recorded', 'in flight'])
def kick(request, monkeypatch):
    """Commands a host access meets are only recorded (never kicked before a sync), or each
    launch is submitted without waiting (still running when the host touches the field)."""
    if request.param == 'in flight' and not hasattr(program._load_native().Batch, 'wait'):
        pytest.skip('the native module predates Batch.wait: rebuild it')
    monkeypatch.setattr(program, 'KICK_SECONDS', -1.0 if request.param == 'recorded' else 0.0)
    return request.param


def test_storage_is_one_mapped_buffer(memory):
    """The staging copy is gone: a unified-memory field holds half the device memory of a staged
    one, and its host view is the buffer the kernels use."""
    n = 1 << 20
    x = ti.field(ti.f32, shape=n)
    st = x.storage
    assert st.mapped == (memory == 'unified')
    assert st.buf.allocated_bytes >= 4 * n
    per_buffer = st.buf.allocated_bytes / (1 if st.mapped else 2)
    assert per_buffer < 4 * n * 1.05  # one allocation, or two of the same size
    if memory == 'unified':  # the same buffer on a staged device: twice the memory
        from vkdiff.runtime import _vkrt
        staged = _vkrt.Device(disable=['unified_memory'])
        try:
            assert staged.buffer(4 * n).allocated_bytes == 2 * st.buf.allocated_bytes
        finally:
            staged.close()


def test_host_write_then_kernel_reads(kick):
    n = 1000
    x = ti.field(ti.f32, shape=n)
    y = ti.field(ti.f32, shape=n)

    @ti.kernel
    def double():
        for i in x:
            y[i] = 2.0 * x[i]

    a = np.arange(n, dtype=np.float32)
    x.from_numpy(a)
    double()
    x[3] = -5.0  # after the launch: the launch saw 3.0
    assert y[3] == 6.0
    double()
    np.testing.assert_array_equal(y.to_numpy(), 2 * np.where(np.arange(n) == 3, -5.0, a))


def test_kernel_writes_then_host_reads(kick):
    x = ti.field(ti.i32, shape=64)

    @ti.kernel
    def fill(v: ti.i32):
        for i in x:
            x[i] = v + i

    for v in range(5):
        fill(v * 100)
        assert x[7] == v * 100 + 7  # no ti.sync(): the read waits for the launch
    fill(9)
    np.testing.assert_array_equal(x.to_numpy(), 9 + np.arange(64))


def test_host_write_does_not_reach_earlier_launches(kick):
    """A launch recorded (or running) before a host write reads the old value: the write waits
    for it, never lands in memory the launch has still to read."""
    x = ti.field(ti.f32, shape=256)
    y = ti.field(ti.f32, shape=256)

    @ti.kernel
    def copy():
        for i in x:
            y[i] = x[i] + 1.0

    x.fill(1.0)
    copy()
    x.fill(7.0)  # a whole-field overwrite
    x[5] = 9.0   # an element
    assert (y.to_numpy() == 2.0).all()
    copy()
    assert y[5] == 10.0 and y[6] == 8.0


def test_interleaved_with_async_submissions(monkeypatch):
    """Each launch submitted without waiting; host reads and writes of the same field in between
    see exactly the launches before them."""
    if not hasattr(program._load_native().Batch, 'wait'):
        pytest.skip('the native module predates Batch.wait: rebuild it')
    monkeypatch.setattr(program, 'KICK_SECONDS', 0.0)
    n = 4096
    x = ti.field(ti.i32, shape=n)
    total = ti.field(ti.i32, shape=())

    @ti.kernel
    def step(k: ti.i32):
        for i in x:
            x[i] = x[i] * 3 % 1000003 + k
        total[None] += 1

    rng = np.random.default_rng(0)
    want = rng.integers(0, 1000, n).astype(np.int64)
    x.from_numpy(want.astype(np.int32))
    for k in range(60):
        step(k)
        want = (want * 3) % 1000003 + k
        if k % 3 == 0:
            j = int(rng.integers(n))
            assert x[j] == want[j]
        if k % 5 == 1:
            j = int(rng.integers(n))
            x[j] = -k
            want[j] = -k
        if k % 7 == 2:
            np.testing.assert_array_equal(x.to_numpy(), want)
    assert total[None] == 60
    np.testing.assert_array_equal(x.to_numpy(), want)


def test_big_field_round_trip(kick):
    n = 1 << 22  # 16 MiB
    x = ti.field(ti.f32, shape=n)

    @ti.kernel
    def affine():
        for i in x:
            x[i] = x[i] * 0.5 + 1.0

    a = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    x.from_numpy(a)
    affine()
    got = x.to_numpy()
    np.testing.assert_array_equal(got, a * np.float32(0.5) + np.float32(1.0))
    x.from_numpy(got[::-1].copy())
    affine()
    assert x[0] == got[-1] * np.float32(0.5) + np.float32(1.0)


def test_trip_count_set_from_host(kick):
    """The host reads a field for a loop's trip count (binding.host_load) when its host view is
    current, and waits for a launch that wrote it."""
    n = ti.field(ti.i32, shape=())
    x = ti.field(ti.i32, shape=100)

    @ti.kernel
    def count():
        for i in range(n[None]):
            x[i] += 1

    @ti.kernel
    def set_n(v: ti.i32):
        n[None] = v

    n[None] = 10
    count()
    set_n(30)
    count()
    n[None] = 5
    count()
    np.testing.assert_array_equal(x.to_numpy(), [3] * 5 + [2] * 5 + [1] * 20 + [0] * 70)


def test_ndarrays_and_numpy_arguments(kick):
    a = ti.ndarray(ti.f32, shape=500)
    a.from_numpy(np.arange(500, dtype=np.float32))

    @ti.kernel
    def scale(v: ti.types.ndarray(), s: ti.f32):
        for i in v:
            v[i] = v[i] * s

    scale(a, 2.0)
    host = np.ones(500, dtype=np.float32)
    scale(host, 3.0)  # copied in, the kernel runs, copied back before the call returns
    assert (host == 3.0).all()
    scale(a, 0.5)
    a[1] = 40.0
    np.testing.assert_array_equal(a.to_numpy(), np.where(np.arange(500) == 1, 40.0,
                                                         np.arange(500, dtype=np.float32)))
