"""Launch geometry follows the trip count (lang.compiled.CompiledTask.groups): reductions launch
as many workgroups as their loop needs (one for a short loop, which then applies its sum without
the finishing dispatch), and loops bounded by a field read at run time launch a grid that fits
the bound. Every geometry path must give the same results; the VKDIFF_* overrides force each
(VKDIFF_GEOMETRY=gpu runs the GPU geometry on a CPU driver)."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.lang import state

GEOMETRIES = {
    'default': {},
    'gpu': {'VKDIFF_GEOMETRY': 'gpu'},
    'one_group_per_core': {'VKDIFF_MIN_GROUPS': '1'},
    'one_iteration_per_thread': {'VKDIFF_ITERS_PER_THREAD': '1', 'VKDIFF_MIN_GROUPS': '1'},
    'three_reduction_groups': {'VKDIFF_REDUCTION_GROUPS': '3', 'VKDIFF_ITERS_PER_THREAD': '1'},
    'one_reduction_group': {'VKDIFF_REDUCTION_GROUPS': '1'},
    'max_groups_2': {'VKDIFF_MAX_GROUPS': '2', 'VKDIFF_GEOMETRY': 'gpu'},
}


@pytest.fixture(params=sorted(GEOMETRIES))
def geometry(request, monkeypatch):
    for k, v in GEOMETRIES[request.param].items():
        monkeypatch.setenv(k, v)
    return request.param


def record_groups(monkeypatch):
    """Every dispatch's workgroup count, in launch order."""
    rt = state.runtime()
    seen = []
    orig = rt.dispatch

    def dispatch(algo, groups, *a):
        seen.append(groups)
        return orig(algo, groups, *a)
    monkeypatch.setattr(rt, 'dispatch', dispatch)
    return seen


def test_reduction_sums_for_every_trip_count(geometry):
    """Trip counts from 0 to many workgroups, then fewer again: a launch with fewer workgroups
    than the one before must not add the earlier launch's per-workgroup partial sums."""
    x = ti.field(ti.f32, shape=70000)
    s = ti.field(ti.f32, shape=())
    c = ti.field(ti.i32, shape=())
    d = ti.field(ti.f32, shape=())

    @ti.kernel
    def total(n: ti.i32):
        for i in range(n):
            s[None] += x[i]
            c[None] += 1        # a second accumulator type: slots at another base
            d[None] -= 2 * x[i]  # a second f32 accumulator: slots after the first's

    xs = np.random.default_rng(1).integers(0, 100, 70000).astype(np.float32)
    x.from_numpy(xs)
    for n in (70000, 0, 1, 11, 128, 129, 1000, 70000, 300, 5, 40000):
        s[None], c[None], d[None] = 0.0, 0, 0.0
        total(n)
        assert s[None] == xs[:n].sum(dtype=np.float64), n
        assert c[None] == n
        assert d[None] == -2 * xs[:n].sum(dtype=np.float64), n


def test_short_reduction_is_one_workgroup_and_one_dispatch(monkeypatch):
    x = ti.field(ti.f32, shape=32, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def energy():
        for i in range(32):
            loss[None] += x[i] * x[i]

    x.from_numpy(np.arange(32, dtype=np.float32))
    energy()
    groups = record_groups(monkeypatch)
    loss[None] = 0.0
    energy()
    assert groups == [1]  # was 64 workgroups, then a second dispatch adding 64 partial sums
    assert loss[None] == float((np.arange(32.0) ** 2).sum())
    loss.grad[None] = 1.0
    energy.grad()
    np.testing.assert_array_equal(x.grad.to_numpy(), 2 * np.arange(32, dtype=np.float32))


def test_adjoint_of_small_kernels_on_a_tape(geometry):
    """The adjoints of small per-time-step kernels accumulate into shared gradients."""
    n, steps = 11, 6
    pos = ti.field(ti.f64, shape=(steps + 1, n), needs_grad=True)
    w = ti.field(ti.f64, shape=(), needs_grad=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def step(t: ti.i32):
        for i in range(n):
            pos[t + 1, i] = pos[t, i] + w[None] * ti.sin(pos[t, i])

    @ti.kernel
    def compute_loss():
        for i in range(n):
            loss[None] += pos[steps, i] ** 2

    p0 = np.linspace(0.1, 1.0, n)

    def run(wv):
        pos.from_numpy(np.concatenate([p0[None], np.zeros((steps, n))]))
        w[None] = wv
        loss[None] = 0.0
        with ti.Tape(loss):
            for t in range(steps):
                step(t)
            compute_loss()
        return loss[None], w.grad[None]

    l0, g = run(0.3)
    eps = 1e-6
    fd = (run(0.3 + eps)[0] - run(0.3 - eps)[0]) / (2 * eps)
    assert g == pytest.approx(fd, rel=1e-6)
    p = p0.copy()
    for _ in range(steps):
        p = p + 0.3 * np.sin(p)
    assert l0 == pytest.approx((p ** 2).sum(), rel=1e-12)


@pytest.mark.parametrize('written_by', ['host', 'kernel'])
def test_run_time_bound_from_a_field(geometry, written_by):
    """`n = num[None]; for i in range(n)`: bounds 0, 1, 3 and large, set from Python (the host
    knows them at launch) or by a kernel (it does not)."""
    m = 50000
    num = ti.field(ti.i32, shape=())
    v = ti.field(ti.i32, shape=m)
    s = ti.field(ti.i64, shape=())

    @ti.kernel
    def set_num(k: ti.i32):
        num[None] = k

    @ti.kernel
    def bump():
        n = num[None]
        for i in range(n):
            v[i] = v[i] + i + 1

    @ti.kernel
    def count():
        for i in range(num[None] * 2):
            s[None] += 1

    expect = np.zeros(m, np.int64)
    for n in (0, 1, 3, m, 7, 130):
        if written_by == 'host':
            num[None] = n
        else:
            set_num(n)
        bump()
        s[None] = 0
        count()
        expect[:n] += np.arange(1, n + 1)
        np.testing.assert_array_equal(v.to_numpy(), expect)
        assert s[None] == 2 * n


def test_run_time_bound_known_on_the_host_fits_the_grid(monkeypatch):
    num = ti.field(ti.i32, shape=())
    v = ti.field(ti.f32, shape=100000)

    @ti.kernel
    def bump():
        n = num[None]
        for i in range(n):
            v[i] = v[i] + 1.0

    num[None] = 3
    bump()
    groups = record_groups(monkeypatch)
    bump()
    num[None] = 100000
    bump()
    assert groups[0] == 1  # was 65,535 workgroups: 1.2 s per frame for 3 particles
    assert 1 < groups[1] <= -(-100000 // 128)
    np.testing.assert_array_equal(v.to_numpy()[:4], [3, 3, 3, 1])


def test_run_time_bound_unknown_on_the_host_is_a_small_grid_on_a_cpu_driver(monkeypatch):
    monkeypatch.setenv('VKDIFF_GEOMETRY', 'cpu')
    monkeypatch.setenv('VKDIFF_MIN_GROUPS', '4')
    num = ti.field(ti.i32, shape=())
    v = ti.field(ti.f32, shape=100000)

    @ti.kernel
    def set_num(k: ti.i32):
        num[None] = k

    @ti.kernel
    def bump():
        for i in range(num[None]):
            v[i] = v[i] + 1.0

    set_num(100000)
    groups = record_groups(monkeypatch)
    bump()
    assert groups == [4]
    assert v.to_numpy().sum() == 100000


def test_run_time_bound_unknown_with_long_inner_loops_reads_the_bound(monkeypatch):
    """mass_spring_game's substep: `n = num[None]` written by a kernel, `for i in range(n)` with
    an inner `for j in range(n)` (a run-time trip count: one outer iteration per invocation, so
    the small grid-stride grid is unusable). The CPU driver reads the bound back (one sync)
    instead of launching the maximum grid (65,535 workgroups: 0.9 s for 3 particles)."""
    monkeypatch.setenv('VKDIFF_GEOMETRY', 'cpu')
    num = ti.field(ti.i32, shape=())
    v = ti.field(ti.f32, shape=100000)

    @ti.kernel
    def set_num(k: ti.i32):
        num[None] = k

    @ti.kernel
    def pairs():
        n = num[None]
        for i in range(n):
            for j in range(n):
                v[i] += 1.0

    for n, want_groups in ((3, 1), (300, 3)):
        v.fill(0)
        set_num(n)
        groups = record_groups(monkeypatch)
        pairs()
        assert groups == [want_groups]
        out = v.to_numpy()
        assert (out[:n] == n).all() and not out[n:].any()
