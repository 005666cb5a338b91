"""Pointer SNodes whose blocks come from a device pool (lang/blockpool.py,
frontend/blockpool.py): storage that follows the active blocks, allocation under contention,
reuse of deactivated blocks, a full pool, gradients, struct-for over the blocks given out.
Expected values are numpy's (Taichi 1.7.4's semantics: an inactive cell reads 0)."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.errors import SparsePoolError, UnsupportedError
from vkdiff.lang import blockpool


@pytest.fixture(autouse=True)
def _init():
    ti.init()


def _pool(node):
    assert node._block_pool_mode, 'the node was expected to use the block pool'
    return node._block_pool


def test_a_4096_squared_grid_with_1_percent_of_its_blocks_active_is_stored_in_proportion():
    # 4096^2 vec3 f32 stored densely: 192 MiB, more than lavapipe's 128 MiB buffer limit
    v = ti.Vector.field(3, ti.f32)
    ptr = ti.root.pointer(ti.ij, 256)
    ptr.dense(ti.ij, 16).place(v)
    rng = np.random.default_rng(1)
    cells = rng.choice(256 * 256, 655, replace=False)  # 1% of the blocks
    ci, cj = cells // 256, cells % 256
    pts = ti.field(ti.i32, shape=(655, 2))
    pts.from_numpy(np.stack([ci, cj], 1).astype(np.int32))

    @ti.kernel
    def touch():
        for b in range(655):
            for k in range(256):  # every element of the block, from one invocation per block
                i, j = pts[b, 0] * 16 + k // 16, pts[b, 1] * 16 + k % 16
                v[i, j] = ti.Vector([i, j, 1.0])

    @ti.kernel
    def total() -> ti.math.vec3:
        s = ti.Vector([0.0, 0.0, 0.0])
        for i, j in v:
            s += v[i, j] / 1000.0
        return s

    @ti.kernel
    def count() -> ti.i32:
        n = 0
        for i, j in v:
            n += 1
        return n

    touch()
    assert count() == 655 * 256
    k = np.arange(256)
    ii = (ci[:, None] * 16 + k[None] // 16).ravel()
    jj = (cj[:, None] * 16 + k[None] % 16).ravel()
    np.testing.assert_allclose(total().to_numpy(), [ii.sum() / 1000, jj.sum() / 1000,
                                                    len(ii) / 1000], rtol=1e-4)
    pool = _pool(ptr)
    reserved, used = blockpool.memory_info()[str(ptr)]
    assert pool.blocks_in_use() == 655
    assert used < 655 * 256 * 12 + (4 << 20)  # the blocks in use and the tables
    assert reserved <= (64 << 20) + (4 << 20)  # the default budget, not the 192 MiB dense extent
    assert v[ii[7], jj[7]][0] == ii[7] and v[ii[7], jj[7]][1] == jj[7]
    off = next(c for c in range(256 * 256) if c not in set(cells.tolist()))
    assert v[off // 256 * 16 + 3, off % 256 * 16 + 5].to_numpy().tolist() == [0, 0, 0]


@pytest.mark.parametrize('pooled', ['1', '0'])
def test_parallel_writes_into_few_blocks_lose_nothing_and_reads_of_inactive_cells_give_0(
        monkeypatch, pooled):
    # every lane races for the same few blocks (no invocation waits on another)
    monkeypatch.setenv('VKDIFF_POINTER_POOL', pooled)
    x = ti.field(ti.i32)
    ptr = ti.root.pointer(ti.ij, 32)
    ptr.dense(ti.ij, 8).place(x)

    @ti.kernel
    def scatter():
        for p in range(20000):
            ti.atomic_add(x[(p * 7) % 24 + 100, (p * 3) % 20 + 40], 1)

    @ti.kernel
    def read(i: ti.i32, j: ti.i32) -> ti.i32:
        return x[i, j]

    scatter()
    ref = np.zeros((256, 256), np.int64)
    p = np.arange(20000)
    np.add.at(ref, ((p * 7) % 24 + 100, (p * 3) % 20 + 40), 1)
    np.testing.assert_array_equal(x.to_numpy(), ref)
    assert read(0, 0) == 0 and x[255, 255] == 0 and read(100, 40) == ref[100, 40]
    if pooled == '1':
        assert _pool(ptr).blocks_in_use() == len({(i // 8, j // 8) for i, j in zip(*np.nonzero(ref))})


def test_deactivated_blocks_are_zeroed_reused_and_deactivate_all_frees_every_block(monkeypatch):
    monkeypatch.setenv('VKDIFF_POINTER_POOL', '1')
    x = ti.field(ti.f32)
    ptr = ti.root.pointer(ti.i, 64)
    ptr.dense(ti.i, 4).place(x)

    @ti.kernel
    def write(lo: ti.i32, hi: ti.i32, v: ti.f32):
        for i in range(lo, hi):
            x[i] = v

    @ti.kernel
    def drop_even():
        for i in ptr:
            if i % 2 == 0:
                ti.deactivate(ptr, i)

    @ti.kernel
    def active() -> ti.i32:
        n = 0
        for i in ptr:
            n += ti.is_active(ptr, i)
        return n

    write(0, 64, 1.0)  # blocks 0..15
    pool = _pool(ptr)
    top0 = int(pool.top.to_numpy()[0])
    drop_even()
    assert active() == 8 and x.to_numpy()[:64].tolist() == ([0.0] * 4 + [1.0] * 4) * 8
    write(128, 160, 2.0)  # 8 new cells: the 8 freed blocks, zeroed, come back from the ring
    a = x.to_numpy()
    assert a[128:160].tolist() == [2.0] * 32 and a.sum() == 32 + 64
    assert int(pool.top.to_numpy()[0]) <= top0 + 8  # (lanes racing may take a few more)
    assert pool.blocks_in_use() == 16
    ptr.deactivate_all()
    assert active() == 0 and x.to_numpy().sum() == 0 and pool.blocks_in_use() == 0
    write(4, 8, 3.0)
    assert x.to_numpy().sum() == 12 and x[5] == 3 and x[0] == 0


def test_a_full_pool_raises_after_the_launch_and_keeps_what_fit(monkeypatch):
    monkeypatch.setenv('VKDIFF_POINTER_POOL', '1')
    ti.init(device_memory_GB=4096 * 12 / 2**30)  # about 12 blocks of 1 KiB
    x = ti.field(ti.f32)
    ptr = ti.root.pointer(ti.i, 1024)
    ptr.dense(ti.i, 256).place(x)

    @ti.kernel
    def write(n: ti.i32):
        for b in range(n):
            x[b * 256] = 1.0

    write(4)
    assert x.to_numpy().sum() == 4
    with pytest.raises(SparsePoolError, match='full'):
        write(400)
        ti.sync()
    n = _pool(ptr).capacity
    assert x.to_numpy().sum() == n  # the blocks that fit kept their writes
    ptr.deactivate_all()
    write(3)
    assert x.to_numpy().sum() == 3


def test_python_scope_access_fill_and_numpy_round_trip(monkeypatch):
    monkeypatch.setenv('VKDIFF_POINTER_POOL', '1')
    x = ti.Vector.field(2, ti.f32)
    ptr = ti.root.pointer(ti.ij, (8, 4))
    ptr.dense(ti.ij, (2, 3)).place(x)
    x[3, 5] = [1.0, 2.0]
    x[15, 0] = [3.0, 4.0]
    assert x[3, 5].to_numpy().tolist() == [1.0, 2.0] and x[0, 0].to_numpy().tolist() == [0, 0]
    a = x.to_numpy()
    assert a.sum() == 10 and a[15, 0].tolist() == [3.0, 4.0]
    x.fill(1.0)  # the active blocks only (2 cells of 2 x 3)
    assert x.to_numpy().sum() == 2 * 6 * 2
    b = np.arange(16 * 12 * 2, dtype=np.float32).reshape(16, 12, 2)
    x.from_numpy(b)  # as in Taichi: written where active
    act = np.zeros((16, 12), bool)
    act[2:4, 3:6] = act[14:16, 0:3] = True
    np.testing.assert_array_equal(x.to_numpy(), b * act[..., None])


def test_gradients_through_a_pooled_pointer_field(monkeypatch):
    monkeypatch.setenv('VKDIFF_POINTER_POOL', '1')
    x = ti.field(ti.f32, needs_grad=True)
    y = ti.field(ti.f32, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)
    ptr = ti.root.pointer(ti.i, 16)
    ptr.dense(ti.i, 8).place(x, y, x.grad, y.grad)

    @ti.kernel
    def init():
        for i in range(40, 80):
            x[i] = i * 0.1

    @ti.kernel
    def f():
        for i in x:
            y[i] = x[i] * x[i]

    @ti.kernel
    def g():
        for i in y:
            loss[None] += y[i] * (i % 5 + 1)

    init()
    with ti.ad.Tape(loss):
        f()
        g()
    i = np.arange(128)
    v = np.where((i >= 40) & (i < 80), i * 0.1, 0)
    assert loss[None] == pytest.approx(((v ** 2) * (i % 5 + 1)).sum(), rel=1e-5)
    active = (i >= 40) & (i < 88)  # blocks 5..10
    np.testing.assert_allclose(x.grad.to_numpy(), 2 * v * (i % 5 + 1) * active, rtol=1e-5)


def test_a_gradient_placed_apart_from_its_pooled_primal_is_refused(monkeypatch):
    monkeypatch.setenv('VKDIFF_POINTER_POOL', '1')
    x = ti.field(ti.f32, needs_grad=True)
    ti.root.pointer(ti.i, 4).dense(ti.i, 4).place(x)
    with pytest.raises(UnsupportedError, match='place\\(x, x.grad\\)|with its primal'):
        ti.root.dense(ti.i, 16).place(x.grad)


def test_a_sparse_node_under_a_pooled_pointer_unpools_it_before_use_and_is_refused_after(
        monkeypatch):
    monkeypatch.setenv('VKDIFF_POINTER_POOL', '1')
    x, y = ti.field(ti.f32), ti.field(ti.f32)
    ptr = ti.root.pointer(ti.i, 4)
    ptr.dense(ti.i, 4).place(x)
    ptr.pointer(ti.i, 2).place(y)  # (Taichi's test_complex_pointer): ptr stores densely
    assert not ptr._block_pool_mode
    x[5] = 2.0
    y[7] = 3.0
    assert x.to_numpy().sum() == 2 and y.to_numpy().sum() == 3 and x[5] == 2 and y[7] == 3
    z = ti.field(ti.f32)
    p2 = ti.root.pointer(ti.i, 4)
    p2.dense(ti.i, 4).place(z)
    z[3] = 1.0
    assert p2._block_pool_mode and z[3] == 1
    with pytest.raises(UnsupportedError, match='only dense nodes'):
        p2.bitmasked(ti.i, 2)


def test_nested_pointers_pool_the_inner_one(monkeypatch):
    # taichi_elements' grid: pointer over pointer over dense; the inner pointer's blocks pooled
    monkeypatch.setenv('VKDIFF_POINTER_POOL', '1')
    m = ti.field(ti.f32)
    outer = ti.root.pointer(ti.ij, 16)
    inner = outer.pointer(ti.ij, 8)
    inner.dense(ti.ij, 4).place(m)

    @ti.kernel
    def scatter():
        for p in range(1000):
            m[(p * 37) % 512, (p * 11) % 300] += 1.0

    @ti.kernel
    def count() -> ti.i32:
        n = 0
        for i, j in m:
            n += 1
        return n

    scatter()
    ref = np.zeros((512, 512))
    p = np.arange(1000)
    np.add.at(ref, ((p * 37) % 512, (p * 11) % 300), 1.0)
    np.testing.assert_array_equal(m.to_numpy(), ref)
    blocks = {(i // 4, j // 4) for i, j in zip(*np.nonzero(ref))}
    assert count() == 16 * len(blocks) and _pool(inner).blocks_in_use() == len(blocks)
    assert not outer.__dict__.get('_block_pool_mode')
    outer.deactivate_all()
    assert count() == 0 and m.to_numpy().sum() == 0
    scatter()
    np.testing.assert_array_equal(m.to_numpy(), ref)


def test_the_memory_profiler_prints_bytes_reserved_and_in_use(monkeypatch, capsys):
    monkeypatch.setenv('VKDIFF_POINTER_POOL', '1')
    x = ti.field(ti.f32)
    ptr = ti.root.pointer(ti.i, 100)
    ptr.dense(ti.i, 64).place(x)
    x[64 * 3] = 1.0
    x[64 * 50 + 3] = 1.0
    reserved, used = ti.profiler.memory_profiler_info()[str(ptr)]
    table = 100 * 4
    assert used == 2 * 64 * 4 + table + 4 * (2 * _pool(ptr).capacity + 9)
    assert reserved == _pool(ptr).capacity * 64 * 4 + used - 2 * 64 * 4
    ti.profiler.print_memory_profiler_info()
    assert f'{reserved} reserved, {used} in use' in capsys.readouterr().out


def test_fields_of_one_cell_share_a_block_lookup_but_a_reassigned_index_does_not(monkeypatch):
    # grid_v[base + off] and grid_m[base + off] share one claim; after `a = ...` the next
    # write looks its block up again
    monkeypatch.setenv('VKDIFF_POINTER_POOL', '1')
    x, y = ti.field(ti.f32), ti.field(ti.f32)
    ptr = ti.root.pointer(ti.i, 64)
    ptr.dense(ti.i, 4).place(x, y)

    @ti.kernel
    def k(u: ti.i32, w: ti.i32):
        for p in range(3):
            a = u + p
            x[a + 1] += 1.0
            y[a + 1] += 2.0
            a = w + p
            y[a + 1] += 3.0
            if p == 1:
                a = u
            x[a + 1] += 4.0

    k(3, 200)
    ex, ey = np.zeros(256), np.zeros(256)
    for p in range(3):
        ex[3 + p + 1] += 1
        ey[3 + p + 1] += 2
        ey[200 + p + 1] += 3
        ex[(3 if p == 1 else 200 + p) + 1] += 4
    np.testing.assert_array_equal(x.to_numpy(), ex)
    np.testing.assert_array_equal(y.to_numpy(), ey)


@pytest.mark.parametrize('elect', ['1', '0'])
def test_racing_lanes_of_a_subgroup_elect_one_claimer(monkeypatch, elect):
    # every cell's 8 consecutive elements written by consecutive lanes (Taichi's
    # test_nested_struct_fill_and_clear): with the election a subgroup takes one block per cell
    monkeypatch.setenv('VKDIFF_POINTER_POOL', '1')
    monkeypatch.setenv('VKDIFF_DYNAMIC_POOL_ELECT', elect)
    a = ti.field(ti.f32)
    ptr = ti.root.pointer(ti.ij, 64)
    ptr.dense(ti.ij, 8).place(a)

    @ti.kernel
    def fill():
        for i, j in ti.ndrange(512, 512):
            a[i, j] = 2.0

    @ti.kernel
    def clear():
        for i, j in a.parent():
            ti.deactivate(ptr, ti.rescale_index(a, ptr, [i, j]))

    for _ in range(3):
        fill()
        assert a.to_numpy().sum() == 2.0 * 512 * 512
        clear()
        assert a.to_numpy().sum() == 0
    pool = _pool(ptr)
    taken = int(pool.top.to_numpy()[0])
    print('blocks taken', taken, 'for', 64 * 64, 'cells')
    assert 64 * 64 <= taken <= pool.capacity
    from vkdiff.lang import state
    if elect == '1' and state.runtime().features.get('subgroup_arithmetic'):
        assert taken <= 2 * 64 * 64  # (lavapipe: 4096, one per cell; 28673 without)
