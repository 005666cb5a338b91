"""Reverse mode through control flow: branches, unrolled loops, inlined funcs, inner serial loops
with carried locals (exact), 2-D and vector fields, and the errors where it cannot be exact."""
import numpy as np
import pytest

import vkdiff as ti

from shared_programs import scaled_steps


def _fd(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = h
        g[i] = (f(x + d) - f(x - d)) / (2 * h)
    return g


@pytest.mark.requires('float64')
def test_if_else_takes_the_primal_branch():
    x = ti.field(ti.f64, shape=6, needs_grad=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def f():
        for i in x:
            v = x[i]
            if v > 0.5:
                v = v * v * 3
            elif v > 0:
                v = ti.sin(v)
            else:
                v = -v * 2
            loss[None] += v

    xs = np.array([-0.7, -0.1, 0.2, 0.4, 0.8, 1.3])
    x.from_numpy(xs)
    with ti.Tape(loss):
        f()
    expect = np.where(xs > 0.5, 6 * xs, np.where(xs > 0, np.cos(xs), -2))
    np.testing.assert_allclose(x.grad.to_numpy(), expect, rtol=1e-12)


@pytest.mark.requires('float64')
def test_carried_loop_is_exact():
    ti.init(default_fp=ti.f64)  # `s = 0.0` is default-fp, as in Taichi
    x = ti.field(ti.f64, shape=5, needs_grad=True)
    out = ti.field(ti.f64, shape=5, needs_grad=True)

    @ti.kernel
    def f():
        for i in x:
            p = x[i]
            s = 0.0
            for k in range(7):
                s += ti.sin(p) * (k + 1)
                p = p * p * 0.5 + 0.1
            out[i] = s * p

    def ref(p):
        s = 0
        for k in range(7):
            s = s + np.sin(p) * (k + 1)
            p = p * p * 0.5 + 0.1
        return s * p

    xs = np.linspace(-0.9, 1.1, 5)
    x.from_numpy(xs)
    f()
    out.grad.fill(1)
    f.grad()
    h = 1e-6
    np.testing.assert_allclose(out.to_numpy(), ref(xs), rtol=1e-12)
    np.testing.assert_allclose(x.grad.to_numpy(), (ref(xs + h) - ref(xs - h)) / (2 * h), rtol=1e-7)


@pytest.mark.requires('float64')
def test_nested_carried_loops_and_branches():
    x = ti.field(ti.f64, shape=4, needs_grad=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def f():
        for i in x:
            p = x[i]
            for a in range(3):
                q = p
                for b in range(4):
                    if q > 1.0:
                        q = q * 0.5
                    else:
                        q = q * q + 0.3
                p = p + ti.sin(q)
            loss[None] += p

    def ref(p):
        for a in range(3):
            q = p
            for b in range(4):
                q = np.where(q > 1.0, q * 0.5, q * q + 0.3)
            p = p + np.sin(q)
        return p

    xs = np.array([0.1, 0.6, 1.4, 2.5])
    x.from_numpy(xs)
    with ti.Tape(loss):
        f()
    h = 1e-7
    np.testing.assert_allclose(x.grad.to_numpy(), (ref(xs + h) - ref(xs - h)) / (2 * h), rtol=1e-6)


def test_accumulation_loop_with_runtime_trip_count():
    """s += f(x, k) needs no per-iteration storage, so run-time bounds are fine."""
    x = ti.field(ti.f32, shape=3, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def f(n: ti.i32):
        for i in x:
            s = 0.0
            for k in range(n):
                s += ti.sin(x[i] * k)
            loss[None] += s

    xs = np.array([0.1, 0.2, 0.3], np.float32)
    x.from_numpy(xs)
    with ti.Tape(loss):
        f(10)
    k = np.arange(10)
    expect = (np.cos(xs[:, None] * k) * k).sum(1)
    np.testing.assert_allclose(x.grad.to_numpy(), expect, rtol=1e-5)
    assert 'size' not in f.grad.ir(10)  # no per-iteration stack


@pytest.mark.requires('float64')
def test_carried_loop_with_runtime_trip_count_uses_taichis_default_stack():
    """A run-time trip count with a carried value: without ti.init(ad_stack_size=N) the adjoint
    stores up to Taichi's default_ad_stack_size (32) iterations; more is an AutodiffError."""
    ti.init(default_fp=ti.f64)
    x = ti.field(ti.f64, shape=3, needs_grad=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def f(n: ti.i32):
        for i in x:
            p = x[i]
            for k in range(n):
                p = ti.sin(p)
            loss[None] += p

    X = np.array([0.3, 0.7, 1.1])
    x.from_numpy(X)
    for n in (3, 32):
        with ti.Tape(loss):
            f(n)
        p, d = X.copy(), np.ones(3)
        for _ in range(n):
            d *= np.cos(p)
            p = np.sin(p)
        np.testing.assert_allclose(x.grad.to_numpy(), d, rtol=1e-12)
    with pytest.raises(ti.AutodiffError, match='ad_stack_size=32'):
        with ti.Tape(loss):
            f(33)


@pytest.mark.requires('float64')
def test_static_unroll_and_func_inlining():
    x = ti.Vector.field(3, ti.f64, shape=(4, 3), needs_grad=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.func
    def energy(v):
        e = 0.0
        for c in ti.static(range(3)):
            e += v[c] ** 2 * (c + 1)
        if e > 2.0:
            return ti.sqrt(e)
        return e

    @ti.kernel
    def f():
        for i, j in x:
            loss[None] += energy(x[i, j])

    X = np.random.default_rng(0).uniform(-1, 1, (4, 3, 3))
    x.from_numpy(X)
    with ti.Tape(loss):
        f()

    def ref(X):
        e = (X ** 2 * np.array([1, 2, 3])).sum(-1)
        return np.where(e > 2, np.sqrt(e), e).sum()

    np.testing.assert_allclose(x.grad.to_numpy(), _fd(ref, X), rtol=1e-7, atol=1e-9)


def test_while_loop_with_differentiable_values_is_an_error():
    x = ti.field(ti.f32, shape=3, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def f():
        for i in x:
            p = x[i]
            while p < 10:
                p = p * 2 + 1
            loss[None] += p

    f()
    with pytest.raises(ti.AutodiffError, match='while'):
        f.grad()


def test_tape_cross_launch_overwrite_is_an_error():
    x = ti.field(ti.f32, shape=4, needs_grad=True)
    y = ti.field(ti.f32, shape=4, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def use():
        for i in x:
            loss[None] += x[i] * y[i]

    @ti.kernel
    def overwrite():
        for i in x:
            x[i] = 0.0

    with pytest.raises(ti.AutodiffError, match='overwrites x'):
        with ti.Tape(loss):
            use()
            overwrite()


@pytest.mark.requires('float64')
def test_time_steps_in_separate_slices_are_fine():
    steps, n = 5, 3
    x = ti.field(ti.f64, shape=(steps + 1, n), needs_grad=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def step(t: ti.i32):
        for i in range(n):
            x[t + 1, i] = ti.sin(x[t, i]) + x[t, i]

    @ti.kernel
    def final():
        for i in range(n):
            loss[None] += x[steps, i] ** 2

    x0 = np.array([0.1, 0.5, 0.9])
    x.from_numpy(np.vstack([x0, np.zeros((steps, n))]))
    with ti.Tape(loss):
        for t in range(steps):
            step(t)
        final()

    def ref(v):
        for _ in range(steps):
            v = np.sin(v) + v
        return (v ** 2).sum()

    np.testing.assert_allclose(x.grad.to_numpy()[0], _fd(ref, x0), rtol=1e-7, atol=1e-9)


@pytest.mark.requires('float64')
def test_kernel_local_shared_between_tasks():
    ti.init(default_fp=ti.f64)
    x = ti.field(ti.f64, shape=8, needs_grad=True)
    y = ti.field(ti.f64, shape=8, needs_grad=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def f():
        s = 0.0
        for i in x:
            s += x[i] ** 2
        for i in y:
            y[i] = s * x[i]
        for i in y:
            loss[None] += y[i] * y[i]

    X = np.linspace(0.1, 0.8, 8)
    x.from_numpy(X)
    with ti.Tape(loss):
        f()

    def ref(X):
        return (((X ** 2).sum() * X) ** 2).sum()

    np.testing.assert_allclose(x.grad.to_numpy(), _fd(ref, X), rtol=1e-7)


def test_local_overwritten_inside_if_kills_its_gradient():
    """Found by the checkpointing example: a constant stored in a branch must zero the local's
    adjoint (the branch holds no active value, but it still needs its reverse)."""
    x = ti.field(ti.f32, shape=2, needs_grad=True)
    y = ti.field(ti.f32, shape=2, needs_grad=True)
    flag = ti.field(ti.i32, shape=())

    @ti.kernel
    def k():
        for i in range(2):
            a = x[i] * 3.0
            if i == 0:
                a = 0.0
            y[i] = a

    @ti.kernel
    def k_uniform():
        for i in range(2):
            a = x[i] * 3.0
            if flag[None] == 1:
                a = 0.0
            y[i] = a

    x.fill(1)
    k()
    y.grad.fill(1)
    k.grad()
    np.testing.assert_array_equal(x.grad.to_numpy(), [0, 3])
    flag[None] = 1
    x.grad.fill(0)
    k_uniform()
    k_uniform.grad()
    np.testing.assert_array_equal(x.grad.to_numpy(), [0, 0])


def test_stores_in_exclusive_branches_are_not_rule_2():
    a = ti.field(ti.f32, shape=(), needs_grad=True)
    v = ti.field(ti.f32, shape=4, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def init():
        for i in v:
            if i == 0:
                v[i] = a[None] * 2
            else:
                v[i] = 0.0

    @ti.kernel
    def total():
        for i in v:
            loss[None] += v[i]

    a[None] = 1.5
    with ti.Tape(loss):
        init()
        total()
    assert a.grad[None] == 2.0


def test_long_tape_check_is_fast():
    import time
    steps = 2048
    x, loss, step, final = scaled_steps(steps, 4, 0.99)

    x.fill(1)
    step(0)
    final()  # compile outside the timing
    t0 = time.perf_counter()
    with ti.Tape(loss):
        for t in range(steps):
            step(t)
        final()
    assert time.perf_counter() - t0 < 5.0
    assert x.grad[0, 0] == pytest.approx(0.99 ** steps, rel=1e-3)


def test_tape_validation_mode_checks_elements_at_run_time():
    n = 8
    x = ti.field(ti.f32, shape=n, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def use(lo: ti.i32, hi: ti.i32):
        for i in range(lo, hi):
            loss[None] += x[i] ** 2

    @ti.kernel
    def overwrite(lo: ti.i32, hi: ti.i32):
        for i in range(lo, hi):
            x[i] = 0.0

    x.from_numpy(np.arange(n, dtype=np.float32))
    # different elements: the static check cannot tell them apart, the run-time one can
    with pytest.raises(ti.AutodiffError):
        with ti.Tape(loss):
            use(0, 4)
            overwrite(4, 8)
    x.from_numpy(np.arange(n, dtype=np.float32))
    with ti.Tape(loss, validation=True):
        use(0, 4)
        overwrite(4, 8)
    np.testing.assert_array_equal(x.grad.to_numpy()[:4], 2 * np.arange(4))
    # the same elements: a real violation, reported with the element
    x.from_numpy(np.arange(n, dtype=np.float32))
    with pytest.raises(ti.AutodiffError, match='validation=True.*x'):
        with ti.Tape(loss, validation=True):
            use(0, 4)
            overwrite(2, 6)


# ---------------------------------------------------------------- found by review
def test_transposed_split_keeps_reads_of_fields_the_task_writes():
    N, M = 4, 8
    t = ti.field(ti.f32, shape=(N, M))
    s = ti.field(ti.f32, shape=M)

    @ti.kernel
    def k():
        for i, j in ti.ndrange(N, M):
            s[j] += t[i, j]
            t[i, j] = 0.0

    T0 = np.arange(N * M, dtype=np.float32).reshape(N, M)
    t.from_numpy(T0)
    k()
    np.testing.assert_array_equal(s.to_numpy(), T0.sum(0))


def test_atomic_whose_result_is_used_is_not_deferred():
    N = 1000
    c = ti.field(ti.i32, shape=1)
    o = ti.field(ti.i32, shape=N)

    @ti.kernel
    def k():
        for i in range(N):
            c[0] += 1
            o[i] = ti.atomic_add(c[0], 0)

    k()
    assert o.to_numpy().min() >= 1 and c[0] == N


@pytest.mark.requires('float64')
def test_random_deciding_a_differentiable_value_is_an_error():
    x = ti.field(ti.f64, shape=8, needs_grad=True)
    L = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def k():
        for i in x:
            if ti.random() < 0.5:
                L[None] += x[i] ** 2

    @ti.kernel
    def fine():  # random only in non-differentiable work
        for i in x:
            L[None] += x[i] * 2
            if ti.random() < 2.0:
                pass

    k()
    with pytest.raises(ti.AutodiffError, match='random'):
        k.grad()
    with ti.Tape(L):
        fine()
    np.testing.assert_array_equal(x.grad.to_numpy(), 2)


@pytest.mark.requires('float64')
def test_overwrite_at_another_index_after_a_read_is_rule_1():
    N = 4
    x = ti.field(ti.f64, shape=N, needs_grad=True)
    L = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def k():
        for i in x:
            L[None] += x[i] ** 2
        for i in x:
            x[N - 1 - i] = 0.0

    with pytest.raises(ti.AutodiffError, match='rule 1'):
        with ti.Tape(L):
            k()


def test_used_atomic_result_in_differentiated_kernel_is_a_clear_error():
    x = ti.field(ti.f32, shape=8, needs_grad=True)
    y = ti.field(ti.f32, shape=8, needs_grad=True)
    c = ti.field(ti.i32, shape=())

    @ti.kernel
    def k():
        for i in x:
            old = ti.atomic_add(c[None], 1)
            y[old] = x[i] ** 2

    k()
    with pytest.raises(ti.AutodiffError, match='atomic'):
        k.grad()


@pytest.mark.requires('float64')
def test_forward_mode_and_hvp_through_shared_locals():
    ti.init(default_fp=ti.f64)
    N = 6
    x = ti.field(ti.f64, shape=N, needs_grad=True, needs_dual=True)
    L = ti.field(ti.f64, shape=(), needs_grad=True, needs_dual=True)

    @ti.kernel
    def k():
        s = 0.0
        for i in x:
            s += x[i] ** 2
        L[None] = s * s

    x0 = np.linspace(0.1, 1, N)
    x.from_numpy(x0)
    v = np.linspace(1, 2, N)
    S = (x0 ** 2).sum()
    with ti.ad.FwdMode(loss=L, param=x, seed=list(v)):
        k()
    assert L.dual[None] == pytest.approx(4 * S * (x0 @ v), rel=1e-12)
    H = 8 * np.outer(x0, x0) + 4 * S * np.eye(N)
    np.testing.assert_allclose(ti.ad.hvp(L, x, v, k), H @ v, rtol=1e-12)


def test_template_numbers_are_keyed_by_value():
    out = ti.field(ti.f32, shape=())

    @ti.kernel
    def put(v: ti.template()):
        out[None] = v

    for n in range(1000, 1010):
        put(n * 1)
        assert out[None] == n


@pytest.mark.requires('float64')
def test_carried_loop_with_runtime_trip_count_and_ad_stack_size():
    ti.init(default_fp=ti.f64, ad_stack_size=16)
    n = 5
    x = ti.field(ti.f64, shape=n, needs_grad=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def prod(m: ti.i32):
        for i in x:
            acc = 1.0
            for j in range(m):
                acc = acc * (x[i] + j * 0.1)
            loss[None] += acc

    X = np.linspace(0.5, 1.5, n)
    x.from_numpy(X)

    def ref(X, m):
        acc = np.ones_like(X)
        for j in range(m):
            acc = acc * (X + j * 0.1)
        return acc

    h = 1e-6
    for m in (3, 7, 16):
        with ti.Tape(loss):
            prod(m)
        np.testing.assert_allclose(x.grad.to_numpy(), (ref(X + h, m) - ref(X - h, m)) / (2 * h),
                                   rtol=1e-7)
    with pytest.raises(ti.AutodiffError, match='ad_stack_size'):
        with ti.Tape(loss):
            prod(17)
