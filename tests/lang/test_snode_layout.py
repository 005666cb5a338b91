"""A field's elements in Taichi's order, the SNode nesting order (issue 24, lang/layout.py): an
index out of range on an axis lands where Taichi's address puts it. The expected values are
Taichi 1.7.4's, printed on arch=ti.vulkan and arch=ti.cpu (identical) by the same programs."""
import warnings

import numpy as np
import pytest

import vkdiff as ti


def _time_major(n_objects=1, steps=16, *fields):
    ti.root.dense(ti.l, steps).dense(ti.i, n_objects).place(*fields)


def test_minimal_case_kernel_writes_land_where_taichi_puts_them():
    x = ti.field(ti.f32)
    _time_major(1, 16, x)

    @ti.kernel
    def w():
        for t in range(16):
            x[t, 0] = t

    w()
    assert x.shape == (1, 16)
    # Taichi 1.7.4: to_numpy [0.0, 1.0, ..., 15.0] (x[t, 0] is x[0, t])
    np.testing.assert_array_equal(x.to_numpy().ravel(), np.arange(16, dtype=np.float32))


def test_python_scope_alias_with_one_warning_per_field():
    x = ti.field(ti.f32)
    y = ti.field(ti.f32)
    _time_major(1, 16, x)
    _time_major(1, 16, y)
    x.from_numpy(np.arange(16, dtype=np.float32).reshape(1, 16))
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter('always')
        got = [x[t, 0] for t in range(16)]  # Taichi 1.7.4: 0.0 ... 15.0
        x[5, 0] = 50.0
        y[2, 0] = 7.0
    assert got == list(range(16))
    msgs = [str(w.message) for w in rec if issubclass(w.category, ti.FieldAliasWarning)]
    assert len(msgs) == 2, msgs  # once per field
    assert 'index (1, 0)' in msgs[0] and 'x[0, 1]' in msgs[0] and 'y[0, 2]' in msgs[1]
    assert x[0, 5] == 50.0 and y[0, 2] == 7.0
    assert x.to_numpy()[0, 5] == 50.0
    with warnings.catch_warnings():
        warnings.simplefilter('error')
        assert x[0, 15] == 15.0  # in range: no warning


def test_two_fields_placed_together():
    x = ti.field(ti.f32)
    v = ti.field(ti.f32)
    _time_major(1, 16, x, v)

    @ti.kernel
    def w():
        for t in range(16):
            x[t, 0] = t
            v[t, 0] = 100 + t

    w()
    # Taichi 1.7.4: x [0.0 ... 15.0], v [100.0 ... 115.0]
    np.testing.assert_array_equal(x.to_numpy().ravel(), np.arange(16))
    np.testing.assert_array_equal(v.to_numpy().ravel(), 100 + np.arange(16))


def test_vector_field_time_major():
    p = ti.Vector.field(2, ti.f32)
    _time_major(1, 4, p)

    @ti.kernel
    def w():
        for t in range(4):
            p[t, 0] = ti.Vector([t, 10 * t])

    w()
    # Taichi 1.7.4: [0.0, 0.0, 1.0, 10.0, 2.0, 20.0, 3.0, 30.0]
    assert p.to_numpy().reshape(-1).tolist() == [0.0, 0.0, 1.0, 10.0, 2.0, 20.0, 3.0, 30.0]


def test_in_range_access_and_storage_order():
    """dense(l, 3).dense(i, 2): y[i, l] is stored at l * 2 + i, as Taichi stores it; to_numpy,
    from_numpy and y[i, l] keep the axis order."""
    y = ti.field(ti.i32)
    _time_major(2, 3, y)
    assert y.shape == (2, 3)

    @ti.kernel
    def w():
        for i, l in y:
            y[i, l] = 10 * i + l

    w()
    want = np.array([[0, 1, 2], [10, 11, 12]], np.int32)
    np.testing.assert_array_equal(y.to_numpy(), want)
    raw = y.storage.buf.host[:24].view(np.int32)  # the buffer, in Taichi's order
    assert raw.tolist() == [want[i, l] for l in range(3) for i in range(2)]
    assert y[1, 2] == 12
    y.from_numpy(want + 100)

    @ti.kernel
    def total() -> ti.i32:
        s = 0
        for i, l in ti.ndrange(2, 3):
            s += y[i, l] * (i * 3 + l + 1)
        return s

    assert total() == int(((want + 100) * (np.arange(6).reshape(2, 3) + 1)).sum())


def test_out_of_range_kernel_pattern_with_two_objects():
    """n_objects = 2, y[t, i] with t < 8 and i < 2 (DiffTaichi's pattern with more objects):
    the writes collide where Taichi's addresses do (address 2 * i + t). Taichi 1.7.4 prints
    [[0, 20, 40, 60, 61, 0, 0, 0], [10, 30, 50, 70, 71, 0, 0, 0]]; elements written twice
    there are racing writes, so only the others are compared."""
    y = ti.field(ti.i32)
    _time_major(2, 8, y)

    @ti.kernel
    def w():
        for t, i in ti.ndrange(8, 2):
            y[t, i] = 10 * t + i

    w()
    got = y.to_numpy()
    taichi = np.array([[0, 20, 40, 60, 61, 0, 0, 0], [10, 30, 50, 70, 71, 0, 0, 0]])
    once = [(0, 0), (1, 0), (0, 4), (1, 4), (0, 5), (1, 5), (0, 6), (1, 6), (0, 7), (1, 7)]
    for a, b in once:
        assert got[a, b] == taichi[a, b], (a, b)
    assert got[0, 1] in (20, 1) and got[0, 3] in (60, 41)  # (written twice: either)


def test_out_of_storage_index_error():
    a = ti.field(ti.f32)
    b = ti.field(ti.f32)
    ti.root.dense(ti.i, 4).place(a, b)
    a.from_numpy(np.arange(4, dtype=np.float32))
    with pytest.raises(ti.FieldIndexError, match='index 4 out of range'):
        a[4]  # past the tree (Taichi 1.7.4 reads 0.0 there, outside every field)
    with pytest.raises(IndexError):
        a[4] = 1.0
    np.testing.assert_array_equal(a.to_numpy(), np.arange(4))


def test_spill_onto_another_field_raises():
    """Two dense children of one cell: a[0, 2] is b[0, 0] in Taichi 1.7.4 (it prints 100.0);
    vkdiff keeps each field apart, so Python scope refuses it."""
    a = ti.field(ti.f32)
    b = ti.field(ti.f32)
    blk = ti.root.dense(ti.i, 4)
    blk.dense(ti.j, 2).place(a)
    blk.dense(ti.j, 2).place(b)
    a.from_numpy(np.arange(8, dtype=np.float32).reshape(4, 2))
    with pytest.raises(ti.FieldIndexError, match='index 2 out of range'):
        a[0, 2]


def test_shape_field_row_major_alias():
    """A `shape=` field is one dense node: c[0, 5] of a 4 x 4 field is c[1, 1] (Taichi 1.7.4
    prints 5.0 for arange(16))."""
    c = ti.field(ti.f32, shape=(4, 4))
    c.from_numpy(np.arange(16, dtype=np.float32).reshape(4, 4))
    with pytest.warns(ti.FieldAliasWarning):
        assert c[0, 5] == 5.0
    with pytest.raises(ti.FieldIndexError):
        c[3, 4]  # address 16: past the field


def test_debug_mode_reports_both():
    ti.init(debug=True)
    x = ti.field(ti.f32)
    _time_major(1, 16, x)
    with pytest.raises(ti.FieldIndexError):
        x[1, 0]
    with pytest.raises(ti.FieldIndexError):
        x[1, 0] = 1.0

    @ti.kernel
    def w():
        for t in range(16):
            x[t, 0] = t

    with pytest.raises(ti.KernelIndexError):
        w()


STEPS = 16


def _difftaichi_like():
    x = ti.field(ti.f32)
    v = ti.field(ti.f32)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)
    init_v = ti.field(ti.f32, shape=(), needs_grad=True)
    _time_major(1, STEPS, x, v)
    ti.root.lazy_grad()

    @ti.kernel
    def init():
        x[0, 0] = 0.0
        v[0, 0] = init_v[None]

    @ti.kernel
    def step(t: ti.i32):
        for i in range(1):
            v[t, i] = v[t - 1, i] - 0.5 * x[t - 1, i]
            x[t, i] = x[t - 1, i] + 0.2 * v[t, i]

    @ti.kernel
    def compute_loss():
        loss[None] = (x[STEPS - 1, 0] - 1.0) ** 2

    def run():
        with ti.ad.Tape(loss):
            init()
            for t in range(1, STEPS):
                step(t)
            compute_loss()
    return x, loss, init_v, run


def test_difftaichi_like_program_learns_as_on_taichi():
    """dense(l, steps).dense(i, 1) indexed x[t, 0] under a Tape: Taichi 1.7.4 (CPU and Vulkan)
    prints, per iteration, loss, init_v.grad and x[steps - 1, 0]."""
    taichi = [(1.1320277452468872, 1.361196517944336, -0.06396792829036713),
              (1.0412805080413818, 1.3054975271224976, -0.02043147012591362),
              (0.9578076601028442, 1.2520779371261597, 0.021323513239622116),
              (0.8810264468193054, 1.2008442878723145, 0.06136992573738098)]
    x, loss, init_v, run = _difftaichi_like()
    init_v[None] = 0.1
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ti.FieldAliasWarning)
        for want in taichi:
            run()
            got = (loss[None], init_v.grad[None], x[STEPS - 1, 0])
            np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
            init_v[None] -= 0.05 * init_v.grad[None]


def test_difftaichi_like_gradient_by_finite_differences():
    x, loss, init_v, run = _difftaichi_like()

    def f(v0):
        init_v[None] = v0
        run()
        return loss[None]

    with warnings.catch_warnings():
        warnings.simplefilter('ignore', ti.FieldAliasWarning)
        f(0.3)
        g = init_v.grad[None]
        h = 1e-2  # (the loss is quadratic in v0: the central difference is exact up to f32)
        fd = (f(0.3 + h) - f(0.3 - h)) / (2 * h)
    assert g != 0.0
    np.testing.assert_allclose(g, fd, rtol=2e-3)


def test_gradient_fields_share_the_layout():
    x = ti.field(ti.f32, needs_grad=True)
    _time_major(3, 5, x)
    assert x.grad.buffer.meta.get('strides') == x.buffer.meta.get('strides') == (1, 3)

    @ti.kernel
    def k():
        for i, l in x:
            x.grad[i, l] = 10 * i + l

    k()
    np.testing.assert_array_equal(x.grad.to_numpy(),
                                  10 * np.arange(3)[:, None] + np.arange(5)[None, :])


def test_copy_from_another_layout():
    a = ti.field(ti.f32)
    _time_major(2, 3, a)
    b = ti.field(ti.f32, shape=(2, 3))
    want = np.arange(6, dtype=np.float32).reshape(2, 3)
    b.from_numpy(want)
    a.copy_from(b)
    np.testing.assert_array_equal(a.to_numpy(), want)
    b.fill(0)
    b.copy_from(a)
    np.testing.assert_array_equal(b.to_numpy(), want)


def test_layout_rule():
    """The address rule itself: strides of the affine layouts, None for a blocked one."""
    from vkdiff.lang.layout import Layout
    assert Layout([(3, 16), (0, 1)]).strides == (1, 1)  # i, l
    assert Layout([(3, 16), (0, 4)]).strides == (1, 4)
    assert Layout([(0, 4), (1, 3)]).strides == (3, 1) and Layout([(0, 4), (1, 3)]).row_major
    assert Layout([(0, 4), (0, 2)]).strides == (1,)  # one axis split over adjacent levels
    assert Layout([(0, 4), (1, 4), (0, 2), (1, 2)]).strides is None  # blocked
    lay = Layout([(3, 16), (0, 2)])
    assert lay.address((5, 0)) == 5 and lay.element(5) == (1, 2)
    blk = ti.root.dense((ti.j, ti.i), (3, 4))  # a node's axes count in ijkl order
    assert Layout.of_node(blk).strides == (3, 1)


def test_struct_field_time_major():
    S = ti.types.struct(a=ti.f32, b=ti.i32)
    s = S.field()
    _time_major(1, 8, s)

    @ti.kernel
    def w():
        for t in range(8):
            s[t, 0].a = t * 0.5
            s[t, 0].b = 3 * t
        s[7, 0].b = 70  # a constant out of range: s[0, 7]

    with pytest.warns(ti.FieldAliasWarning):
        w()
    # Taichi 1.7.4: a [0.0, 0.5, ..., 3.5], b [0, 3, 6, 9, 12, 15, 18, 70], s[5, 0].b 15
    assert s.a.to_numpy().ravel().tolist() == [0.0, 0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 3.5]
    assert s.b.to_numpy().ravel().tolist() == [0, 3, 6, 9, 12, 15, 18, 70]
    with pytest.warns(ti.FieldAliasWarning):
        assert s[5, 0].b == 15


def test_offset_field_time_major():
    o = ti.field(ti.f32)
    ti.root.dense(ti.l, 8).dense(ti.i, 1).place(o, offset=(-2, 10))

    @ti.kernel
    def w():
        for t in range(8):
            o[t - 2, 10] = t

    w()
    # Taichi 1.7.4: [0.0, 1.0, ..., 7.0], o[1, 10] 3.0, shape (1, 8)
    assert o.shape == (1, 8)
    assert o.to_numpy().ravel().tolist() == [float(t) for t in range(8)]
    with pytest.warns(ti.FieldAliasWarning, match=r'o\[-2, 13\]'):
        assert o[1, 10] == 3.0


@pytest.mark.parametrize('off', [[], ['texel_reads'], ['unified_memory']])
@pytest.mark.parametrize('n', [4, 2])
def test_vector_loads_and_paired_stores_in_nesting_order(n, off):
    """vec2/vec4 fields in dense(l, 6).dense(i, 2): each step reads slot t - 1 and writes slot t
    (texel reads, or vector loads without them, and paired 64-bit stores on CPU drivers index
    by the element's address; with staged memory the host view reads the downloaded copy); and
    the same with one object, indexed q[t, 0] (out of range: q[0, t])."""
    ti.init(disable_features=off)
    q = ti.Vector.field(n, ti.f32)
    _time_major(2, 6, q)
    r = ti.Vector.field(n, ti.f32)
    _time_major(1, 6, r)
    add = ti.Vector(list(range(1, n + 1)), ti.f32)

    @ti.kernel
    def step(t: ti.i32):
        for i in range(2):
            q[i, t] = q[i, t - 1] * 2.0 + add * (i + 1)
        for k in range(1):
            r[t, k] = r[t - 1, k] * 3.0 + add

    for t in range(1, 6):
        step(t)
    want_q = np.zeros((2, 6, n), np.float32)
    want_r = np.zeros((6, n), np.float32)
    for t in range(1, 6):
        for i in range(2):
            want_q[i, t] = want_q[i, t - 1] * 2 + np.arange(1, n + 1) * (i + 1)
        want_r[t] = want_r[t - 1] * 3 + np.arange(1, n + 1)
    np.testing.assert_array_equal(q.to_numpy(), want_q)
    np.testing.assert_array_equal(r.to_numpy()[0], want_r)


def test_pointer_over_dense_in_nesting_order():
    """pointer(j, 4).dense(i, 8): x[i, j] stored at j * 8 + i; activation, deactivation and
    struct-for as before. Taichi 1.7.4 (CPU) prints sum 376, then 268 and 1072."""
    x = ti.field(ti.i32)
    blk = ti.root.pointer(ti.j, 4)
    blk.dense(ti.i, 8).place(x)
    assert x.buffer.meta.get('strides') == (1, 8)

    @ti.kernel
    def w():
        for i in range(8):
            x[i, 1] = i + 10
            x[i, 3] = i + 30

    @ti.kernel
    def deact():
        ti.deactivate(blk, [1])

    @ti.kernel
    def total() -> ti.i32:
        s = 0
        for i, j in x:
            s += x[i, j] * (j + 1)
        return s

    w()
    assert x.shape == (8, 4) and x.to_numpy().sum() == 376
    assert x.to_numpy()[:, 1].tolist() == list(range(10, 18))
    deact()
    assert x.to_numpy().sum() == 268 and total() == 1072
    assert x.to_numpy()[:, 3].tolist() == list(range(30, 38))
