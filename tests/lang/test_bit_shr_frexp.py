"""`ti.bit_shr` (logical shift right, Taichi 1.7.4) and `ti.frexp` (mantissa in [0.5, 1) and
exponent), checked against numpy on every integer / float width."""
import numpy as np
import pytest

import vkdiff as ti


@pytest.mark.parametrize('dt', [ti.i8, ti.i16, ti.i32, ti.i64, ti.u8, ti.u16, ti.u32, ti.u64])
def test_bit_shr_is_logical_for_every_integer_type(dt):
    npd = np.dtype(dt.np)
    info = np.iinfo(npd)
    vals = np.array([info.min, -1 if info.min < 0 else 1, 5, info.max, 0, 1 << 6], npd)
    shifts = np.array([1, 3, 0, 2, 4, 6], npd)
    a, s, r = (ti.field(dt, shape=len(vals)) for _ in range(3))
    a.from_numpy(vals)
    s.from_numpy(shifts)

    @ti.kernel
    def f():
        for i in a:
            r[i] = ti.bit_shr(a[i], s[i])

    f()
    unsigned = vals.view(npd.str.replace('i', 'u'))
    want = (unsigned >> shifts.astype(unsigned.dtype)).view(npd)
    np.testing.assert_array_equal(r.to_numpy(), want)


def test_bit_shr_scalar_arguments_and_vectors():
    @ti.kernel
    def shr(a: ti.i32, b: ti.i32) -> ti.i32:
        return ti.bit_shr(a, b)

    assert shr(-256, 4) == (2 ** 32 - 256) >> 4
    assert shr(-256, 0) == -256

    @ti.kernel
    def vec() -> ti.types.vector(2, ti.i32):
        v = ti.Vector([-8, 8])
        return ti.bit_shr(v, ti.Vector([1, 2]))

    np.testing.assert_array_equal(vec().to_numpy(), [(2 ** 32 - 8) >> 1, 2])


@pytest.mark.parametrize('dt', [ti.f32, ti.f64])
def test_frexp_matches_numpy(dt):
    vals = np.array([1.4, -3.0, 0.0, 1e-3, 8.0, -0.75, 1e-40 if dt == ti.f32 else 1e-310,
                     123456.0], dt.np)
    x, m = ti.field(dt, shape=len(vals)), ti.field(dt, shape=len(vals))
    e = ti.field(ti.i32, shape=len(vals))
    x.from_numpy(vals)

    @ti.kernel
    def f():
        for i in x:
            a, b = ti.frexp(x[i])
            m[i] = a
            e[i] = b

    f()
    wm, we = np.frexp(vals)
    np.testing.assert_array_equal(m.to_numpy(), wm)
    np.testing.assert_array_equal(e.to_numpy(), we)
    assert ti.frexp(1.4) == (0.7, 1)
