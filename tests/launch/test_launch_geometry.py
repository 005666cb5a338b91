"""Launch geometry follows the trip count (launch.compiled.CompiledTask.groups): reductions launch
as many workgroups as their loop needs (one for a short loop, which then applies its sum without
the finishing dispatch), and loops bounded by a field read at run time launch a grid that fits
the bound. Every geometry path must give the same results; the VKDIFF_* overrides force each
(VKDIFF_GEOMETRY=gpu runs the GPU geometry on a CPU driver)."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.lang import state
from vkdiff.passes import loop_limit

from shared_programs import TimeSteps

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


def _run_time_bound(m=100000, dtype=ti.f32):
    """num[None], a loop bound the kernels under test read; v, m elements of dtype they write;
    set_num(k), a kernel setting the bound (so the host does not know it)."""
    num = ti.field(ti.i32, shape=())
    v = ti.field(dtype, shape=m)

    @ti.kernel
    def set_num(k: ti.i32):
        num[None] = k

    return num, v, set_num


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
    prog = TimeSteps(11, 6)
    l0, g = prog.run(0.3)
    eps = 1e-6
    fd = (prog.run(0.3 + eps)[0] - prog.run(0.3 - eps)[0]) / (2 * eps)
    assert g == pytest.approx(fd, rel=1e-6)
    assert l0 == pytest.approx(prog.expected(0.3)[0], rel=1e-12)


@pytest.mark.parametrize('written_by', ['host', 'kernel'])
def test_run_time_bound_from_a_field(geometry, written_by):
    """`n = num[None]; for i in range(n)`: bounds 0, 1, 3 and large, set from Python (the host
    knows them at launch) or by a kernel (it does not)."""
    m = 50000
    num, v, set_num = _run_time_bound(m, ti.i32)
    s = ti.field(ti.i64, shape=())

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
    num, v, _ = _run_time_bound()

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
    num, v, set_num = _run_time_bound()

    @ti.kernel
    def bump():
        for i in range(num[None]):
            v[i] = v[i] + 1.0

    set_num(100000)
    groups = record_groups(monkeypatch)
    bump()
    assert groups == [4]
    assert v.to_numpy().sum() == 100000


@pytest.mark.parametrize('subgroups', [True, False])
def test_known_short_loops_run_in_a_fitted_workgroup(subgroups):
    """A loop whose trip count is known at compile time and below 128 runs in one workgroup of
    the power of two that fits it (compiler.fitted_local_size; lavapipe runs idle invocations
    too): elementwise results, contended sums (subgroup or shared-memory tree) and the adjoint
    stay exact for every size around the powers of two."""
    ti.init(**({} if subgroups else {'disable_features': ['subgroup_arithmetic']}))
    x = ti.field(ti.f64, shape=200, needs_grad=True)
    y = ti.field(ti.f64, shape=200, needs_grad=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True)
    xs = np.linspace(-1.0, 2.0, 200)
    for n in (1, 2, 3, 7, 8, 9, 17, 32, 100, 127, 128, 129, 200):
        @ti.kernel
        def k():
            for i in range(n):
                y[i] = x[i] * 3.0
                loss[None] += x[i] * x[i]

        x.from_numpy(xs)
        y.fill(0.0)
        loss[None] = 0.0
        k()
        inst, _ = k.instance(())
        assert inst.ctasks[0].local_size == min(128, 1 << (n - 1).bit_length()), n
        # one workgroup for sure: it applies its sum itself (no partials, no finishing task)
        assert len(inst.ctasks) == (1 if n <= 128 else 2), n
        np.testing.assert_array_equal(y.to_numpy()[:n], xs[:n] * 3.0)
        assert loss[None] == pytest.approx((xs[:n] ** 2).sum(), rel=1e-14), n
        x.grad.fill(0.0)
        loss.grad[None] = 1.0
        k.grad()
        np.testing.assert_allclose(x.grad.to_numpy()[:n], 2 * xs[:n], rtol=1e-14)
        assert not x.grad.to_numpy()[n:].any()


def test_run_time_bound_unknown_with_long_inner_loops_is_computed_on_the_device(monkeypatch):
    """mass_spring_game's substep: `n = num[None]` written by a kernel, `for i in range(n)` with
    an inner `for j in range(n)` (a run-time trip count: one outer iteration per invocation, so
    the small grid-stride grid is unusable). The CPU driver runs a one-invocation geometry task
    and the loop as an indirect dispatch (passes/geometry.py), where it read the bound back (a
    sync) before, and the maximum grid (65,535 workgroups: 0.9 s for 3 particles) before that."""
    monkeypatch.setenv('VKDIFF_GEOMETRY', 'cpu')
    if not state.runtime().can_indirect:
        pytest.skip('the native module predates Batch.dispatch_indirect: rebuild it')
    num, v, set_num = _run_time_bound()

    @ti.kernel
    def pairs():
        n = num[None]
        for i in range(n):
            for j in range(n):
                v[i] += 1.0

    rt = state.runtime()
    # one iteration per invocation where the driver has a loop limiter (lavapipe: passes/
    # loop_limit); without one (SwiftShader) the loop stays grid-stride: a small direct grid
    one_each = all(ct.per_thread == 1 for ct in pairs.instance(())[0].ctasks)
    assert one_each or not loop_limit.has_limiter(rt.name)
    for n in (3, 300):
        v.fill(0)
        set_num(n)
        groups = record_groups(monkeypatch)
        indirect = []
        monkeypatch.setattr(rt, 'flush', lambda: indirect.append('sync'))
        orig = rt.dispatch_indirect
        monkeypatch.setattr(rt, 'dispatch_indirect', lambda *a: indirect.append(orig(*a)))
        pairs()
        if one_each:
            assert groups == [1] and indirect == [None]  # the geometry task, then the loop
        else:
            assert len(groups) == 1 and groups[0] <= 64 and indirect == []
        monkeypatch.undo()
        out = v.to_numpy()
        assert (out[:n] == n).all() and not out[n:].any()
