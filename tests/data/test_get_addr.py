"""`ti.get_addr(f, indices)` (Taichi's shipped example algorithm/print_offset.py): the address of
a field element in Taichi's layout of the SNode tree. The expected numbers are what Taichi 1.7.4's
CPU backend printed for the same programs (the only observable part of an address is its distance
from other addresses)."""
import numpy as np
import pytest

import vkdiff as ti


def test_print_offset_example_blocked_layout():
    # taichi/examples/algorithm/print_offset.py: nested dense blocks, element offsets in i32 units
    a = ti.field(dtype=ti.i32)
    ti.root.dense(ti.ij, (1, 2)).dense(ti.ij, 2).dense(ti.ij, 2).place(a)

    @ti.kernel
    def fill():
        for i, j in a:
            base = ti.get_addr(a.snode, [0, 0])
            a[i, j] = int(ti.get_addr(a.snode, [i, j]) - base) // 4

    fill()
    np.testing.assert_array_equal(a.to_numpy(), [[0, 1, 4, 5, 16, 17, 20, 21],
                                                 [2, 3, 6, 7, 18, 19, 22, 23],
                                                 [8, 9, 12, 13, 24, 25, 28, 29],
                                                 [10, 11, 14, 15, 26, 27, 30, 31]])

    b = ti.field(ti.i64, shape=(4, 8))

    @ti.kernel
    def grouped():  # a vector of indices, from ti.grouped; the field itself instead of its snode
        for I in ti.grouped(a):
            b[I] = ti.cast(ti.get_addr(a, I) - ti.get_addr(a, [0, 0]), ti.i64)

    grouped()
    np.testing.assert_array_equal(b.to_numpy(), 4 * a.to_numpy())


def test_interleaved_fields_alignment_vectors_offsets_and_narrow_types():
    a, b, c = ti.field(ti.i32), ti.field(ti.f64), ti.field(ti.i8)
    blk = ti.root.dense(ti.i, 3)
    blk.dense(ti.j, 2).place(a, c)  # cells {i32, i8}: 8 bytes
    blk.place(b)  # after the 16-byte block, aligned to 8: cells of 24 bytes
    v = ti.Vector.field(3, ti.f32, shape=4)
    o = ti.field(ti.f32, shape=5, offset=(-2,))
    g = ti.field(ti.f32, shape=4, needs_grad=True)
    s = ti.field(ti.u8)
    ti.root.dense(ti.ij, (2, 3)).place(s)
    out = ti.field(ti.i64, shape=17)

    @ti.kernel
    def k():
        base = ti.get_addr(a.snode, [0, 0])
        for i in range(3):
            for j in range(2):
                out[i * 2 + j] = ti.cast(ti.get_addr(a.snode, [i, j]) - base, ti.i64)
        out[6] = ti.cast(ti.get_addr(c.snode, [1, 1]) - base, ti.i64)
        out[7] = ti.cast(ti.get_addr(b.snode, [2]) - base, ti.i64)
        out[8] = ti.cast(ti.get_addr(b.snode, [0]) - base, ti.i64)
        vb = ti.get_addr(v, [0])
        out[9] = ti.cast(ti.get_addr(v, [1]) - vb, ti.i64)
        out[10] = ti.cast(ti.get_addr(v, [3]) - vb, ti.i64)
        ob = ti.get_addr(o, [0])  # as in Taichi, the indices are not shifted by offset=
        out[11] = ti.cast(ti.get_addr(o, [-2]) - ob, ti.i64)
        out[12] = ti.cast(ti.get_addr(o, [2]) - ob, ti.i64)
        out[13] = ti.cast(ti.get_addr(g.grad, [1]) - ti.get_addr(g.grad, [0]), ti.i64)
        sb = ti.get_addr(s, [0, 0])
        out[14] = ti.cast(ti.get_addr(s, [1, 2]) - sb, ti.i64)
        out[15] = ti.cast(ti.get_addr(s, [0, 1]) - sb, ti.i64)
        out[16] = ti.cast(ti.get_addr(a.snode, [0, 0]) % 4, ti.i64)

    k()
    # Taichi 1.7.4, arch=ti.cpu, the same program:
    np.testing.assert_array_equal(out.to_numpy(),
                                  [0, 8, 24, 32, 48, 56, 36, 64, 16, 12, 36, -8, 8, 4, 5, 1, 0])


def test_struct_field_members_are_consecutive_places_of_their_node():
    s = ti.Struct.field({'a': ti.f32, 'b': ti.f64, 'c': ti.i8})
    ti.root.dense(ti.i, 3).place(s)  # cells {f32 a, f64 b, i8 c}: 24 bytes
    out = ti.field(ti.i64, shape=3)

    @ti.kernel
    def k():
        out[0] = ti.cast(ti.get_addr(s.b, [1]) - ti.get_addr(s.a, [0]), ti.i64)
        out[1] = ti.cast(ti.get_addr(s.c, [2]) - ti.get_addr(s.a, [0]), ti.i64)
        out[2] = ti.cast(ti.get_addr(s.a, [1]) - ti.get_addr(s.a, [0]), ti.i64)

    k()
    np.testing.assert_array_equal(out.to_numpy(), [32, 64, 24])  # Taichi 1.7.4 CPU


def test_run_time_indices_give_the_same_addresses_as_constant_ones():
    x = ti.field(ti.f32)
    ti.root.dense(ti.i, 3).dense(ti.i, 4).place(x)
    out = ti.field(ti.i64, shape=12)

    @ti.kernel
    def k(n: ti.i32):
        for i in range(n):
            out[i] = ti.cast(ti.get_addr(x, [i]) - ti.get_addr(x, [0]), ti.i64)

    k(12)
    np.testing.assert_array_equal(out.to_numpy(), 4 * np.arange(12))


def test_get_addr_errors():
    x = ti.field(ti.f32, shape=(2, 3))
    with pytest.raises(ti.TaichiSyntaxError, match='inside a kernel'):
        ti.get_addr(x, [0, 0])

    @ti.kernel
    def wrong_count() -> ti.u64:
        return ti.get_addr(x, [0])

    with pytest.raises(ti.TaichiIndexError, match='2 indices'):
        wrong_count()

    @ti.kernel
    def not_a_field() -> ti.u64:
        return ti.get_addr(3, [0])

    with pytest.raises(ti.TaichiTypeError, match='field'):
        not_a_field()
