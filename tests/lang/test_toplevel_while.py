"""Issue 10 item 9: a `while` loop at kernel top level runs serially, as in Taichi (a serial task,
the loops nested in it serial too); differentiated kernels follow the rules of inner while loops."""
import numpy as np
import pytest

import vkdiff as ti


def _collatz_steps(n):
    steps = 0
    while n > 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        steps += 1
    return steps


def test_top_level_while_collatz_with_argument():
    out = ti.field(ti.i32, shape=())

    @ti.kernel
    def k(n0: ti.i32):
        n = n0
        steps = 0
        while n > 1:
            if n % 2 == 0:
                n = n // 2
            else:
                n = 3 * n + 1
            steps += 1
        out[None] = steps

    for n0 in (1, 6, 27, 97):
        k(n0)
        assert out[None] == _collatz_steps(n0)


def test_top_level_while_on_a_field_with_break_and_continue():
    x = ti.field(ti.f32, shape=())
    hist = ti.field(ti.i32, shape=16)

    @ti.kernel
    def k():
        i = 0
        while x[None] < 1000.0:
            x[None] = x[None] * 2.0 + 1.0
            i += 1
            if i % 3 == 0:
                continue
            hist[i] = 1
            if i >= 12:
                break

    x[None] = 0.5
    k()
    v, i, seen = 0.5, 0, []
    while v < 1000.0:
        v = v * 2 + 1
        i += 1
        if i % 3 == 0:
            continue
        seen.append(i)
        if i >= 12:
            break
    assert x[None] == pytest.approx(v)
    expect = np.zeros(16, np.int32)
    expect[seen] = 1
    np.testing.assert_array_equal(hist.to_numpy(), expect)


def test_top_level_while_between_parallel_loops_with_nested_for():
    n = 64
    x = ti.field(ti.i32, shape=n)
    total = ti.field(ti.i32, shape=())

    @ti.kernel
    def k(rounds: ti.i32):
        for i in x:
            x[i] = i
        r = 0
        while r < rounds:
            for i in range(n):     # inside a top-level while: serial, in order
                if i > 0:
                    x[i] = x[i] + x[i - 1]
            r += 1
        for i in x:
            total[None] += x[i] + r

    k(3)
    ref = np.arange(n, dtype=np.int64)
    for _ in range(3):
        for i in range(n):
            if i > 0:
                ref[i] += ref[i - 1]
    assert ref.max() < 2**31
    np.testing.assert_array_equal(x.to_numpy(), ref)
    assert total[None] == ref.sum() + 3 * n


def test_top_level_while_without_differentiable_state_differentiates():
    x = ti.field(ti.f32, shape=8, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def k(limit: ti.i32):
        m = 1
        while m * 2 <= limit:   # integer state only: replayed by the adjoint
            m *= 2
        loss[None] += x[3] * x[3] * m
        for i in x:
            loss[None] += x[i] * x[i]

    x.from_numpy(np.arange(8, dtype=np.float32))
    with ti.Tape(loss):
        k(20)
    assert loss[None] == pytest.approx(16 * 9 + float((np.arange(8) ** 2).sum()))
    expect = 2 * np.arange(8.0)
    expect[3] += 2 * 16 * 3
    np.testing.assert_allclose(x.grad.to_numpy(), expect, rtol=1e-6)


def test_top_level_while_carrying_differentiable_state_is_an_autodiff_error():
    x = ti.field(ti.f32, shape=(), needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def k():
        p = x[None]
        while p < 10.0:
            p = p * 2.0 + 1.0
        loss[None] = p

    x[None] = 1.0
    k()
    assert loss[None] == pytest.approx(15.0)
    with pytest.raises(ti.AutodiffError, match='while'):
        k.grad()
