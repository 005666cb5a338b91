"""The accumulation (reduction) pass under both launch geometries: the CPU-driver one used on
lavapipe, and the GPU one (grid-stride for uniform targets, 1024 reduction workgroups), forced
here so that it is tested without a GPU."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.launch import compiled

from shared_programs import gravity, gravity_expected


@pytest.fixture(params=['cpu', 'gpu'])
def geometry(request, monkeypatch):
    if request.param == 'gpu':
        monkeypatch.setattr(compiled, '_is_cpu_driver', lambda rt: False)
    ti.init()
    return request.param


def test_gravity_energy_and_gradient(geometry):
    N = 300
    x, U, compute_U = gravity(N)
    xs = np.random.default_rng(0).random((N, 2)).astype(np.float32)
    x.from_numpy(xs)
    with ti.Tape(U):
        compute_U()
    want, g = gravity_expected(xs)
    assert U[None] == pytest.approx(want, rel=1e-6)
    np.testing.assert_allclose(x.grad.to_numpy(), g, rtol=1e-4, atol=1e-5 * np.abs(g).max())


def test_histogram_and_sums(geometry):
    n = 100_003
    v = ti.field(ti.i32, shape=n)
    hist = ti.field(ti.i32, shape=16)
    total = ti.field(ti.f32, shape=())
    neg = ti.field(ti.i32, shape=())

    @ti.kernel
    def k():
        for i in v:
            hist[v[i] % 16] += 1
            total[None] += v[i] * 0.5
            neg[None] -= 1

    a = np.random.default_rng(1).integers(0, 1000, n).astype(np.int32)
    v.from_numpy(a)
    k()
    np.testing.assert_array_equal(hist.to_numpy(), np.bincount(a % 16, minlength=16))
    assert total[None] == pytest.approx(a.sum() * 0.5, rel=1e-7)
    assert neg[None] == -n


@pytest.mark.parametrize('subgroups', [True, False])
@pytest.mark.parametrize('n', [1, 32, 1000])
def test_many_contended_sums_in_one_loop(geometry, subgroups, n):
    """Dozens of contended targets in one loop (an adjoint's input gradients: the robot's nn1
    adds into every x.grad[t, j]): their workgroup sums are made in batches sharing barriers,
    more sums than one batch holds, in f32, f64 and integer accumulators, with and without
    subgroup arithmetic; each sum exact against numpy."""
    ti.init(default_fp=ti.f32, **({} if subgroups else
                                  {'disable_features': ['subgroup_arithmetic']}))
    K = 40
    w = ti.field(ti.f32, shape=(n, K))
    s = ti.field(ti.f32, shape=K)
    d = ti.field(ti.f64, shape=(K // 2,))
    c = ti.field(ti.i32, shape=3)

    @ti.kernel
    def k():
        for i in range(n):
            for j in ti.static(range(K)):
                s[j] += w[i, j]
            for j in ti.static(range(K // 2)):
                d[j] += ti.f64(w[i, j]) * 2.0
            for j in ti.static(range(3)):
                c[j] += i % (j + 2)

    rng = np.random.default_rng(n)
    ws = rng.integers(-50, 50, size=(n, K)).astype(np.float32) / 8  # exact in f32 sums
    w.from_numpy(ws)
    k()
    np.testing.assert_array_equal(s.to_numpy(), ws.sum(0))
    np.testing.assert_array_equal(d.to_numpy(), 2.0 * ws[:, :K // 2].astype(np.float64).sum(0))
    np.testing.assert_array_equal(c.to_numpy(), [sum(i % (j + 2) for i in range(n))
                                                 for j in range(3)])


def test_no_run_length_code_where_the_index_changes_every_iteration(geometry):
    """`w.grad[i, k] += ...` and loads `w[i, k]` at the top level of a loop over i: the index
    differs in every iteration, so the pass adds no run-length accumulation and no load cache
    (each costs a test and a branch per iteration); `g[i] += ...` inside a serial loop over j
    keeps its run-length accumulation (one store per i, not an atomic per (i, j)), in order from
    g[i]'s value: only iteration i touches g[i], and Taichi adds in order, with f32 rounding at
    every step (tests/pipeline/test_serial_accumulation.py). Values checked."""
    n, m = 300, 4
    w = ti.field(ti.f32, shape=(n, m))
    acc = ti.field(ti.f32, shape=(n, m))
    g = ti.field(ti.f32, shape=n)
    total = ti.field(ti.f32, shape=())

    @ti.kernel
    def fresh():
        for i in range(n):
            for k in ti.static(range(m)):
                acc[i, k] += w[i, k] * 2.0
            total[None] += w[i, 0]

    @ti.kernel
    def repeated():
        for i in range(n):
            for j in range(m):
                g[i] += w[i, j]

    ws = np.random.default_rng(3).random((n, m)).astype(np.float32)
    w.from_numpy(ws)
    fresh()
    repeated()
    np.testing.assert_array_equal(acc.to_numpy(), ws * 2)
    seq = np.zeros(n, np.float32)
    for j in range(m):
        seq = seq + ws[:, j]
    np.testing.assert_array_equal(g.to_numpy(), seq)
    assert total[None] == pytest.approx(ws[:, 0].sum(dtype=np.float64), rel=1e-6)
    body = fresh.ir(after='reductions').split('parfor')[1].split('wg_sum')[0]
    assert ' if(' not in body and body.count('gload(') == m + 1
    assert body.count('atomic(') == m  # acc's adds, direct (total's is a workgroup sum)
    ir_text = repeated.ir(after='reductions').split('parfor')[1]
    assert ' if(' in ir_text and 'atomic(' not in ir_text
