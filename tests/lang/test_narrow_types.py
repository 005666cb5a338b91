"""8/16-bit types (i8, u8, i16, u16, f16): fields packed into 32-bit words, values computed in 32
bits and wrapped / rounded after every operation, as Taichi's results (checked against numpy)."""
import numpy as np
import pytest

import vkdiff as ti

TYPES = [(ti.u8, np.uint8), (ti.i8, np.int8), (ti.u16, np.uint16), (ti.i16, np.int16),
         (ti.f16, np.float16)]


@pytest.mark.parametrize('dt,npd', TYPES)
def test_store_load_arithmetic_wraps_like_numpy(dt, npd):
    n = 13  # not a whole number of words
    x, y = ti.field(dt, shape=n), ti.field(dt, shape=n)

    @ti.kernel
    def k():
        for i in x:
            x[i] = ti.cast(i * 100 - 250, dt)
        for i in x:
            y[i] = x[i] * x[(i + 1) % n] + x[i]

    k()
    ref = (np.arange(n) * 100 - 250).astype(npd)
    np.testing.assert_array_equal(x.to_numpy(), ref)
    with np.errstate(over='ignore'):
        want = ref * np.roll(ref, -1) + ref
    np.testing.assert_array_equal(y.to_numpy(), want)


@pytest.mark.parametrize('dt,npd', TYPES)
def test_neighbouring_elements_written_in_parallel_stay_intact(dt, npd):
    n = 4099
    x = ti.field(dt, shape=n)
    x.from_numpy(np.full(n, 3, npd))

    @ti.kernel
    def odd():
        for i in x:
            if i % 2 == 1:
                x[i] = ti.cast(i % 50, dt)

    odd()
    want = np.full(n, 3, npd)
    want[1::2] = (np.arange(n)[1::2] % 50).astype(npd)
    np.testing.assert_array_equal(x.to_numpy(), want)


@pytest.mark.parametrize('dt,npd', TYPES)
def test_atomics_on_packed_elements(dt, npd):
    s = ti.field(dt, shape=5)
    mx = ti.field(dt, shape=3)

    @ti.kernel
    def k():
        for i in range(1000):
            ti.atomic_add(s[i % 5], ti.cast(1, dt))
            ti.atomic_max(mx[i % 3], ti.cast(i % 97, dt))

    k()
    np.testing.assert_array_equal(s.to_numpy(), np.full(5, 200, np.int64).astype(npd))
    assert mx.to_numpy().tolist() == [96, 96, 96]


def test_u8_increment_wraps_and_f16_rounds():
    x = ti.field(ti.u8, shape=10)
    x.from_numpy(np.arange(250, 260).astype(np.uint8))
    h = ti.field(ti.f16, shape=2)

    @ti.kernel
    def k(a: ti.f32):
        for i in x:
            x[i] += 3
        h[0] = a
        h[1] = ti.cast(a, ti.f16) + ti.cast(0.0001, ti.f16)

    k(1.0 / 3.0)
    assert x.to_numpy().tolist() == [253, 254, 255, 0, 1, 2, 3, 4, 5, 6]
    third = np.float16(1.0 / 3.0)
    assert h[0] == float(third)
    assert h[1] == float(np.float16(third + np.float16(0.0001)))


def test_narrow_kernel_arguments_and_returns():
    @ti.kernel
    def f(a: ti.u8, b: ti.i16) -> ti.i8:
        return ti.cast(a, ti.i8) + ti.cast(b, ti.i8)

    assert f(200, 100) == np.int8(np.int8(-56) + np.int8(100))
    assert ti.u8(300) == 44 and ti.f16(0.1) == float(np.float16(0.1))


@pytest.mark.parametrize('dt,npd', TYPES)
def test_racing_plain_stores_leave_one_of_the_stored_values(dt, npd):
    """Many invocations store 1 or 2 into the same element: whichever wins, the element holds 1
    or 2 (Taichi: 2), never a mix of the two bit patterns (1 | 2 = 3, f16 inf). Neighbours in
    the same 32-bit word are stored concurrently too and must keep their own values."""
    n = 4096
    b = ti.field(dt, shape=8)
    a = ti.ndarray(dt, shape=8)

    @ti.kernel
    def k(a: ti.types.ndarray()):
        for i in range(n):
            b[i // 512] = i % 2 + 1
            a[i // 512] = i % 2 + 1

    for _ in range(3):
        k(a)
        for got in (b.to_numpy(), a.to_numpy()):
            assert got.dtype == npd
            assert set(got.tolist()) <= {1, 2}, got


def test_racing_narrow_kernel_local_holds_a_stored_value():
    """A kernel-scope u8 local assigned in a parallel loop (stored in a packed buffer)."""
    @ti.kernel
    def k() -> ti.i32:
        last = ti.u8(0)
        for i in range(4096):
            last = i % 2 + 1
        return last

    assert k() in (1, 2)


def test_restoring_the_same_value_is_never_seen_as_another():
    """A u8 flag always 1, re-stored by every invocation while others read it: no reader may
    see a transient 0 (a clear-then-set store would show one)."""
    c = 4
    flag = ti.field(ti.u8, shape=c)
    cnt = ti.field(ti.i32, shape=())

    @ti.kernel
    def k():
        for i in range(1 << 21):
            flag[i % c] = 1
            if flag[(i + 1) % c] != 1:
                cnt[None] += 1

    flag.fill(1)
    for _ in range(3):
        k()
    assert cnt[None] == 0
    assert flag.to_numpy().tolist() == [1] * c


def test_narrow_kernel_arguments_compute_in_their_own_type():
    """An 8/16-bit scalar, vector or argpack-member argument is a value of that type in the
    kernel: arithmetic on it wraps / rounds as on a field element (Taichi 1.7.4 CPU printed
    [255, 16, 1.208984375, 24464, 14464, 2.41796875, 255, 1.099609375, 1.099609375]; these
    were 4294967295, 10000, 1.21, 90000, 80000, 2.42, 4294967295, 1.1, 1.1)."""
    r = ti.field(ti.f64, 9)

    @ti.kernel
    def k(a: ti.u8, b: ti.i8, c: ti.f16, d: ti.i16, e: ti.u16,
          v: ti.types.vector(2, ti.f16), w: ti.types.vector(2, ti.u8)):
        r[0] = a - ti.u8(1)
        r[1] = b * b
        r[2] = c * c
        r[3] = d * d
        r[4] = e + e
        r[5] = v[0] * v[1]
        r[6] = w[0] - w[1]
        r[7] = c
        r[8] = v[0]

    k(0, 100, 1.1, 300, 40000, ti.Vector([1.1, 2.2]), ti.Vector([3, 4]))
    h = np.float16
    assert r.to_numpy().tolist() == [255, 16, float(h(1.1) * h(1.1)), 24464, 14464,
                                     float(h(1.1) * h(2.2)), 255, float(h(1.1)), float(h(1.1))]

    @ti.kernel
    def ret(a: ti.f16) -> ti.f32:
        return a

    assert ret(1.1) == float(h(1.1))
    pack = ti.types.argpack(x=ti.u8, y=ti.f16)

    @ti.kernel
    def p(q: pack) -> ti.f32:
        return (q.x - ti.u8(1)) + q.y

    assert p(pack(x=0, y=0.1)) == 255.125  # u8 + f16 is f16 (Taichi: 255.125)


def test_python_literals_take_the_default_types_as_in_taichi():
    """A Python number next to a kernel value is a default_ip / default_fp constant promoted
    with it (Taichi 1.7.4's rule): u8 - 1 is the i32 -1, i8 * 2 is 200, f16 * 1.1 is f32,
    u8 < 300 compares in i32. vkdiff gave 255, -56, 1.208984375 and False (the literal took
    the narrow type). Taichi CPU printed [-1, 200, 1.2095703, -5536+65536, 2.099609375, 1, 2]."""
    x, y, h, s = (ti.field(t, 1) for t in (ti.u8, ti.i8, ti.f16, ti.i16))
    x[0], y[0], h[0], s[0] = 0, 100, 1.1, 300

    @ti.kernel
    def k() -> ti.types.vector(7, ti.f64):
        return ti.Vector([x[0] - 1, y[0] * 2, h[0] * 1.1, s[0] * 200, h[0] + 1,
                          x[0] < 300, 1 << (x[0] + ti.u8(1))], ti.f64)

    got = k().to_list()
    assert got == [-1, 200, float(np.float32(np.float16(1.1)) * np.float32(1.1)), 60000,
                   float(np.float16(np.float16(1.1) + np.float16(1))), 1, 2]


def test_f16_parallel_sum_rounds_every_add():
    """`f[0] += 1.12` over 1000 parallel iterations into an f16 field rounds at every add, as
    Taichi's f16 atomics do: the sum stalls past 1024 (spacing 1) at 1029, the serial loop's
    value (Taichi 1.7.4 CPU: [1029, 1029, 1029]). vkdiff's reduction pass summed in a wider
    accumulator: 1120 (test_f16.py::test_atomic_add_f16)."""
    f = ti.field(ti.f16, shape=3)

    @ti.kernel
    def foo():
        for i in range(1000):
            f[0] += 1.12
        for _ in range(1):
            for i in range(1000):
                f[1] = f[1] + 1.12
        for i in range(1000):
            ti.atomic_add(f[2], ti.f16(1.12))

    foo()
    assert f.to_numpy().tolist() == [1029, 1029, 1029]
