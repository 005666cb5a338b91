"""Fills and copies as native commands (issue 13, cold compile): `field.fill(c)`, the Tape's
gradient clearing and `copy_from` record vkCmdFillBuffer / vkCmdCopyBuffer in the batch instead
of compiling and launching builtin kernels, where the value's bytes repeat every 4 bytes and the
field is dense; other values (a 64-bit one whose halves differ), sparse fields, and fills a Tape
records (their adjoint runs) stay kernels. Values are checked against numpy, both with unified
memory and with staged buffers, with commands only recorded or already in flight; the commands
are ordered with the kernels around them (the validation layer's synchronization checks stay
quiet under VKDIFF_VALIDATION=1)."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.errors import RuntimeError_
from vkdiff.lang import impl, state
from vkdiff.runtime import program


@pytest.fixture(params=['unified', 'staged'], autouse=True)
def memory(request):
    if not hasattr(program._load_native().Batch, 'fill'):
        pytest.skip('the native module predates Batch.fill: bash tools/setup.sh rebuilds it')
    ti.init(disable_features=['unified_memory'] if request.param == 'staged' else [])
    return request.param


@pytest.fixture(params=['recorded', 'in flight'])
def kick(request, monkeypatch):
    monkeypatch.setattr(program, 'KICK_SECONDS', -1.0 if request.param == 'recorded' else 0.0)
    return request.param


def compiled():
    """Kernel launches so far (a native fill or copy launches none)."""
    return state.runtime().launches


@pytest.fixture
def syncs():
    """The host's waits for the device (Runtime.flush calls) from here on."""
    rt = state.runtime()
    calls = []
    flush = rt.flush
    rt.flush = lambda: (calls.append(1), flush())[1]
    return calls


@pytest.mark.parametrize('dtype,value', [
    (ti.f32, 0.0), (ti.f32, -2.5), (ti.i32, -7), (ti.u32, 4000000000),
    pytest.param(ti.f64, 0.0, marks=pytest.mark.requires('float64')),
    pytest.param(ti.i64, -1, marks=pytest.mark.requires('int64')), (ti.u8, 200), (ti.i16, -3), (ti.f16, 1.5), (ti.i8, -128)])
def test_fill_is_a_command(dtype, value):
    """Every element equals numpy's value of that dtype, and no kernel was launched."""
    x = ti.field(dtype, shape=(5, 3))
    before = compiled()
    x.fill(value)
    assert compiled() == before
    np.testing.assert_array_equal(x.to_numpy(), np.full((5, 3), value, dtype=x.dtype.np))


@pytest.mark.requires('float64')
def test_fill_of_a_64bit_value_whose_halves_differ_is_a_kernel():
    x = ti.field(ti.f64, shape=7)
    before = compiled()
    x.fill(1.0 / 3.0)
    assert compiled() == before + 1 and state.compiled_kernels == 1
    np.testing.assert_array_equal(x.to_numpy(), np.full(7, 1.0 / 3.0))


def test_vector_field_fill_and_0d_field():
    """Taichi's get_num_compiled_functions() counts one fill kernel per field filled (its
    test_fill_vector_field_recompile): a native fill counts as that instance, once."""
    v = ti.Vector.field(3, ti.f32, shape=4)
    s = ti.field(ti.i32, shape=())
    before = compiled()
    v.fill(0.25)
    s.fill(9)
    v.fill(0.25)
    assert compiled() == before
    assert impl.get_runtime().get_num_compiled_functions() == 2
    np.testing.assert_array_equal(v.to_numpy(), np.full((4, 3), 0.25, np.float32))
    assert s[None] == 9


def test_fill_is_ordered_with_kernels(kick):
    """write x (kernel) -> fill x -> read x (kernel) -> fill x: each sees the one before; a fill
    after a kernel that read x does not reach that read (write after read)."""
    n = 1000
    x = ti.field(ti.f32, shape=n)
    y = ti.field(ti.f32, shape=n)

    @ti.kernel
    def write_x():
        for i in x:
            x[i] = i

    @ti.kernel
    def y_from_x(a: ti.f32):
        for i in x:
            y[i] = a * x[i] + i

    write_x()
    y_from_x(1.0)      # reads x = i
    x.fill(3.0)        # must not reach the read above
    ref1 = 2.0 * np.arange(n)
    got1 = y.to_numpy()
    y_from_x(2.0)      # reads x = 3
    x.fill(-1.0)
    np.testing.assert_array_equal(got1, ref1)
    np.testing.assert_array_equal(y.to_numpy(), 6.0 + np.arange(n))
    np.testing.assert_array_equal(x.to_numpy(), np.full(n, -1.0, np.float32))


def test_fill_needs_no_sync(kick, syncs):
    """A fill after a launch is recorded behind it, not waited for by the host."""
    x = ti.field(ti.f32, shape=64)

    @ti.kernel
    def inc():
        for i in x:
            x[i] += 1.0

    inc()
    x.fill(2.0)
    inc()
    assert syncs == []
    np.testing.assert_array_equal(x.to_numpy(), np.full(64, 3.0, np.float32))


def test_fill_after_host_writes_and_host_write_after_fill():
    x = ti.field(ti.i32, shape=10)
    x[3] = 5           # the host copy is newer: the fill replaces it all
    x.fill(2)
    x[1] = 7           # after the fill, in program order
    ref = np.full(10, 2, np.int32)
    ref[1] = 7
    np.testing.assert_array_equal(x.to_numpy(), ref)


def test_tape_clears_gradients_with_fill_commands():
    """Two Tapes in a row: the second's gradient is not the sum of both (gradients and the loss
    cleared at the Tape's entry), and clearing and seeding launched no kernel."""
    x = ti.field(ti.f32, shape=8, needs_grad=True)
    y = ti.field(ti.f32, shape=8, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def f():
        for i in x:
            y[i] = x[i] * x[i]
            loss[None] += y[i]

    x.from_numpy(np.arange(8, dtype=np.float32))
    n = compiled()
    with ti.ad.Tape(loss):
        f()
    assert compiled() == n + 2  # f and its adjoint; nothing to clear or seed
    with ti.ad.Tape(loss):
        f()
    np.testing.assert_allclose(x.grad.to_numpy(), 2 * np.arange(8), rtol=1e-6)
    assert loss.grad[None] == 1.0
    assert loss[None] == pytest.approx(float(np.sum(np.arange(8) ** 2)))


def test_fill_inside_a_tape_is_a_recorded_kernel():
    """A fill the Tape records is a launch (its adjoint runs), as in Taichi."""
    x = ti.field(ti.f32, shape=4, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def f():
        for i in x:
            loss[None] += 2.0 * x[i]

    with ti.ad.Tape(loss) as tape:
        x.fill(1.5)
        f()
    assert [e[1].fn.__name__ for e in tape.entries] == ['fill_kernel', 'f']
    assert loss[None] == pytest.approx(12.0)


def test_sparse_field_fill_touches_active_cells_only():
    x = ti.field(ti.f32)
    ti.root.pointer(ti.i, 4).dense(ti.i, 2).place(x)
    x[2] = 1.0         # activates block 1 (cells 2, 3)
    x.fill(5.0)
    np.testing.assert_array_equal(x.to_numpy(), [0, 0, 5, 5, 0, 0, 0, 0])


def test_copy_from_is_a_command(kick, syncs):
    x = ti.Vector.field(2, ti.f32, shape=50)
    y = ti.Vector.field(2, ti.f32, shape=50)

    @ti.kernel
    def write(a: ti.f32):
        for i in x:
            x[i] = ti.Vector([a * i, -i])

    write(3.0)
    before = compiled()
    y.copy_from(x)     # behind the write, no host round trip
    assert compiled() == before
    write(5.0)         # not seen by the copy (write after read)
    assert syncs == []
    ref = np.stack([3.0 * np.arange(50), -np.arange(50)], 1).astype(np.float32)
    np.testing.assert_array_equal(y.to_numpy(), ref)
    np.testing.assert_array_equal(x.to_numpy()[:, 0], 5.0 * np.arange(50))


def test_copy_from_other_dtype_converts_on_the_host():
    x = ti.field(ti.f32, shape=5)
    y = ti.field(ti.i32, shape=5)
    x.from_numpy(np.array([1.5, -2.5, 3.0, 0.0, 7.9], np.float32))
    y.copy_from(x)
    np.testing.assert_array_equal(y.to_numpy(), [1, -2, 3, 0, 7])


def test_ndarray_fill_and_copy_from(kick, syncs):
    a = ti.ndarray(ti.f32, shape=(6,))
    b = ti.ndarray(ti.f32, shape=(6,))

    @ti.kernel
    def add(arr: ti.types.ndarray(), c: ti.f32):
        for i in arr:
            arr[i] += c

    a.fill(1.0)
    add(a, 2.0)
    b.copy_from(a)
    a.fill(0.0)
    add(b, 1.0)
    assert syncs == []  # (a fill or copy on the host would wait for the launches using them)
    np.testing.assert_array_equal(a.to_numpy(), np.zeros(6, np.float32))
    np.testing.assert_array_equal(b.to_numpy(), np.full(6, 4.0, np.float32))


def test_native_fill_and_copy_check_their_ranges():
    rt = state.runtime()
    x = ti.field(ti.f32, shape=4)
    y = ti.field(ti.f32, shape=8)
    with pytest.raises(RuntimeError, match='multiples of 4'):
        rt.batch.fill(x.storage.buf, 2, 4, 0)
    with pytest.raises(RuntimeError, match='multiples of 4'):
        rt.batch.fill(x.storage.buf, 0, 20, 0)
    with pytest.raises(RuntimeError, match='multiples of 4'):
        rt.batch.copy(y.storage.buf, x.storage.buf, 0, 0, 32)
    with pytest.raises(RuntimeError_, match='copy between buffers of 16 and 32 bytes'):
        rt.copy(x.storage, y.storage)
