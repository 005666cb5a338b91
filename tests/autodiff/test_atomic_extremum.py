"""The derivative of ti.atomic_max / ti.atomic_min (autodiff/extremum.py), reverse and forward:
the gradient goes to the contender that won, tied contributions of a launch share it evenly,
the old value of the target gets it only if no contribution equals the final value. Checked
against f64 central differences, forward against reverse, with and without ties."""
import numpy as np
import pytest

import vkdiff as ti


def _program(dt, fn, n=12, m=3, init=None):
    """loss = sum_k w_k * ext_i(g(x_i)) over buckets k = i % m, ext into y seeded with `init`."""
    x = ti.field(dt, shape=n, needs_grad=True, needs_dual=True)
    y = ti.field(dt, shape=m, needs_grad=True, needs_dual=True)
    loss = ti.field(dt, shape=(), needs_grad=True, needs_dual=True)
    w = ti.field(dt, shape=m)
    atomic = ti.atomic_max if fn == 'max' else ti.atomic_min

    @ti.kernel
    def seed(v: dt):
        for k in y:
            y[k] = v

    @ti.kernel
    def reduce():
        for i in x:
            atomic(y[i % m], x[i] * x[i] + 0.5 * x[i])

    @ti.kernel
    def total():
        for k in y:
            loss[None] += w[k] * y[k]

    w.from_numpy(np.arange(1, m + 1, dtype=np.float64) * 0.7)
    big = -1e30 if fn == 'max' else 1e30
    init_v = big if init is None else init

    def forward(X):
        x.from_numpy(X.astype(x.to_numpy().dtype))
        loss[None] = 0
        seed(init_v)
        reduce()
        total()
        return loss[None]

    def grad(X):
        with ti.ad.Tape(loss):
            forward(X)
        return x.grad.to_numpy().astype(np.float64)

    def jvp(X, d):
        loss.dual[None] = 0
        with ti.ad.FwdMode(loss=loss, param=x, seed=list(d)):
            forward(X)
        return float(loss.dual[None])

    return forward, grad, jvp


def _expected(X, fn, m, init=None):
    """The gradient by the documented rule, in numpy."""
    g = X * X + 0.5 * X
    out = np.zeros_like(X)
    for k in range(m):
        idx = np.arange(k, len(X), m)
        best = g[idx].max() if fn == 'max' else g[idx].min()
        if init is not None and (init > best if fn == 'max' else init < best):
            continue  # the old value won
        win = idx[g[idx] == best]
        out[win] = 0.7 * (k + 1) * (2 * X[win] + 0.5) / len(win)
    return out


@pytest.mark.requires('float64')
@pytest.mark.parametrize('fn', ['max', 'min'])
def test_matches_central_differences_without_ties(fn):
    ti.init(default_fp=ti.f64)
    forward, grad, jvp = _program(ti.f64, fn)
    X = np.random.default_rng(3).uniform(-1, 1, 12)
    G = grad(X)
    eps = 1e-6
    fd = np.array([(forward(X + eps * e) - forward(X - eps * e)) / (2 * eps) for e in np.eye(12)])
    np.testing.assert_allclose(G, fd, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(G, _expected(X, fn, 3), rtol=1e-12)
    assert (G == 0).sum() == 12 - 3          # one winner per bucket, the losers get zero
    d = np.random.default_rng(4).standard_normal(12)
    assert jvp(X, d) == pytest.approx(G @ d, rel=1e-12)


@pytest.mark.parametrize('dt', [ti.f32, pytest.param(ti.f64, marks=pytest.mark.requires('float64'))])
@pytest.mark.parametrize('fn', ['max', 'min'])
def test_ties_share_evenly_in_both_modes(dt, fn):
    ti.init(default_fp=dt)
    forward, grad, jvp = _program(dt, fn)
    X = np.array([0.25, -0.5, 0.75, 0.25, 0.5, -0.375, 0.25, 0.5, 0.75, -1.0, 0.0, 0.75])
    G = grad(X)
    np.testing.assert_allclose(G, _expected(X, fn, 3), rtol=1e-6)
    # each bucket has a tie for max or for min or both: bucket 0 g = 0.1875 x3 and 0.5,
    # bucket 1 g = 0, 0.5, 0.5, 0, bucket 2 g = 0.9375 x3 and -0.046875
    d = np.random.default_rng(5).standard_normal(12)
    assert jvp(X, d) == pytest.approx(G @ d, rel=1e-5)
    # the gradient of each bucket's result is kept whole, split among its winners
    per_bucket = [np.sum(G[k::3] / (2 * X[k::3] + 0.5)) for k in range(3)]
    np.testing.assert_allclose(per_bucket, 0.7 * np.arange(1, 4), rtol=1e-6)


@pytest.mark.parametrize('fn', ['max', 'min'])
def test_the_old_value_wins_and_keeps_the_gradient(fn):
    ti.init(default_fp=ti.f32)
    x = ti.field(ti.f32, shape=4, needs_grad=True, needs_dual=True)
    y = ti.field(ti.f32, shape=2, needs_grad=True, needs_dual=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True, needs_dual=True)
    atomic = ti.atomic_max if fn == 'max' else ti.atomic_min
    s = 1.0 if fn == 'max' else -1.0

    @ti.kernel
    def reduce():
        for i in x:
            atomic(y[i // 2], 3.0 * x[i])

    @ti.kernel
    def total():
        for k in y:
            loss[None] += (k + 1.0) * y[k] * y[k]

    X = s * np.array([0.1, 0.4, 0.5, 2.0], np.float32)
    # y[0] starts above (below, for min) both contributions; y[1] ties with 3 * x[2] = 1.5
    Y0 = s * np.array([5.0, 1.5], np.float32)
    x.from_numpy(X)
    y.from_numpy(Y0)
    loss[None] = 0
    with ti.ad.Tape(loss):
        reduce()
        total()
    Y = y.to_numpy()
    np.testing.assert_array_equal(Y, s * np.array([5.0, 6.0], np.float32))
    # y[0]'s old value won: its gradient stays on y (2 * y), none goes to x[0], x[1];
    # y[1]: 3 * x[3] = 6 won alone
    np.testing.assert_allclose(x.grad.to_numpy(), [0, 0, 0, 3 * 2 * 2 * Y[1]], rtol=1e-6)
    np.testing.assert_allclose(y.grad.to_numpy(), [2 * Y[0], 0], rtol=1e-6)
    # a contribution tied with the old value beats it
    X2 = s * np.array([0.1, 0.4, 0.5, 0.3], np.float32)   # y[1]: 1.5 (old) vs 1.5, 0.9
    x.from_numpy(X2)
    y.from_numpy(Y0)
    loss[None] = 0
    with ti.ad.Tape(loss):
        reduce()
        total()
    np.testing.assert_allclose(x.grad.to_numpy(), [0, 0, 3 * 2 * 2 * 1.5 * s, 0], rtol=1e-6)
    np.testing.assert_allclose(y.grad.to_numpy(), [2 * Y0[0], 0], rtol=1e-6)
    # forward mode: the tangent of the old value is kept where it won
    x.from_numpy(X)
    y.from_numpy(Y0)
    with ti.ad.FwdMode(loss=y, param=x, seed=[1.0, 1.0, 1.0, 1.0]):
        reduce()
    np.testing.assert_allclose(y.dual.to_numpy(), [0, 3], rtol=1e-6)


def test_several_launches_into_one_target_and_vector_components():
    """diff_sph's pattern: one launch per time step, each an atomic max into the same target,
    which a later kernel reads; the target a component of a vector field."""
    ti.init(default_fp=ti.f32)
    p = ti.Vector.field(2, ti.f32, shape=(3, 5), needs_grad=True)
    top = ti.Vector.field(2, ti.f32, shape=(), needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def step(t: ti.i32):
        for i in range(5):
            ti.atomic_max(top[None][0], p[t, i][0] * 2.0)
            ti.atomic_max(top[None][1], p[t, i][1] * p[t, i][1])

    @ti.kernel
    def total():
        loss[None] = top[None][0] * 3.0 + top[None][1] * 5.0

    P = np.random.default_rng(7).uniform(0, 1, (3, 5, 2)).astype(np.float32)
    P[2, 1, 0] = P[0, 3, 0] = 2.0        # the max of component 0, reached at t = 0 and t = 2
    p.from_numpy(P)
    top.from_numpy(np.zeros(2, np.float32))
    with ti.ad.Tape(loss):
        for t in range(3):
            step(t)
        total()
    want = np.zeros_like(P)
    want[2, 1, 0] = 6.0                  # the latest launch that reached the max wins
    t1, i1 = np.unravel_index(np.argmax(P[:, :, 1]), (3, 5))
    want[t1, i1, 1] = 5.0 * 2 * P[t1, i1, 1]
    np.testing.assert_allclose(p.grad.to_numpy(), want, rtol=1e-6)


def _max_and_min_into_one_field():   # (reverse mode: access rule 2 refuses it first)
    x = ti.field(ti.f32, shape=4, needs_dual=True)
    y = ti.field(ti.f32, shape=(), needs_dual=True)

    @ti.kernel
    def k():
        for i in x:
            ti.atomic_max(y[None], x[i])
            ti.atomic_min(y[None], x[i] * 2)
    with ti.ad.FwdMode(loss=y, param=x, seed=[1.0] * 4):
        k()


def _read_in_the_same_loop():
    x = ti.field(ti.f32, shape=4, needs_grad=True)
    y = ti.field(ti.f32, shape=(), needs_grad=True)
    z = ti.field(ti.f32, shape=4, needs_grad=True)

    @ti.kernel
    def k():
        for i in x:
            ti.atomic_max(y[None], x[i])
            z[i] = y[None]
    k()
    k.grad()


def _written_by_a_later_loop():
    x = ti.field(ti.f32, shape=4, needs_grad=True)
    y = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def k():
        for i in x:
            ti.atomic_max(y[None], x[i])
        for i in range(1):
            y[None] = 0.0
    k()
    k.grad()


def _forward_max_into_two_loops():
    x = ti.field(ti.f32, shape=4, needs_dual=True)
    y = ti.field(ti.f32, shape=(), needs_dual=True)

    @ti.kernel
    def k():
        for i in x:
            ti.atomic_max(y[None], x[i])
        for i in x:
            ti.atomic_max(y[None], x[i] * 2)
    with ti.ad.FwdMode(loss=y, param=x, seed=[1.0] * 4):
        k()


@pytest.mark.parametrize('case', [_max_and_min_into_one_field, _read_in_the_same_loop,
                                  _written_by_a_later_loop, _forward_max_into_two_loops],
                         ids=lambda c: c.__name__.strip('_'))
def test_what_cannot_be_done_right_is_refused(case):
    ti.init(default_fp=ti.f32)
    with pytest.raises(ti.AutodiffError, match='atomic (max|min) into y.*cannot be differentiated'):
        case()


def test_tape_refuses_a_later_accumulation_into_a_max_target():
    """The adjoint of an atomic max reads the value it left: a later launch adding to it would
    make the gradient silently wrong, so the Tape refuses it; a later max (diff_sph's one launch
    per step) and a later plain store are fine."""
    ti.init(default_fp=ti.f32)
    x = ti.field(ti.f32, shape=4, needs_grad=True)
    y = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def take_max():
        for i in x:
            ti.atomic_max(y[None], x[i])

    @ti.kernel
    def add_one():
        y[None] += 1.0

    @ti.kernel
    def reset():
        y[None] = 0.0

    x.from_numpy(np.array([0.5, 2.0, 1.0, -1.0], np.float32))
    y[None] = -10.0
    with pytest.raises(ti.AutodiffError, match='changes y.*atomic max'):
        with ti.ad.Tape(y):
            take_max()
            add_one()
    y[None] = -10.0
    with ti.ad.Tape(y):
        take_max()
        take_max()
    np.testing.assert_array_equal(x.grad.to_numpy(), [0, 1, 0, 0])
    with ti.ad.Tape(y):
        take_max()
        reset()
    np.testing.assert_array_equal(x.grad.to_numpy(), [0, 0, 0, 0])
