"""Values computed inside kernels match numpy / Taichi's documented semantics (issue 9, items 5-11):
ti.func return casts, 64-bit random integers, loops longer than a driver's loop limiter, division
by a zero the compiler can see, full-range f64 trigonometry, driver-inaccurate f32 ops, integer
division by zero."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.lang import state


def test_func_return_casts_to_declared_type():
    @ti.func
    def bar(a: ti.f32) -> ti.i32:
        return a

    @ti.func
    def branchy(a: ti.f32) -> ti.i32:
        if a > 0:
            return a * 2.0
        return a

    @ti.kernel
    def foo(a: ti.f32) -> ti.f32:
        return bar(a) + branchy(a)

    assert foo(1.5) == 1.0 + 3.0
    assert foo(-2.7) == -2.0 + -2.0


@pytest.mark.requires('int64')
def test_random_i64_uses_all_64_bits():
    n = 1 << 14
    hi = ti.field(ti.i64, shape=n)

    @ti.kernel
    def fill():
        for i in range(n):
            hi[i] = ti.random(ti.i64)

    fill()
    v = hi.to_numpy()
    top = (v.view(np.uint64) >> np.uint64(32)).astype(np.float64)
    # the upper halves are uniform over [0, 2^32): mean 2^31, and both signs occur
    assert abs(top.mean() / 2.0 ** 32 - 0.5) < 0.02
    assert (v < 0).mean() == pytest.approx(0.5, abs=0.02)
    assert len(np.unique(v)) == n


# ---------------------------------------------------------------- item 5: long loops
def _lavapipe():
    return state.runtime().driver_id == 'mesa-llvmpipe'


@pytest.mark.parametrize('shape', ['flat', 'nested', 'sequential', 'serialize'])
def test_long_inner_loops_give_the_full_result(shape):
    s = ti.field(ti.i32, shape=4)

    @ti.kernel
    def flat():
        for i in range(4):
            acc = 0
            for j in range(100000):
                acc += 1
            s[i] = acc

    @ti.kernel
    def nested():
        for i in range(4):
            acc = 0
            for j in range(400):
                for k in range(250):
                    acc += 1
            s[i] = acc

    @ti.kernel
    def sequential():
        for i in range(4):
            acc = 0
            for j in range(60000):
                acc += 1
            for j in range(40000):
                acc += j % 2
            s[i] = acc

    @ti.kernel
    def serialize():
        ti.loop_config(serialize=True)
        for i in range(100000):
            s[i % 4] += 1

    {'flat': flat, 'nested': nested, 'sequential': sequential, 'serialize': serialize}[shape]()
    want = {'flat': 100000, 'nested': 100000, 'sequential': 80000, 'serialize': 25000}[shape]
    assert s.to_numpy().tolist() == [want] * 4


def test_taichi_large_for_loops_with_gradient():
    x = ti.field(ti.f32, shape=(), needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def big():
        for i in range(5):
            for j in range(2000):
                for k in range(1000):
                    loss[None] += ti.sin(x[None]) + 1.0

    with ti.ad.Tape(loss=loss):
        big()
    assert loss[None] == 1e7
    assert x.grad[None] == 1e7


def test_run_time_bound_loop_full_result():
    s = ti.field(ti.f32, shape=2)

    @ti.kernel
    def run(n: ti.i32):
        for i in range(2):
            acc = 0.0
            for j in range(n):
                acc += 1.0
            s[i] = acc

    run(300000)
    assert s.to_numpy().tolist() == [300000.0, 300000.0]


def test_while_loop_past_the_limit_is_an_error_not_a_truncated_result():
    s = ti.field(ti.i32, shape=())

    @ti.kernel
    def count(n: ti.i32):
        for _ in range(1):
            k = 0
            while k < n:
                k += 1
            s[None] = k

    count(1000)
    assert s[None] == 1000
    n = 1 << 26
    try:
        count(n)
        v = s[None]
    except ti.LoopLimitError as e:
        assert _lavapipe()
        assert 'while k < n' in str(e) and 'test_values.py' in str(e)
        assert isinstance(e, RuntimeError)
    else:
        assert v == n
    # the status is cleared: the next launch works again
    count(7)
    assert s[None] == 7


def test_long_neighbour_list_loop_is_an_error_not_a_truncated_result():
    # a trip count read from a field at a per-invocation index is not unrolled on lavapipe
    # (passes/loop_limit.py): past 65,535 iterations its guard reports it
    count = ti.field(ti.i32, shape=2)
    s = ti.field(ti.i32, shape=2)

    @ti.kernel
    def run():
        for i in range(2):
            acc = 0
            for j in range(i, i + count[i]):
                acc += 1
            s[i] = acc

    count.from_numpy(np.array([3, 1000], np.int32))
    run()
    assert s.to_numpy().tolist() == [3, 1000]
    count.from_numpy(np.array([5, 100000], np.int32))
    try:
        run()
        got = s.to_numpy().tolist()
    except ti.LoopLimitError as e:
        assert _lavapipe()
        assert 'for j in range(i, i + count[i])' in str(e)
    else:
        assert got == [5, 100000]
    count.from_numpy(np.array([2, 7], np.int32))  # the status is cleared: the next launch works
    run()
    assert s.to_numpy().tolist() == [2, 7]


# ---------------------------------------------------------------- item 8: driver inaccuracy
def _unary_f32(fn, xs):
    n = len(xs)
    a, out = ti.field(ti.f32, shape=n), ti.field(ti.f32, shape=n)
    a.from_numpy(np.asarray(xs, np.float32))

    @ti.kernel
    def k():
        for i in a:
            out[i] = fn(a[i])

    k()
    return out.to_numpy()


def test_f32_atan2_of_zeros_matches_numpy():
    ys = np.array([0.0, -0.0, 0.0, -0.0, 1.0, -1.0, 0.0, 3.0], np.float32)
    xs = np.array([0.0, 0.0, -0.0, -0.0, 0.0, 0.0, 2.0, -4.0], np.float32)
    a, b, out = (ti.field(ti.f32, shape=len(ys)) for _ in range(3))
    a.from_numpy(ys)
    b.from_numpy(xs)

    @ti.kernel
    def k():
        for i in a:
            out[i] = ti.atan2(a[i], b[i])

    k()
    got, want = out.to_numpy(), np.arctan2(ys, xs)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)   # README: atan2 within 1e-6
    assert (np.signbit(got) == np.signbit(want)).all()


def test_f32_tanh_small_arguments_relative_accuracy():
    xs = np.concatenate([np.logspace(-30, 0.5, 400), -np.logspace(-30, 0.5, 400), [0.0]])
    got = _unary_f32(ti.tanh, xs).astype(np.float64)
    want = np.tanh(xs.astype(np.float32).astype(np.float64))
    rel = np.abs(got - want) / np.maximum(np.abs(want), 1e-38)
    assert rel.max() < 4e-7   # README: f32 tanh within 4e-7 relative


def test_unrolled_loop_copies_do_not_share_vector_loads():
    v = ti.Vector.field(2, ti.f32, shape=8)
    out = ti.field(ti.f32, shape=2)
    v.from_numpy(np.arange(16, dtype=np.float32).reshape(8, 2))

    @ti.kernel
    def k(n: ti.i32):
        for i in range(2):
            acc = 0.0
            for j in range(n):   # a run-time trip count: unrolled on lavapipe
                acc += v[j % 8][0] * (j + 1) + v[j % 8][1]
            out[i] = acc

    k(40)
    j = np.arange(40)
    vv = v.to_numpy()
    want = float(np.sum(vv[j % 8, 0] * (j + 1) + vv[j % 8, 1]))
    assert out.to_numpy().tolist() == [want, want]
