"""`v.get_scalar_field(i[, j])` (lang/member_field.py): a member of a vector/matrix field as a
scalar field, read and written in kernels and from Python, placed on its own under dense nodes;
values and ti.get_addr distances as Taichi 1.7.4 CPU gives them for the same programs."""
import numpy as np
import pytest

import vkdiff as ti


def test_members_placed_on_their_own_read_and_write_the_matrix_field():
    v = ti.Vector.field(3, ti.f32)
    x, y, z = (v.get_scalar_field(k) for k in range(3))
    ti.root.dense(ti.i, 8).place(x)
    ti.root.dense(ti.i, 2).dense(ti.i, 4).place(y)  # another path, the same shape
    ti.root.dense(ti.i, 8).place(z)
    assert v.shape == x.shape == (8,) and v.get_scalar_field(1) is y

    @ti.kernel
    def k():
        for i in range(8):
            for j in range(3):  # a run-time member index works whatever the members' layout
                v[i][j] = i * 10 + j
        for i in y:
            y[i] += 100
            ti.atomic_add(z[i], 1000)

    k()
    i = np.arange(8)
    want = np.stack([i * 10, i * 10 + 101, i * 10 + 1002], axis=1).astype(np.float32)
    np.testing.assert_array_equal(v.to_numpy(), want)
    np.testing.assert_array_equal(x.to_numpy(), want[:, 0])
    assert y[3] == 131 and z[7] == 1072
    x.from_numpy(-np.arange(8, dtype=np.float32))
    y.fill(7)
    z[2] = 0.5
    want[:, 0], want[:, 1], want[2, 2] = -i, 7, 0.5
    np.testing.assert_array_equal(v.to_numpy(), want)


def test_member_of_a_matrix_field_placed_as_a_whole():
    m = ti.Matrix.field(2, 2, ti.i32, shape=4)
    m01 = m.get_scalar_field(0, 1)
    m01.fill(3)
    m[1] = [[1, 2], [5, 6]]

    @ti.kernel
    def g() -> ti.i32:
        return m01[1] * 100 + m01[2] * 10 + m[2][0, 1]

    assert g() == 2 * 100 + 3 * 10 + 3
    np.testing.assert_array_equal(m.to_numpy()[:, 0, 1], [3, 2, 3, 3])
    np.testing.assert_array_equal(m.to_numpy()[:, 1, 0], [0, 5, 0, 0])
    assert m01.shape == (4,) and m01.dtype == ti.i32


def test_member_gradients_are_the_matrix_fields():
    v = ti.Vector.field(2, ti.f32, shape=3, needs_grad=True)
    a = v.get_scalar_field(1)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)
    v.from_numpy(np.array([[1, 2], [3, 4], [5, 6]], np.float32))

    @ti.kernel
    def f():
        for i in a:
            loss[None] += a[i] ** 2

    with ti.ad.Tape(loss):
        f()
    assert loss[None] == 4 + 16 + 36
    np.testing.assert_array_equal(v.grad.to_numpy(), [[0, 4], [0, 8], [0, 12]])
    np.testing.assert_array_equal(a.grad.to_numpy(), [4, 8, 12])


def test_member_addresses_are_taichis():
    temp = ti.field(ti.f32)
    v = ti.Vector.field(3, ti.i32)
    x, y, z = (v.get_scalar_field(k) for k in range(3))
    ti.root.dense(ti.i, 8).place(x, y, temp, z)
    w = ti.Vector.field(3, ti.f32, shape=4)
    out = ti.field(ti.i64, shape=5)

    @ti.kernel
    def k():
        out[0] = ti.get_addr(y, 0) - ti.get_addr(x, 0)
        out[1] = ti.get_addr(z, 0) - ti.get_addr(y, 0)
        out[2] = ti.get_addr(x, 3) - ti.get_addr(x, 0)
        out[3] = ti.get_addr(w.get_scalar_field(2), 1) - ti.get_addr(w.get_scalar_field(0), 0)
        out[4] = ti.get_addr(w.get_scalar_field(1), 0) - ti.get_addr(w.get_scalar_field(0), 0)

    k()
    # Taichi 1.7.4 CPU prints the same: a cell of (x, y, temp, z) is 16 bytes; w's AOS cell 12
    np.testing.assert_array_equal(out.to_numpy(), [4, 8, 48, 20, 4])


def test_bad_member_placements_are_refused_and_leave_the_field_as_it_was():
    w = ti.Vector.field(2, ti.i32)
    a, b = w.get_scalar_field(0), w.get_scalar_field(1)
    ti.root.dense(ti.i, 8).place(a)
    with pytest.raises(RuntimeError, match='Members of the following field have different shapes'):
        ti.root.dense(ti.i, 9).place(b)
    with pytest.raises(ti.VkdiffError, match='already placed'):
        ti.root.dense(ti.i, 8).place(a)
    assert w.shape == (8,)
    ti.root.dense(ti.i, 8).place(b)  # the right shape still places it
    u = ti.Vector.field(2, ti.i32)
    with pytest.raises(NotImplementedError, match='placed under dense nodes only'):
        ti.root.pointer(ti.i, 2).dense(ti.i, 4).place(u.get_scalar_field(0))
    assert u._shape is None
    s = ti.field(ti.i32, shape=3)
    with pytest.raises(ti.VkdiffError, match='scalar field'):
        s.get_scalar_field(0)
    with pytest.raises(ValueError, match='2x1 members'):
        w.get_scalar_field(2)


def test_dynamic_index_stride_is_taichis():
    """`v._get_dynamic_index_stride()`: the members' byte stride in Taichi's layout (the one
    ti.get_addr reports), None where uneven; Taichi 1.7.4 CPU prints [4, 4, 8, 40, None]."""
    from vkdiff.lang import impl
    a = ti.Vector.field(3, ti.i32, shape=4)  # placed as a whole: consecutive places
    b = ti.Vector.field(3, ti.f32)
    ti.root.dense(ti.i, 8).place(*[b.get_scalar_field(k) for k in range(3)])
    c = ti.Vector.field(3, ti.i32)
    s = ti.root.dense(ti.i, 4)
    for k in range(3):  # three dense children of s, a 2 x 4-byte cell each
        s.dense(ti.i, 2).place(c.get_scalar_field(k))
    d = ti.Matrix.field(2, 2, ti.i32)
    t = ti.root.dense(ti.j, 3)
    for k in range(4):  # each member beside an f32: 5 cells of 8 bytes
        t.dense(ti.i, 5).place(d.get_scalar_field(k // 2, k % 2), ti.field(ti.f32))
    e = ti.Vector.field(2, ti.i32)
    u = ti.root.dense(ti.i, 4)
    u.dense(ti.i, 2).place(e.get_scalar_field(0))
    u.dense(ti.i, 2).place(e.get_scalar_field(1), ti.field(ti.i32))  # another cell size
    impl.get_runtime().materialize()
    assert [f._get_dynamic_index_stride() for f in (a, b, c, d, e)] == [4, 4, 8, 40, None]
    assert ti.Vector.field(1, ti.f32, shape=2)._get_dynamic_index_stride() == 0

    @ti.kernel
    def k():  # a run-time member index works on vkdiff whatever the stride (Taichi: refused)
        for i in range(8):
            for j in range(2):
                e[i][j] = i + 10 * j

    k()
    np.testing.assert_array_equal(e.to_numpy(), [[i, i + 10] for i in range(8)])


def test_member_of_a_chunk_pool_matrix_field():
    """A matrix field in a dynamic node's chunk pool (lang/dynpool.py): its members read and
    write from Python; a kernel indexing a member is refused with the way to write it."""
    v = ti.Vector.field(2, ti.i32)
    x = v.get_scalar_field(1)
    ti.root.dense(ti.i, 1000).dynamic(ti.j, 1 << 20, chunk_size=32).place(v)  # 8 GB if dense

    @ti.kernel
    def k():
        for i in range(4):
            ti.append(v.parent(), i, ti.Vector([i, 10 * i]))

    k()
    assert x[2, 0] == 20
    x[2, 0] = 77
    assert list(v[2, 0]) == [2, 77] and x[2, 0] == 77

    @ti.kernel
    def r() -> ti.i32:
        return x[1, 0]

    with pytest.raises(NotImplementedError, match=r'index the matrix field \(v\[I\]\[1\]\)'):
        r()
