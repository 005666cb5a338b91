"""The device-side chunk allocator of dynamic SNodes (lang/dynpool.py, frontend/dynpool.py):
lists far larger than device memory stored densely (Taichi's oit_renderer), allocation under
contention, chunk reuse, a full pool, gradients. Expected values are numpy's."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.errors import DynamicPoolError


@pytest.fixture(autouse=True)
def _init():
    ti.init()


def _pool(node):
    assert node._pool_mode, 'the node was expected to use the chunk pool'
    return node._pool


def _hits(u, v):
    """Per pixel: how many entries, and their depths (a deterministic scene)."""
    n = (u * 7 + v * 3) % 9 + (20 if (u + v) % 31 == 0 else 0)
    return n, [float((u * 13 + v * 7 + i * 5) % 11) for i in range(n)]


def test_oit_like_lists_of_structs_far_larger_than_dense_storage():
    # oit_renderer's layout at 64 x 64 pixels: 64*64*2048 structs of 5 floats are 168 MB
    # stored densely (more than lavapipe's 128 MiB buffer limit); the pool takes a few MB
    W = 64
    Entry = ti.types.struct(color=ti.math.vec4, depth=float)
    lists = Entry.field()
    dn = ti.root.dense(ti.ij, (W, W)).dynamic(ti.k, 2048, chunk_size=64)
    dn.place(lists)
    out = ti.field(ti.f32, shape=(W, W))
    lens = ti.field(ti.i32, shape=(W, W))

    @ti.kernel
    def render():
        for u, v in out:
            lists[u, v].deactivate()
            n = (u * 7 + v * 3) % 9 + (20 if (u + v) % 31 == 0 else 0)
            for i in range(n):
                d = ti.cast((u * 13 + v * 7 + i * 5) % 11, ti.f32)
                lists[u, v].append(Entry(color=ti.math.vec4(d, 1.0, 0.0, i), depth=d))
            m = lists[u, v].length()
            for i in range(m - 1):  # bubble sort in place by depth, as the example
                for j in range(m - 1 - i):
                    if lists[u, v, j].depth > lists[u, v, j + 1].depth:
                        tmp = lists[u, v, j]
                        lists[u, v, j] = lists[u, v, j + 1]
                        lists[u, v, j + 1] = tmp
            acc = 0.0
            for i in range(m):
                acc = acc * 0.5 + lists[u, v, i].color.x + 0.001 * lists[u, v, i].color.w
            out[u, v] = acc
            lens[u, v] = m

    want = np.zeros((W, W), np.float32)
    for u in range(W):
        for v in range(W):
            n, ds = _hits(u, v)
            order = sorted(range(n), key=lambda i: ds[i])  # (a stable sort, as bubble sort)
            acc = np.float32(0)
            for i in order:
                acc = np.float32(acc * np.float32(0.5) + np.float32(ds[i]) +
                                 np.float32(0.001) * np.float32(i))
            want[u, v] = acc
    render()
    pool = _pool(dn)
    top = int(pool.top.to_numpy()[0])
    np.testing.assert_allclose(out.to_numpy(), want, rtol=1e-5)
    assert lens.to_numpy().sum() == sum(_hits(u, v)[0] for u in range(W) for v in range(W))
    assert top * pool.B * 20 < 2 << 20  # bytes of chunks taken (dense: 168 MB)
    render()  # the next frame: each list reuses its chunks
    np.testing.assert_allclose(out.to_numpy(), want, rtol=1e-5)
    assert int(pool.top.to_numpy()[0]) == top
    u, v = 31, 0  # Python scope sees the sorted list
    n, ds = _hits(u, v)
    assert [lists.depth[u, v, k] for k in range(n + 1)] == sorted(ds) + [0.0]
    dn.deactivate_all()
    assert int(pool.top.to_numpy()[0]) == 0 and lists.depth[u, v, 0] == 0.0


def test_parallel_appends_to_one_list_lose_no_element_and_no_chunk(monkeypatch):
    monkeypatch.setenv('VKDIFF_DYNAMIC_POOL', '1')
    x = ti.field(ti.i32)
    dn = ti.root.dynamic(ti.i, 4096, chunk_size=32)
    dn.place(x)

    @ti.kernel
    def push(n: ti.i32):
        for i in range(n):
            x.append(i * 3)

    push(3000)
    a = x.to_numpy()
    np.testing.assert_array_equal(np.sort(a[:3000]), np.arange(3000) * 3)
    assert not a[3000:].any()
    pool = _pool(dn)
    # every chunk a list of 3000 needs was taken once: the classes 4, 8, 16, ... elements
    B, need, c = pool.B, 0, 0
    while B * ((1 << c) - 1) < 3000:
        need += 1 << c
        c += 1
    assert int(pool.top.to_numpy()[0]) == need


def test_writes_past_the_length_in_missing_chunks_and_python_scope(monkeypatch):
    monkeypatch.setenv('VKDIFF_DYNAMIC_POOL', '1')
    x = ti.field(ti.f32)
    dn = ti.root.dense(ti.i, 3).dynamic(ti.j, 300, chunk_size=8)
    dn.place(x)

    @ti.kernel
    def w():
        x[1, 200] = 5.0
        x[2, 3] += 2.5

    @ti.kernel
    def stats() -> ti.math.vec3:
        s = 0.0
        n = 0
        for i, j in x:
            s += x[i, j]
            n += 1
        return ti.math.vec3(s, n, ti.length(dn, 1) + 1000 * ti.length(dn, 2))

    w()
    x[0, 7] = 1.5  # Python scope allocates too
    want = np.zeros((3, 300), np.float32)
    want[1, 200], want[2, 3], want[0, 7] = 5.0, 2.5, 1.5
    np.testing.assert_array_equal(x.to_numpy(), want)
    assert stats().to_numpy().tolist() == [9.0, 201 + 4 + 8, 201 + 4000]
    assert (x[1, 199], x[1, 200], x[1, 250]) == (0.0, 5.0, 0.0)
    x.from_numpy(np.arange(900, dtype=np.float32).reshape(3, 300))  # active cells only
    got = x.to_numpy()
    assert got[1, 150] == 450 and got[0, 7] == 7 and got[0, 8] == 0 and got[2, 4] == 0
    x.fill(-1)
    assert x.to_numpy().sum() == -(201 + 4 + 8)


def test_a_full_pool_is_an_error_not_a_wrong_result():
    ti.init(device_memory_GB=0.0002)  # ~200 KB for the pool
    x = ti.field(ti.f32)
    dn = ti.root.dense(ti.i, 10000).dynamic(ti.j, 4096, chunk_size=16)
    dn.place(x)

    @ti.kernel
    def fill(n: ti.i32):
        for i in range(10000):
            for k in range(n):
                x[i].append(1.0)

    @ti.kernel
    def total() -> ti.f32:
        s = 0.0
        for i in range(10000):
            for k in range(x[i].length()):
                s += x[i, k]
        return s

    fill(1)  # 10000 slots of 4 elements fit
    assert total() == 10000.0
    with pytest.raises(DynamicPoolError, match='full') as e:
        fill(8)
        total()
    assert isinstance(e.value, MemoryError)
    assert total() <= 90000.0  # (what did not fit was dropped, nothing else written)
    dn.deactivate_all()
    fill(1)
    assert total() == 10000.0


def test_gradients_through_a_pooled_dynamic_field(monkeypatch):
    monkeypatch.setenv('VKDIFF_DYNAMIC_POOL', '1')
    x = ti.field(ti.f32, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)
    dn = ti.root.dense(ti.i, 4).dynamic(ti.j, 64, chunk_size=4)
    dn.place(x)

    @ti.kernel
    def init():
        for i in range(4):
            for k in range(i * 5 + 1):
                x[i].append(0.5 * k + i)

    @ti.kernel
    def f():
        for i, j in x:
            loss[None] += x[i, j] ** 2 * (j + 1)

    init()
    with ti.ad.Tape(loss):
        f()
    v = x.to_numpy()
    j = np.arange(64)
    np.testing.assert_allclose(loss[None], (v ** 2 * (j + 1)).sum(), rtol=1e-5)
    np.testing.assert_allclose(x.grad.to_numpy(), 2 * v * (j + 1), rtol=1e-5)
    assert _pool(dn) is not None


def test_struct_for_over_a_pooled_field_visits_list_elements_not_the_extent():
    # 1000 x 1000 lists of up to 2048: 2e9 indices (more than an i32 loop counts), 8 GB dense
    x = ti.field(ti.f32)
    dn = ti.root.dense(ti.ij, (1000, 1000)).dynamic(ti.k, 2048, chunk_size=64)
    dn.place(x)
    cells = [(0, 0), (3, 999), (500, 7), (999, 999)]

    @ti.kernel
    def fill(u: ti.i32, v: ti.i32, n: ti.i32):
        for k in range(n):
            x[u, v].append(k * 1.0 + u)

    @ti.kernel
    def stats() -> ti.math.vec4:
        s, n, m = 0.0, 0, 0
        for i, j, k in x:
            s += x[i, j, k]
            n += 1
        for I in ti.grouped(dn):
            m += I[2] + 1
        return ti.math.vec4(s, n, m, 0)

    lens = [5, 300, 1, 2048]
    for (u, v), n in zip(cells, lens):
        fill(u, v, n)
    s = sum(sum(k + u for k in range(n)) for (u, _), n in zip(cells, lens))
    m = sum(n * (n + 1) // 2 for n in lens)
    assert stats().to_numpy().tolist() == [s, sum(lens), m, 0]
    assert dn._pool_mode


def test_a_read_after_a_write_in_a_branch_sees_the_new_chunk(monkeypatch):
    # the frontend shares one chunk lookup among accesses to the same element in one block;
    # a lookup made before the branch that allocated must not be reused after it
    monkeypatch.setenv('VKDIFF_DYNAMIC_POOL', '1')
    x = ti.field(ti.f32)
    dn = ti.root.dense(ti.i, 2).dynamic(ti.j, 64, chunk_size=4)
    dn.place(x)
    out = ti.field(ti.f32, shape=2)

    @ti.kernel
    def k(c: ti.i32):
        for i, j in ti.ndrange(2, (9, 10)):
            a = x[i, j]
            if c > i:
                x[i, j] = 3.0 + i
            out[i] = a * 10 + x[i, j]

    k(1)
    assert out.to_numpy().tolist() == [3.0, 0.0]
    k(2)
    assert out.to_numpy().tolist() == [33.0, 4.0]
