"""Quantized types (lang/quant.py, frontend/quant_access.py): `ti.types.quant.int/fixed/float`
and `ti.BitpackedFields`, whose members share one 32-bit word per cell. Expected values are
Taichi 1.7.4's printed results (arch=ti.cpu, the same program)."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.errors import UnsupportedError


def test_types_are_made_before_init_and_compare_by_value():
    # GeoTaichi defines `u1 = ti.types.quant.int(1, False)` at import time
    u1 = ti.types.quant.int(1, False)
    assert u1 == ti.types.quant.int(1, False) and u1 != ti.types.quant.int(1, True)
    assert u1.bits == 1 and not u1.signed and u1.compute == ti.u32
    fx = ti.types.quant.fixed(bits=16, max_value=2.0)
    assert fx.scale == 2.0 / 2 ** 15 and fx.compute == ti.f32
    assert ti.types.quant.fixed(8, False, max_value=2.0).scale == 2.0 / 256
    fl = ti.types.quant.float(exp=5, frac=10)
    assert (fl.exp, fl.frac, fl.bits) == (5, 10, 15)  # Taichi's tests call it f15


def _four_members(n=8):
    a = ti.field(ti.types.quant.fixed(bits=10, signed=True, scale=0.1))
    b = ti.field(ti.types.quant.fixed(bits=8, signed=False, max_value=2.0))
    c = ti.field(ti.types.quant.int(5, True))
    d = ti.field(ti.types.quant.int(3, False))
    bp = ti.BitpackedFields(max_num_bits=32)
    bp.place(a, b, c, d)
    ti.root.dense(ti.i, n).place(bp)
    return bp, a, b, c, d


# (stored f32, a read back, b read back, stored int, c read back, d read back): Taichi 1.7.4
TAICHI = [(0.04, 0.0, 0.0390625, 4, 4, 4), (0.05, 0.10000000149011612, 0.046875, 5, 5, 5),
          (0.06, 0.10000000149011612, 0.0625, 6, 6, 6),
          (-0.05, -0.10000000149011612, None, -5, -5, 3),
          (-0.06, -0.10000000149011612, None, -6, -6, 2),
          (0.149, 0.10000000149011612, 0.1484375, 14, 14, 6),
          (0.15, 0.20000000298023224, 0.1484375, 15, 15, 7),
          (-0.15, -0.20000000298023224, None, -15, -15, 1),
          (60.0, -42.400001525878906, 0.0, 6000, -16, 0),
          (-60.0, 42.400001525878906, None, -6000, -16, 0)]


def test_kernel_store_and_load_round_and_wrap_as_taichi():
    _, a, b, c, d = _four_members()

    @ti.kernel
    def st(i: ti.i32, v: ti.f32, k: ti.i32):
        a[i] = v
        b[i] = v
        c[i] = k
        d[i] = k

    @ti.kernel
    def ld(i: ti.i32) -> ti.types.vector(4, ti.f32):
        return ti.Vector([a[i], b[i], ti.cast(c[i], ti.f32), ti.cast(d[i], ti.f32)])

    for v, ea, eb, k, ec, ed in TAICHI:
        st(3, v, k)
        got = ld(3)
        assert got[0] == np.float32(ea) and got[2] == ec and got[3] == ed
        if eb is not None:  # (a negative value into an unsigned fixed is undefined in Taichi)
            assert got[1] == np.float32(eb)
        assert a[3] == np.float32(ea) and c[3] == ec and d[3] == ed  # Python scope decodes
        assert isinstance(c[3], int) and isinstance(a[3], float)


def test_members_share_one_word_and_python_writes_keep_siblings():
    bp, a, b, c, d = _four_members(16)
    assert bp.word.dtype == ti.i32 and bp.word.shape == (16,)
    assert bp.word.to_numpy().nbytes == 16 * 4  # four members in 4 bytes a cell, not 16
    ks = np.arange(16) - 8
    c.from_numpy(ks)
    d.from_numpy(np.arange(16) % 8)
    a[5] = 0.26  # Taichi: 0.30000001192092896
    assert a[5] == np.float32(0.3) and a.to_numpy()[5] == np.float32(0.3)
    np.testing.assert_array_equal(c.to_numpy(), ks)
    np.testing.assert_array_equal(d.to_numpy(), np.arange(16) % 8)
    b.fill(1.0)
    assert np.all(b.to_numpy() == 1.0)
    np.testing.assert_array_equal(c.to_numpy(), ks)
    with pytest.raises(ValueError):
        c.from_numpy(np.zeros(3))

    @ti.kernel
    def touch():
        for i in range(16):
            a[i] = c[i] * 0.5

    touch()
    assert a.to_numpy()[3] == np.float32(-2.5)
    # the members own no device memory: only the word field is allocated
    assert all(f._storage is None for f in (a, b, c, d)) and bp.word._storage is not None


def test_concurrent_writes_to_sibling_members_are_not_lost():
    n = 1 << 16
    x = ti.field(ti.types.quant.int(8, True))
    y = ti.field(ti.types.quant.int(8, False))
    z = ti.field(ti.types.quant.int(16, True))
    bp = ti.BitpackedFields(max_num_bits=32)
    bp.place(x, y, z)
    ti.root.dense(ti.i, n).place(bp)

    @ti.kernel
    def scatter():
        for t in range(3 * n):  # each member of a word from another workgroup, another thread
            c, k = t % n, t // n
            if k == 0:
                x[c] = c % 256 - 128
            elif k == 1:
                y[c] = (c * 7) % 256
            else:
                z[c] = c % 65536 - 32768

    for _ in range(3):
        scatter()
        cs = np.arange(n)
        np.testing.assert_array_equal(x.to_numpy(), cs % 256 - 128)
        np.testing.assert_array_equal(y.to_numpy(), (cs * 7) % 256)
        np.testing.assert_array_equal(z.to_numpy(), cs % 65536 - 32768)
        bp.word.fill(0)


def test_struct_for_over_a_member_and_full_word():
    q32 = ti.field(ti.types.quant.int(32, True))
    bp = ti.BitpackedFields(max_num_bits=32)
    bp.place(q32)
    ti.root.dense(ti.i, 5).place(bp)

    @ti.kernel
    def fill():
        for i in q32:
            q32[i] = -2 ** 31 + i

    fill()
    np.testing.assert_array_equal(q32.to_numpy(), -2 ** 31 + np.arange(5))


def test_debug_mode_does_not_flag_the_bit_packing_shifts(capfd):
    ti.init(debug=True)
    x = ti.field(ti.types.quant.int(16, True))
    y = ti.field(ti.types.quant.int(16, True))
    bp = ti.BitpackedFields(max_num_bits=32)
    bp.place(x, y)
    ti.root.dense(ti.i, 4).place(bp)

    @ti.kernel
    def st():
        for i in range(4):
            x[i] = -i
            y[i] = i - 30000

    st()
    ti.sync()
    assert 'overflow' not in capfd.readouterr().out
    assert x.to_numpy().tolist() == [0, -1, -2, -3]
    assert y.to_numpy().tolist() == [-30000, -29999, -29998, -29997]


# (stored f32, signed quant.float(5, 10) read back, unsigned read back): Taichi 1.7.4 arch=cpu
TAICHI_FLOAT = [(1 / 3, 0.33349609375, 0.333251953125), (1 + 1 / 1024, 1.001953125, 1.0009765625),
                (1 + 1.5 / 512, 1.00390625, 1.0029296875),
                (1 + 2.5 / 512, 1.005859375, 1.0048828125),
                (1 + 0.51 / 512, 1.001953125, 1.0009765625),
                (-1 / 3, -0.33349609375, 0.333251953125), (0.0, 0.0, 0.0), (1e-5, 0.0, 0.0),
                (6e-5, 0.0, 0.0), (65504.0, 65536.0, 65504.0), (70000.0, 70016.0, 70016.0),
                (1e6, 0.00023293495178222656, 0.00023281574249267578),
                (-1e6, -0.00023293495178222656, 0.00023281574249267578),
                (2.0 ** -14, 6.103515625e-05, 6.103515625e-05), (2.0 ** -15, 0.0, 0.0),
                (2.0 ** 15 * 1.999, 65472.0, 65504.0)]


def test_quant_float_rounds_and_wraps_as_taichi():
    a = ti.field(ti.types.quant.float(exp=5, frac=10))
    b = ti.field(ti.types.quant.float(exp=5, frac=10, signed=False))
    c = ti.field(ti.types.quant.int(17, False))  # Taichi's f15 is 15 bits: 15 + 17 fit
    bp = ti.BitpackedFields(max_num_bits=32)
    bp.place(a, c)
    bp2 = ti.BitpackedFields(max_num_bits=32)
    bp2.place(b)
    ti.root.dense(ti.i, 2).place(bp, bp2)

    @ti.kernel
    def st(v: ti.f32):
        a[1] = v
        b[1] = v
        c[1] = 99999

    @ti.kernel
    def ld() -> ti.types.vector(2, ti.f32):
        return ti.Vector([a[1], b[1]])

    for v, ea, eb in TAICHI_FLOAT:
        st(v)
        got = ld()
        assert (float(got[0]), float(got[1])) == (ea, eb)
        assert (a[1], b[1]) == (ea, eb)  # Python scope decodes the same bits
        a[0] = v  # and encodes as the kernel does
        b[0] = v
        assert (a[0], b[0]) == (ea, eb)
        assert c[1] == 99999


def test_quant_float_with_a_full_f32_mantissa_is_exact():
    x = ti.field(ti.types.quant.float(exp=8, frac=24))  # Taichi's test_quant_float_precision
    bp = ti.BitpackedFields(max_num_bits=32)
    bp.place(x)
    ti.root.place(bp)

    @ti.kernel
    def st(v: ti.f32):
        x[None] = v

    for v in (np.float32(np.pi), np.float32(np.pi * (1 << 100)), np.float32(-1.5e-30)):
        st(v)
        assert x[None] == v
        x[None] = 0.0
        x[None] = v
        assert x[None] == v


def test_quant_array_packs_32_flags_a_word():
    n = 32 * 64
    x = ti.field(ti.types.quant.int(1, False))  # GeoTaichi's u1
    ti.root.dense(ti.i, n // 32).quant_array(ti.i, dimensions=32, max_num_bits=32).place(x)
    assert x.shape == (n,)

    @ti.kernel
    def mark():
        for i in range(n):  # the 32 bits of one word from 32 invocations
            x[i] = 1 if i % 3 == 0 or i % 7 == 2 else 0

    @ti.kernel
    def count() -> ti.i32:
        c = 0
        for i in range(n):
            c += x[i]
        return c

    want = ((np.arange(n) % 3 == 0) | (np.arange(n) % 7 == 2)).astype(np.uint32)
    mark()
    np.testing.assert_array_equal(x.to_numpy(), want)
    assert count() == want.sum()
    assert x[3] == 1 and x[4] == 0 and x[9] == 1
    x[4] = 1
    want[4] = 1
    x.from_numpy(want[::-1].copy())
    assert count() == want.sum() and x[n - 1 - 4] == 1
    np.testing.assert_array_equal(x.to_numpy(), want[::-1])


def test_quant_array_along_the_second_axis_of_a_2d_node():
    # Taichi's game-of-life layout: dense(ti.ij, ...).quant_array(ti.j, 32, max_num_bits=32)
    x = ti.field(ti.types.quant.int(2, True))
    ti.root.dense(ti.ij, (3, 2)).quant_array(ti.j, 16, max_num_bits=32).place(x)
    assert x.shape == (3, 32)

    @ti.kernel
    def fill():
        for i, j in ti.ndrange(3, 32):
            x[i, j] = (i + j) % 4 - 2

    fill()
    ii, jj = np.meshgrid(np.arange(3), np.arange(32), indexing='ij')
    np.testing.assert_array_equal(x.to_numpy(), (ii + jj) % 4 - 2)
    assert x[2, 31] == (2 + 31) % 4 - 2


def test_what_vkdiff_does_not_have_refuses_clearly():
    f15 = ti.types.quant.float(exp=5, frac=10)
    p = ti.field(f15)
    bp = ti.BitpackedFields(max_num_bits=32)
    with pytest.raises(ti.TaichiCompilationError, match='At least 2 fields'):
        bp.place(p, shared_exponent=True)
    with pytest.raises(UnsupportedError, match='quant.float'):
        bp.place(ti.field(ti.types.quant.float(exp=9, frac=10)))
    u1 = ti.types.quant.int(1, False)
    with pytest.raises(UnsupportedError, match='gradients'):
        ti.field(ti.types.quant.fixed(8), needs_grad=True)
    with pytest.raises(UnsupportedError, match='BitpackedFields'):
        ti.field(u1, shape=4)
    with pytest.raises(UnsupportedError):
        ti.root.dense(ti.i, 2).quant_array(ti.i, 32, max_num_bits=64)
    with pytest.raises(UnsupportedError):
        ti.root.pointer(ti.i, 2).quant_array(ti.i, 32, max_num_bits=32)
    x = ti.field(u1)
    with pytest.raises(UnsupportedError, match='BitpackedFields'):
        ti.root.dense(ti.i, 2).place(x)
    bp = ti.BitpackedFields(max_num_bits=32)
    bp.place(x)
    ti.root.dense(ti.i, 2).place(bp)

    @ti.kernel
    def add():
        ti.atomic_add(x[0], 1)

    with pytest.raises(UnsupportedError, match='atomic'):
        add()
    with pytest.raises(ValueError, match='bits'):
        bp2 = ti.BitpackedFields(max_num_bits=8)
        bp2.place(ti.field(ti.types.quant.int(9, True)))
