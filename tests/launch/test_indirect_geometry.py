"""Run-time loop bounds the host does not know (`for i in range(num[None])` with num written by a
kernel in the same batch) launch with a geometry the device computes: a geometry task
(passes/geometry.py) writes the workgroup count, then the task is an indirect dispatch
(launch/compiled.py, runtime Batch.dispatch_indirect). On GPUs (VKDIFF_GEOMETRY=gpu forces that
geometry on lavapipe) it replaces the largest grid; on a CPU driver (VKDIFF_GEOMETRY=cpu) the
read-back of the bound for tasks that run one iteration per invocation. Values vs numpy, the
adjoint vs finite differences, and that the indirect path ran (not a silent fallback)."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.lang import state
from vkdiff.passes import loop_limit

BOUNDS = (0, 1, 127, 128, 129, 10 ** 6)


@pytest.fixture(autouse=True)
def native_with_indirect():
    if not state.runtime().can_indirect:
        pytest.skip('the native module predates Batch.dispatch_indirect: rebuild it')


@pytest.fixture(params=['gpu', 'cpu'])
def geometry(request, monkeypatch):
    monkeypatch.setenv('VKDIFF_GEOMETRY', request.param)
    return request.param


def record(monkeypatch):
    """Counts of direct and indirect dispatches and of syncs, from now on."""
    rt = state.runtime()
    seen = {'direct': [], 'indirect': 0, 'syncs': 0}
    dispatch, indirect, flush = rt.dispatch, rt.dispatch_indirect, rt.flush

    def d(algo, groups, *a):
        seen['direct'].append(groups)
        return dispatch(algo, groups, *a)

    def i(*a):
        seen['indirect'] += 1
        return indirect(*a)

    def f():
        seen['syncs'] += 1
        return flush()
    monkeypatch.setattr(rt, 'dispatch', d)
    monkeypatch.setattr(rt, 'dispatch_indirect', i)
    monkeypatch.setattr(rt, 'flush', f)
    return seen


def test_bounds_written_by_a_kernel_in_the_same_batch(geometry, monkeypatch):
    """Elementwise loops (one outer iteration per invocation on the GPU geometry) and loops
    with a run-time inner loop (one per invocation on a CPU driver too): exact values for every
    bound, no sync between the launches, and the indirect dispatch where the geometry calls for
    one."""
    m = max(BOUNDS)
    num = ti.field(ti.i32, shape=())
    inner = ti.field(ti.i32, shape=())
    a = ti.field(ti.f32, shape=m)
    b = ti.field(ti.i32, shape=m)

    @ti.kernel
    def set_bounds(n: ti.i32, k: ti.i32):
        num[None] = n
        inner[None] = k

    @ti.kernel
    def elementwise():
        n = num[None]
        for i in range(n):
            a[i] = a[i] * 2.0 + ti.cast(i % 7, ti.f32)

    @ti.kernel
    def nested():
        for i in range(num[None]):
            for j in range(inner[None]):
                b[i] += j + 1

    a_np = np.random.default_rng(0).uniform(-1, 1, m).astype(np.float32)
    a.from_numpy(a_np)
    b_np = np.zeros(m, np.int64)
    set_bounds(0, 2)
    elementwise()
    nested()
    ti.sync()
    seen = record(monkeypatch)
    for n in BOUNDS:
        set_bounds(n, 2)
        elementwise()
        nested()
        a_np[:n] = a_np[:n] * np.float32(2.0) + (np.arange(n) % 7).astype(np.float32)
        b_np[:n] += 3
    assert seen['syncs'] == 0  # no read-back of the bound
    # GPU geometry: both loops. CPU driver: the tasks that run one iteration per invocation (the
    # nested one on lavapipe, whose loop limiter makes long inner loops run one iteration each:
    # passes/loop_limit; a driver without a limiter, SwiftShader, walks it grid-stride too); a
    # grid-stride task has a small grid whatever the bound
    one_each = sum(ct.per_thread == 1 for k in (elementwise, nested)
                   for ct in k.instance(())[0].ctasks if ct.total is not None)
    if geometry == 'cpu' and loop_limit.has_limiter(state.runtime().name):
        assert one_each == 1
    assert seen['indirect'] == len(BOUNDS) * (2 if geometry == 'gpu' else one_each)
    assert max(seen['direct']) <= 64  # never the largest grid
    np.testing.assert_array_equal(a.to_numpy(), a_np)
    np.testing.assert_array_equal(b.to_numpy(), b_np)


def test_reduction_over_a_run_time_bound(geometry, monkeypatch):
    """A sum over range(num[None]): launched indirectly it has at least two workgroups, so its
    finishing task (which the launcher cannot skip without knowing the count) adds partials the
    launch just wrote, never stale ones of an earlier launch with more workgroups."""
    m = max(BOUNDS)
    num = ti.field(ti.i32, shape=())
    x = ti.field(ti.f32, shape=m)
    s = ti.field(ti.f32, shape=())
    c = ti.field(ti.i32, shape=())

    @ti.kernel
    def set_num(n: ti.i32):
        num[None] = n

    @ti.kernel
    def total():
        for i in range(num[None]):
            s[None] += x[i]
            c[None] += 1

    xs = np.random.default_rng(1).integers(0, 16, m).astype(np.float32)
    x.from_numpy(xs)
    seen = record(monkeypatch)
    for n in (10 ** 6, 0, 1, 5, 129, 10 ** 6, 3):
        s[None], c[None] = 0.0, 0
        set_num(n)
        total()
        assert s[None] == xs[:n].sum(dtype=np.float64), n
        assert c[None] == n
    if geometry == 'gpu':
        assert seen['indirect'] == 7


def test_adjoint_of_a_run_time_bound_vs_finite_differences(geometry, monkeypatch):
    """loss = sum over i < num of sin(x_i) * x_i * w, num set by a kernel on the Tape: the
    adjoint kernels' loops have the same run-time bound (launched indirectly too)."""
    m = 300
    num = ti.field(ti.i32, shape=())
    x = ti.field(ti.f64, shape=m, needs_grad=True)
    y = ti.field(ti.f64, shape=m, needs_grad=True)
    w = ti.field(ti.f64, shape=(), needs_grad=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def set_num(n: ti.i32):
        num[None] = n

    @ti.kernel
    def forward():
        for i in range(num[None]):
            y[i] = ti.sin(x[i]) * x[i] * w[None]

    @ti.kernel
    def reduce():
        for i in range(num[None]):
            loss[None] += y[i] * y[i]

    xs = np.linspace(-2.0, 3.0, m)
    x.from_numpy(xs)

    def run(wv, n):
        w[None] = wv
        loss[None] = 0.0
        with ti.ad.Tape(loss):
            set_num(n)
            forward()
            reduce()
        return loss[None], w.grad[None], x.grad.to_numpy()

    for n in (0, 1, 129, 257):
        seen = record(monkeypatch)
        l0, gw, gx = run(0.7, n)
        if geometry == 'gpu':
            assert seen['indirect'] == 4  # forward, reduce and their adjoints
        f = np.sin(xs[:n]) * xs[:n]
        assert l0 == pytest.approx(((f * 0.7) ** 2).sum(), rel=1e-12)
        eps = 1e-6
        fd = (run(0.7 + eps, n)[0] - run(0.7 - eps, n)[0]) / (2 * eps)
        assert gw == pytest.approx(fd, rel=1e-7, abs=1e-9)
        dfdx = np.cos(xs[:n]) * xs[:n] + np.sin(xs[:n])
        np.testing.assert_allclose(gx[:n], 2 * f * 0.49 * dfdx, rtol=1e-12, atol=1e-14)
        assert not gx[n:].any()
        monkeypatch.undo()
        monkeypatch.setenv('VKDIFF_GEOMETRY', geometry)


def test_indirect_off_falls_back(monkeypatch):
    """VKDIFF_INDIRECT=0: a CPU driver reads the bound back (one sync), the GPU geometry
    launches the largest grid; same values."""
    monkeypatch.setenv('VKDIFF_INDIRECT', '0')
    monkeypatch.setenv('VKDIFF_GEOMETRY', 'gpu')
    monkeypatch.setenv('VKDIFF_MAX_GROUPS', '40')
    num = ti.field(ti.i32, shape=())
    v = ti.field(ti.i32, shape=10000)

    @ti.kernel
    def set_num(n: ti.i32):
        num[None] = n

    @ti.kernel
    def bump():
        for i in range(num[None]):
            v[i] += 1

    set_num(5)
    seen = record(monkeypatch)
    bump()
    assert seen['indirect'] == 0 and seen['direct'] == [40]
    assert v.to_numpy().sum() == 5
