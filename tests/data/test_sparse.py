"""Sparse SNodes (pointer, bitmasked, dynamic) with Taichi 1.7.4's semantics (lang/sparse.py,
frontend/sparse.py). Expected values are Taichi's (its CPU backend, its examples' printed output)
or numpy's."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.errors import UnsupportedError


@pytest.fixture(autouse=True)
def _init():
    ti.init()


@pytest.fixture(params=['dense', 'pool'])
def dynamic_layout(request, monkeypatch):
    """Dynamic nodes stored densely, or in chunks from the device allocator (lang/dynpool.py,
    which large nodes use): the same results either way."""
    monkeypatch.setenv('VKDIFF_DYNAMIC_POOL', '1' if request.param == 'pool' else '0')
    yield request.param
    from vkdiff.lang.sparse import _nodes
    for n in _nodes():  # the test ran on the layout it names (a pointer above: dense always)
        if n._kind == 'dynamic' and not any(a._kind == 'pointer' for a in n._path_from_root()):
            assert bool(n.__dict__.get('_pool_mode')) == (request.param == 'pool')


def _count(f):
    @ti.kernel
    def count() -> ti.i32:
        n = 0
        for I in ti.grouped(f):
            n += 1
        return n
    return count()


def test_pointer_write_activates_and_struct_for_visits_active_blocks_only():
    x = ti.field(ti.f32)
    blk = ti.root.pointer(ti.ij, 4)
    blk.dense(ti.ij, 2).place(x)

    @ti.kernel
    def write():
        x[1, 1] = 3.0
        x[7, 6] = 2.0

    write()
    assert _count(x) == 8  # two 2x2 blocks
    want = np.zeros((8, 8), np.float32)
    want[1, 1], want[7, 6] = 3, 2
    np.testing.assert_array_equal(x.to_numpy(), want)

    @ti.kernel
    def activity() -> ti.i32:
        return ti.is_active(blk, [0, 0]) * 100 + ti.is_active(blk, [3, 3]) * 10 + \
            ti.is_active(blk, [1, 0])

    assert activity() == 110


def test_pointer_deactivate_frees_the_cell_data_reads_zero_and_stays_zero_when_reactivated():
    x = ti.field(ti.f32)
    ptr = ti.root.pointer(ti.i, 16)
    ptr.dense(ti.i, 16).place(x)

    @ti.kernel
    def fill_all():
        for i in range(256):
            x[i] = 1.0

    @ti.kernel
    def clear_odd():
        for i in ptr:
            if i % 2 == 1:
                ti.deactivate(ptr, i)

    @ti.kernel
    def reactivate():
        ti.activate(ptr, 3)

    @ti.kernel
    def read(i: ti.i32) -> ti.f32:
        return x[i]

    fill_all()
    clear_odd()
    a = x.to_numpy()
    assert a.reshape(16, 16)[0::2].min() == 1 and a.reshape(16, 16)[1::2].max() == 0
    assert read(17) == 0 and x[17] == 0 and read(16 * 2) == 1
    assert _count(x) == 128
    reactivate()
    assert _count(x) == 128 + 16 and read(3 * 16 + 5) == 0.0


def test_nested_pointers_as_taichis_explicit_activation_example():
    """taichi/examples/features/sparse/explicit_activation.py; Taichi CPU prints these."""
    x = ti.field(ti.i32)
    block1 = ti.root.pointer(ti.ij, (4, 4))
    block2 = block1.pointer(ti.ij, (2, 2))
    block2.dense(ti.ij, (2, 2)).place(x)
    out = ti.field(ti.i32, shape=(16, 2))
    n = ti.field(ti.i32, shape=())

    @ti.kernel
    def demo():
        ti.activate(block1, [0, 1])
        ti.activate(block2, [1, 2])
        for i, j in x:  # x[2..3, 4..5]
            k = ti.atomic_add(n[None], 1)
            out[k, 0], out[k, 1] = i, j

    demo()
    got = sorted(map(tuple, out.to_numpy()[:n[None]].tolist()))
    assert got == [(2, 4), (2, 5), (3, 4), (3, 5)]

    @ti.kernel
    def cells(node: ti.template()) -> ti.i32:
        c = 0
        for i, j in node:  # the node's own cell indices
            c += 1000 * i + j + 1
        return c

    assert cells(block2) == 1000 * 1 + 2 + 1 and cells(block1) == 0 * 1000 + 1 + 1

    @ti.kernel
    def active(node: ti.template(), i: ti.i32, j: ti.i32) -> ti.i32:
        return ti.is_active(node, [i, j])

    @ti.kernel
    def rescaled() -> ti.types.vector(2, ti.i32):
        return ti.rescale_index(x, block1, [9, 17])

    assert rescaled().to_list() == [2, 4]
    assert active(block2, 1, 2) == 1
    block2.deactivate_all()
    assert active(block2, 1, 2) == 0 and active(block1, 0, 1) == 1
    ti.deactivate_all_snodes()
    assert active(block1, 0, 1) == 0


def test_bitmasked_keeps_data_when_deactivated_and_hides_inactive_cells():
    x = ti.field(ti.i32)
    bm = ti.root.bitmasked(ti.i, 10)
    bm.place(x)

    @ti.kernel
    def run():
        for i in range(10):
            if i % 3 == 0:
                x[i] = i + 1
        ti.deactivate(bm, 3)

    @ti.kernel
    def raw(i: ti.i32) -> ti.i32:
        return x[i]

    run()
    np.testing.assert_array_equal(x.to_numpy(), [1, 0, 0, 0, 0, 0, 7, 0, 0, 10])
    assert _count(x) == 3
    assert raw(3) == 4  # Taichi's bitmasked lookup ignores the mask: the data is still there


def test_python_scope_write_activates_fill_and_from_numpy_touch_active_cells_only():
    x = ti.field(ti.f32)
    ti.root.pointer(ti.i, 4).dense(ti.i, 2).place(x)
    x[5] = 2.5
    assert _count(x) == 2 and x[5] == 2.5
    x.fill(7.0)  # Taichi's fill is a struct-for
    np.testing.assert_array_equal(x.to_numpy(), [0, 0, 0, 0, 7, 7, 0, 0])
    x.from_numpy(np.arange(8, dtype=np.float32))
    np.testing.assert_array_equal(x.to_numpy(), [0, 0, 0, 0, 4, 5, 0, 0])
    assert _count(x) == 2


def test_dynamic_append_length_deactivate_and_reads_past_the_length(dynamic_layout):
    x = ti.field(ti.i32)
    d = ti.root.dense(ti.i, 3).dynamic(ti.j, 8, chunk_size=4)
    d.place(x)

    @ti.kernel
    def fill_lists():
        for i in range(3):
            for k in range(i + 2):
                ti.append(d, i, (k + 1) * 10)

    @ti.kernel
    def total() -> ti.i32:
        s = 0
        for i, j in x:
            s += x[i, j]
        return s + 1000 * ti.length(d, 2)

    @ti.kernel
    def methods() -> ti.i32:
        x[1].deactivate()
        x[0].append(99)
        return x[0].length() * 100 + x[1].length()

    @ti.kernel
    def read(i: ti.i32, j: ti.i32) -> ti.i32:
        return x[i, j]

    fill_lists()
    assert total() == (30 + 60 + 100) + 4000
    assert methods() == 300
    want = np.zeros((3, 8), np.int32)
    want[0, :3] = [10, 20, 99]
    want[2, :4] = [10, 20, 30, 40]
    np.testing.assert_array_equal(x.to_numpy(), want)
    assert read(1, 0) == 0 and x[1, 0] == 0  # past the (emptied) list: 0
    assert total() == (30 + 99 + 100) + 4000


def test_dynamic_append_of_structs_returns_the_old_length(dynamic_layout):
    pt = ti.types.struct(a=ti.i32, b=ti.f32)
    s = pt.field()
    ti.root.dynamic(ti.i, 16, chunk_size=4).place(s)
    old = ti.field(ti.i32, shape=5)

    @ti.kernel
    def run() -> ti.i32:
        for k in ti.static(range(5)):
            old[k] = s.append(pt(k * 2, k * 0.5))
        return s.length()

    assert run() == 5
    np.testing.assert_array_equal(old.to_numpy(), np.arange(5))
    np.testing.assert_array_equal(s.a.to_numpy()[:6], [0, 2, 4, 6, 8, 0])
    np.testing.assert_allclose(s.b.to_numpy()[:5], np.arange(5) * 0.5)


def test_gradients_of_a_pointer_field_flow_to_active_cells():
    x = ti.field(ti.f32, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)
    ti.root.pointer(ti.i, 4).dense(ti.i, 4).place(x, x.grad)

    @ti.kernel
    def init():
        for i in range(4, 12):
            x[i] = i * 0.5

    @ti.kernel
    def f():
        for i in x:
            loss[None] += x[i] ** 2

    init()
    with ti.ad.Tape(loss):
        f()
    v = np.where((np.arange(16) >= 4) & (np.arange(16) < 12), np.arange(16) * 0.5, 0)
    assert loss[None] == pytest.approx((v ** 2).sum())
    np.testing.assert_allclose(x.grad.to_numpy(), 2 * v)


def test_sparse_node_errors_are_clear():
    x = ti.field(ti.f32)
    ptr = ti.root.pointer(ti.i, 4)
    ptr.place(x)
    with pytest.raises(ti.VkdiffError, match='kernel'):
        ti.activate(ptr, 0)

    @ti.kernel
    def bad():
        ti.activate(ptr, [0, 1])

    with pytest.raises(ti.TaichiIndexError, match='takes 1 indices, got 2'):
        bad()


def test_one_size_for_every_axis_as_in_mgpcg():
    """`ti.root.pointer(ti.ijk, [n])` (algorithm/mgpcg.py): one size broadcast to the axes."""
    x = ti.field(ti.f32)
    ti.root.pointer(ti.ijk, [2]).dense(ti.ijk, 4).place(x)
    assert x.shape == (8, 8, 8)
    x[7, 0, 3] = 1.0
    assert _count(x) == 64


def test_vector_unit_is_an_integer_vector_by_default():
    """Taichi's `ti.Vector.unit(n, i)` has dt=int (algorithm/mgpcg_advanced.py indexes with it)."""
    x = ti.field(ti.f32, shape=(4, 4))

    @ti.kernel
    def shift() -> ti.f32:
        I = ti.Vector([1, 1])
        return x[I + ti.Vector.unit(2, 0)] + x[I - ti.Vector.unit(2, 1, float).cast(int)]

    x[2, 1], x[1, 0] = 3.0, 0.5
    assert shift() == 3.5
    assert ti.Vector.unit(3, 2).to_list() == [0, 0, 1]
    assert ti.Vector.unit(2, 0, ti.f32).to_list() == [1.0, 0.0]


def test_struct_for_over_pointer_blocks_with_continue_and_a_sum():
    """The struct-for runs per pointer cell with a serial loop over the cell's elements:
    `continue` skips one element, sums see every active element once."""
    x = ti.field(ti.i32)
    ti.root.pointer(ti.ij, (4, 3)).dense(ti.ij, (3, 2)).place(x)  # x: 12 x 6
    for i, j in [(0, 0), (5, 3), (11, 5), (4, 4)]:
        x[i, j] = 1

    @ti.kernel
    def visit() -> ti.i32:
        s = 0
        for i, j in x:
            if (i + j) % 3 == 0:
                continue
            s += i * 100 + j
        return s

    active = np.zeros((4, 3), bool)
    for i, j in [(0, 0), (5, 3), (11, 5), (4, 4)]:
        active[i // 3, j // 2] = True
    ii, jj = np.nonzero(np.kron(active, np.ones((3, 2), bool)))
    keep = (ii + jj) % 3 != 0
    assert visit() == int((ii[keep] * 100 + jj[keep]).sum())
    assert _count(x) == int(active.sum()) * 6 == 24


def test_append_activates_the_pointer_and_bitmasked_cells_above_the_list(dynamic_layout):
    # Taichi 1.7.4 CPU (review scripts t37, t38): an append activates the list's ancestors
    l = ti.field(ti.i32)
    p = ti.root.pointer(ti.i, 4)
    dn = p.dynamic(ti.j, 8, chunk_size=4)
    dn.place(l)
    m = ti.field(ti.i32)
    dn2 = ti.root.pointer(ti.i, 2).dense(ti.i, 2).dynamic(ti.j, 8, chunk_size=4)
    dn2.place(m)
    b = ti.field(ti.i32)
    bm = ti.root.bitmasked(ti.i, 4)
    dn3 = bm.dynamic(ti.j, 8, chunk_size=4)
    dn3.place(b)

    @ti.kernel
    def ap() -> ti.i32:
        ti.append(dn2, 3, 7)
        ti.append(dn3, 1, 4)
        return ti.append(dn, 1, 7)

    @ti.kernel
    def ap2() -> ti.i32:
        return l[2].append(9)

    @ti.kernel
    def state() -> ti.math.ivec4:
        return ti.math.ivec4(ti.is_active(p, [1]), ti.is_active(p, [2]), ti.is_active(p, [0]),
                             ti.is_active(bm, [1]))

    assert (ap(), ap(), ap2()) == (0, 1, 0)
    assert state().to_numpy().tolist() == [1, 1, 0, 1]
    assert l.to_numpy()[1:3].tolist() == [[7, 7, 0, 0, 0, 0, 0, 0], [9, 0, 0, 0, 0, 0, 0, 0]]
    assert (_count(l), _count(m), _count(b)) == (3, 2, 2)
    assert (m.to_numpy().sum(), b.to_numpy().sum(), m[3, 0], b[1, 0]) == (14, 8, 7, 4)


def test_deactivating_a_dynamic_list_zeroes_its_data(dynamic_layout):
    # Taichi 1.7.4 CPU (review script t9): a later write past the new length shows zeros
    d = ti.field(ti.i32)
    dn = ti.root.dense(ti.i, 2).dynamic(ti.j, 32, chunk_size=4)
    dn.place(d)

    @ti.kernel
    def fill():
        for k in range(3):
            ti.append(dn, 0, k + 5)

    @ti.kernel
    def clr():
        ti.deactivate(dn, [0])

    @ti.kernel
    def w3():
        d[0, 3] = 9

    @ti.kernel
    def tot() -> ti.i32:
        t = 0
        for i, j in d:
            t += d[i, j]
        return t

    fill(); clr(); w3()
    assert d.to_numpy()[0, :5].tolist() == [0, 0, 0, 9, 0] and tot() == 9
    dn.deactivate_all(); fill(); dn.deactivate_all(); d[0, 2] = 1
    assert d.to_numpy()[0, :5].tolist() == [0, 0, 1, 0, 0] and tot() == 1


def test_python_scope_read_of_a_deactivated_bitmasked_cell_keeps_its_data():
    # Taichi 1.7.4 CPU (review script t4): as a kernel read, the data is still there
    x = ti.field(ti.f32)
    b = ti.root.pointer(ti.i, 4).bitmasked(ti.i, 2)
    b.place(x)
    x[5] = 15.0

    @ti.kernel
    def d(i: ti.i32):
        ti.deactivate(b, [i])

    @ti.kernel
    def rd(i: ti.i32) -> ti.f32:
        return x[i]

    d(5)
    assert (x[5], rd(5)) == (15.0, 15.0)
    x[5] += 1.0
    assert (x[5], rd(5)) == (16.0, 16.0)


@pytest.mark.parametrize('kind', ['pointer', 'bitmasked'])
@pytest.mark.parametrize('accumulate', [False, True])
@pytest.mark.parametrize('validation', [False, True])
def test_tape_through_a_struct_for_that_writes_a_field_under_the_same_sparse_node(kind, accumulate,
                                                                                   validation):
    # The struct-for reads the node's activation mask and the store into y activates it again:
    # bookkeeping, not differentiable data, so no access-rule error (Taichi 1.7.4 gives the same
    # gradients). y = x**2, loss = sum (i + 1) y[i] over active cells.
    x = ti.field(ti.f32, needs_grad=True)
    y = ti.field(ti.f32, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)
    getattr(ti.root, kind)(ti.i, 4).dense(ti.i, 4).place(x, y, x.grad, y.grad)

    @ti.kernel
    def init():
        for i in range(16):
            if i < 6 or i > 12:
                x[i] = i * 0.5

    @ti.kernel
    def f():
        for i in x:
            if ti.static(accumulate):
                y[i] += x[i] * x[i]
            else:
                y[i] = x[i] * x[i]

    @ti.kernel
    def g():
        for i in y:
            loss[None] += y[i] * (i + 1)

    init()
    with ti.ad.Tape(loss, validation=validation):
        f()
        g()
    i = np.arange(16)
    active = (i < 8) | (i > 11)   # cells 0, 1 and 3 of the four
    v = np.where((i < 6) | (i > 12), i * 0.5, 0)
    assert loss[None] == pytest.approx(((v ** 2) * (i + 1)).sum())
    np.testing.assert_allclose(x.grad.to_numpy(), 2 * v * (i + 1) * active, rtol=1e-6)
    np.testing.assert_allclose(y.to_numpy(), v ** 2, rtol=1e-6)


def test_struct_for_and_fill_over_sparse_fields_with_an_offset():
    # Taichi 1.7.4 CPU: the loop visits indices from the offset, fill touches active cells only
    x = ti.field(ti.i32)
    ti.root.pointer(ti.i, 4).dense(ti.i, 4).place(x, offset=-8)
    b = ti.field(ti.i32)
    ti.root.bitmasked(ti.i, 16).place(b, offset=-8)
    c = ti.field(ti.i32)
    ti.root.dense(ti.i, 2).bitmasked(ti.i, 8).place(c, offset=-8)
    y = ti.field(ti.f32)
    blk = ti.root.pointer(ti.ij, (4, 2))
    blk.dense(ti.ij, (2, 4)).place(y, offset=(-4, 2))
    for f in (x, b, c):
        f[-8] = 1

    @ti.kernel
    def first(f: ti.template()) -> ti.i32:
        m = 100
        for i in f:
            ti.atomic_min(m, i)
        return m

    @ti.kernel
    def visits(f: ti.template()) -> ti.i32:
        n = 0
        for I in ti.grouped(f):
            n += 1
        return n

    assert [first(f) for f in (x, b, c)] == [-8, -8, -8]
    assert [visits(f) for f in (x, b, c)] == [4, 1, 1]
    x.fill(7)
    assert x.to_numpy().tolist() == [7, 7, 7, 7] + [0] * 12

    y[-4, 2] = 1.0
    y[3, 9] = 2.0
    y[0, 5] = 3.0

    @ti.kernel
    def scan() -> ti.math.vec3:
        n = 0
        s = 0.0
        t = 0
        for i, j in y:
            n += 1
            s += y[i, j]
            t += i * 100 + j
        return ti.math.vec3(n, s, t)

    assert list(scan()) == [24, 6, -284]
    y.fill(1.0)
    assert y.to_numpy().sum() == 24 and list(scan()) == [24, 24, -284]


def test_a_dense_gradient_of_a_pointer_field_has_its_own_layout():
    # Taichi 1.7.4 CPU: x.grad under its own dense node is always active, and deactivating x's
    # pointer cell leaves it alone
    x = ti.field(ti.f32, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)
    blk = ti.root.pointer(ti.i, 4)
    blk.dense(ti.i, 4).place(x)
    ti.root.dense(ti.i, 16).place(x.grad)
    x[1] = 1.0
    x[9] = 3.0
    x.grad.fill(2.0)
    assert (_count(x), _count(x.grad)) == (8, 16)
    assert x.grad.to_numpy().tolist() == [2.0] * 16

    @ti.kernel
    def d():
        ti.deactivate(blk, [0])

    d()
    assert (_count(x), _count(x.grad), x.grad.to_numpy().sum(), x.to_numpy().sum()) == \
        (4, 16, 32.0, 3.0)

    @ti.kernel
    def f():
        for i in x:
            loss[None] += x[i] * x[i] * (i + 1)

    with ti.ad.Tape(loss=loss):
        f()
    assert loss[None] == 90.0
    assert x.grad.to_numpy().tolist() == [0.0] * 9 + [60.0] + [0.0] * 6


@pytest.mark.parametrize('primal_first', [True, False])
def test_a_gradient_under_other_sparse_nodes_than_its_primal_is_refused(primal_first):
    y = ti.field(ti.f32, needs_grad=True)
    gp = ti.root.pointer(ti.i, 8)
    place = [lambda: ti.root.dense(ti.i, 16).place(y), lambda: gp.dense(ti.i, 2).place(y.grad)]
    if not primal_first:
        place.reverse()
    place[0]()
    with pytest.raises(NotImplementedError, match='y.grad') as e:
        place[1]()
    assert isinstance(e.value, UnsupportedError)
    z = ti.field(ti.f32, needs_grad=True)  # with its primal: accepted
    ti.root.pointer(ti.i, 4).dense(ti.i, 4).place(z, z.grad)
    z[5] = 1.0
    assert _count(z.grad) == 4
