"""`ti.simt.warp` (Taichi's CUDA warp intrinsics on Vulkan subgroups), checked against a numpy
model of the device's subgroups: a warp is W = min(S, 32) lanes, S the subgroup size (lavapipe 8,
SwiftShader 4, NVIDIA 32); the lanes of a subgroup are consecutive iterations of a loop launched
in workgroups of block_dim. Run under each driver (VK_ICD_FILENAMES) to cover several S."""
import warnings

import numpy as np
import pytest

import vkdiff as ti
from vkdiff.errors import UnsupportedError

warp = ti.simt.warp
FULL = 0xFFFFFFFF


def subgroup_size():
    out = ti.field(ti.i32, ())

    @ti.kernel
    def k():
        for i in range(1):
            out[None] = ti.simt.subgroup.group_size()

    k()
    return int(out[None])


class Model:
    """Iteration i of a loop of n in workgroups of B: its warp lane and its warp's iterations."""

    def __init__(self, n, B, S):
        self.n, self.B, self.S, self.W = n, B, S, min(S, 32)

    def lane(self, i):
        return (i % self.B) % self.S % self.W

    def first(self, i):
        return i - self.lane(i)  # iteration of warp lane 0

    def lanes(self, i):
        """Iterations of i's warp that are active (in the loop), as {lane: iteration}."""
        f = self.first(i)
        return {k: f + k for k in range(self.W) if f + k < self.n}


def run(n, B, body, dtype=ti.i32, src=None, out_dtype=ti.i32):
    """a[i] = body(b[i], i) over range(n) with block_dim B; returns a as numpy."""
    a, b = ti.field(out_dtype, n), ti.field(dtype, n)
    if src is not None:
        b.from_numpy(src)

    @ti.kernel
    def k():
        ti.loop_config(block_dim=B)
        for i in range(n):
            a[i] = body(b[i], i)

    with warnings.catch_warnings():
        warnings.simplefilter('ignore', UserWarning)
        k()
    return a.to_numpy()


@pytest.fixture
def S():
    return subgroup_size()


@pytest.mark.parametrize('B', [32, 64])
def test_shuffles_match_the_model(S, B):
    n = 2 * B
    src = (np.arange(n) * 7 + 3).astype(np.int32)
    m = Model(n, B, S)
    for off in (0, 1, 3, 5, 17, 31):
        got = run(n, B, lambda v, i: warp.shfl_sync_i32(ti.u32(FULL), v, off), src=src)
        want = [src[m.first(i) + off % m.W] for i in range(n)]
        np.testing.assert_array_equal(got, want, err_msg=f'shfl_sync offset {off}, S={S}')
    for d in (1, 2, 3, 4, 16):
        up = run(n, B, lambda v, i: warp.shfl_up_i32(ti.u32(FULL), v, d), src=src)
        down = run(n, B, lambda v, i: warp.shfl_down_i32(ti.u32(FULL), v, d), src=src)
        xor = run(n, B, lambda v, i: warp.shfl_xor_i32(ti.u32(FULL), v, d), src=src)
        for i in range(n):
            k = m.lane(i)
            assert up[i] == (src[i - d] if k - d >= 0 else src[i]), (S, d, i)
            assert down[i] == (src[i + d] if k + d < m.W else src[i]), (S, d, i)
            assert xor[i] == (src[m.first(i) + (k ^ d)] if k ^ d < m.W else src[i]), (S, d, i)


def test_f32_shuffles_and_xor_butterfly_sum(S):
    n, B = 64, 32
    src = (np.arange(n) * 0.5 - 3).astype(np.float32)
    m = Model(n, B, S)
    got = run(n, B, lambda v, i: warp.shfl_down_f32(ti.u32(FULL), v, 1), ti.f32, src, ti.f32)
    np.testing.assert_array_equal(got, [src[i + 1] if m.lane(i) + 1 < m.W else src[i]
                                        for i in range(n)])
    got = run(n, B, lambda v, i: warp.shfl_up_f32(ti.u32(FULL), v, 2), ti.f32, src, ti.f32)
    np.testing.assert_array_equal(got, [src[i - 2] if m.lane(i) >= 2 else src[i]
                                        for i in range(n)])
    got = run(n, B, lambda v, i: warp.shfl_sync_f32(ti.u32(FULL), v, 2), ti.f32, src, ti.f32)
    np.testing.assert_array_equal(got, [src[m.first(i) + 2 % m.W] for i in range(n)])

    # the butterfly reduction with offsets below the warp width sums each warp
    a = ti.field(ti.i32, n)
    a.from_numpy(np.arange(n, dtype=np.int32))
    steps = m.W.bit_length() - 1

    @ti.kernel
    def butterfly():
        ti.loop_config(block_dim=B)
        for i in range(n):
            for j in ti.static(range(steps)):
                a[i] += warp.shfl_xor_i32(ti.u32(FULL), a[i], 1 << j)

    butterfly()
    want = [sum(range(m.first(i), m.first(i) + m.W)) for i in range(n)]
    np.testing.assert_array_equal(a.to_numpy(), want)


@pytest.mark.parametrize('n', [64, 37])  # 37: the last warp is partly inactive
def test_ballot_votes_and_active_mask(S, n):
    B = 32
    m = Model(n, B, S)
    rng = np.random.default_rng(n)
    src = rng.integers(0, 2, n).astype(np.int32)
    src[:m.W] = 1  # one warp all true
    if n > 2 * m.W:
        src[m.W:2 * m.W] = 0  # one all false

    def bits(i, pred):
        return sum(1 << k for k, j in m.lanes(i).items() if pred(j))

    ballot = run(n, B, lambda v, i: warp.ballot(v), src=src).view(np.uint32)
    active = run(n, B, lambda v, i: warp.active_mask(), src=src, out_dtype=ti.u32)
    half = 0x55555555
    all_ = run(n, B, lambda v, i: warp.all_nonzero(ti.u32(FULL), v), src=src)
    any_ = run(n, B, lambda v, i: warp.any_nonzero(ti.u32(FULL), v), src=src)
    any_half = run(n, B, lambda v, i: warp.any_nonzero(ti.u32(half), v), src=src)
    uni = run(n, B, lambda v, i: warp.unique(ti.u32(FULL), v), src=src)
    for i in range(n):
        b, act = bits(i, lambda j: src[j]), bits(i, lambda j: True)
        assert ballot[i] == b and active[i] == act, (S, i)
        assert all_[i] == int(b == act) and any_[i] == int(b != 0), (S, i)
        assert any_half[i] == int(b & half != 0), (S, i)
        assert uni[i] == int(b == 0 or b == act), (S, i)


def test_match_any_and_match_all(S):
    n, B = 64, 32
    m = Model(n, B, S)
    src = (np.arange(n) % 3).astype(np.int32)
    src[2 * m.W:3 * m.W] = 5  # a warp of equal values (lanes 2W.. exist: n >= 3W for W <= 16)
    got_any = run(n, B, lambda v, i: warp.match_any(ti.u32(FULL), v), src=src,
                  out_dtype=ti.u32)
    got_all = run(n, B, lambda v, i: warp.match_all(ti.u32(FULL), v), src=src,
                  out_dtype=ti.u32)
    for i in range(n):
        same = sum(1 << k for k, j in m.lanes(i).items() if src[j] == src[i])
        act = sum(1 << k for k in m.lanes(i))
        assert got_any[i] == same, (S, i)
        assert got_all[i] == (act if same == act else 0), (S, i)


def test_warp_sync_orders_shared_memory(S):
    """Each lane writes its slot of a block's shared array, warp.sync(), then reads its warp
    neighbour's (lane k ^ 1) slot."""
    n = B = 64
    out = ti.field(ti.i32, n)

    @ti.kernel
    def k():
        ti.loop_config(block_dim=B)
        for i in range(n):
            sh = ti.simt.block.SharedArray((B,), ti.i32)
            sh[i % B] = i * 3
            warp.sync(ti.u32(FULL))
            out[i] = sh[(i % B) ^ 1]

    k()
    np.testing.assert_array_equal(out.to_numpy(), (np.arange(n) ^ 1) * 3)


def test_block_sync_votes_count_the_whole_block():
    n, B = 512, 128
    src = np.zeros(n, np.int32)
    src[[3, 130, 131, 400]] = 1
    src[256:384] = 1  # block 2 all nonzero
    for fn, want in (('sync_count_nonzero', lambda blk: blk.sum()),
                     ('sync_any_nonzero', lambda blk: int(blk.any())),
                     ('sync_all_nonzero', lambda blk: int(blk.all()))):
        op = getattr(ti.simt.block, fn)
        got = run(n, B, lambda v, i: op(v), src=src)
        np.testing.assert_array_equal(got, np.repeat([want(src[s:s + B]) for s in
                                                      range(0, n, B)], B), err_msg=fn)


def test_block_thread_ids():
    n, B = 96, 32
    got = run(n, B, lambda v, i: ti.simt.block.thread_idx() * 1000 +
              ti.simt.block.global_thread_idx())
    np.testing.assert_array_equal(got, (np.arange(n) % B) * 1000 + np.arange(n))


def test_subgroup_scans_shuffles_and_votes(S):
    n, B = 64, 32
    m = Model(n, B, S)
    src = (np.arange(n) % 5 + 1).astype(np.int32)
    sg = ti.simt.subgroup
    inc = run(n, B, lambda v, i: sg.inclusive_add(v), src=src)
    exc = run(n, B, lambda v, i: sg.exclusive_max(v), src=src)
    first = run(n, B, lambda v, i: sg.broadcast_first(v), src=src)
    shuf = run(n, B, lambda v, i: sg.shuffle_xor(v, 1), src=src)
    alleq = run(n, B, lambda v, i: sg.all_equal(v // 8), src=src)
    anyt = run(n, B, lambda v, i: sg.any_true(v == 5), src=src)
    for i in range(n):
        f = m.first(i)
        assert inc[i] == src[f:i + 1].sum() and first[i] == src[f], (S, i)
        assert exc[i] == (src[f:i].max() if i > f else np.iinfo(np.int32).min), (S, i)
        assert shuf[i] == src[f + (m.lane(i) ^ 1)] and alleq[i] == 1, (S, i)
        assert anyt[i] == int((src[f:f + m.W] == 5).any()), (S, i)


def test_missing_subgroup_features_are_clear_errors():
    ti.init(disable_features=['subgroup_shuffle', 'subgroup_ballot'])
    a = ti.field(ti.i32, 32)

    @ti.kernel
    def shfl():
        for i in range(32):
            a[i] = warp.shfl_down_i32(ti.u32(FULL), a[i], 1)

    with pytest.raises(UnsupportedError, match='VK_SUBGROUP_FEATURE_SHUFFLE_BIT'):
        shfl()

    @ti.kernel
    def vote():
        for i in range(32):
            a[i] = warp.ballot(a[i])

    with pytest.raises(UnsupportedError, match='VK_SUBGROUP_FEATURE_BALLOT_BIT'):
        vote()


def test_warp_ops_outside_a_kernel_are_errors():
    with pytest.raises(TypeError, match='inside a kernel'):
        warp.shfl_sync_i32(FULL, 1, 0)
    with pytest.raises(TypeError, match='inside a kernel'):
        warp.active_mask()


def test_simt_modules_import_by_name():
    import importlib
    for name in ('warp', 'block', 'grid', 'subgroup'):
        mod = importlib.import_module(f'vkdiff.lang.simt.{name}')
        assert getattr(ti.simt, name) is mod
    from vkdiff.lang.simt.warp import __all__ as names
    assert all(callable(getattr(warp, x)) for x in names) and len(names) == 15


def test_narrow_subgroups_warn_once(S):
    warp._warned.clear()
    a = ti.field(ti.i32, 32)

    @ti.kernel
    def k():
        for i in range(32):
            a[i] = warp.shfl_down_i32(ti.u32(FULL), a[i], 1) + warp.ballot(1)

    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter('always')
        k()
    hits = [w for w in rec if issubclass(w.category, ti.WarpWidthWarning)]
    assert len(hits) == (1 if S < 32 else 0)
    if hits:
        assert f'{S} lanes' in str(hits[0].message)


def test_global_thread_idx_is_one_invocation_per_iteration():
    n = 300
    x = ti.field(ti.i32, n)

    @ti.kernel
    def k():
        for i in range(n):
            tid = ti.global_thread_idx()
            x[tid] = tid * 2 + (i - tid)  # i == tid: one iteration per invocation

    k()
    np.testing.assert_array_equal(x.to_numpy(), np.arange(n) * 2)
