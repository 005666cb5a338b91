"""The Tape's check of the global data access rules across launches remembers each launch's
access summary (a Tape replays the same launches every iteration): a remembered summary must
not hide an overwrite that a later Tape adds, at the same or another time step."""
import pytest

import vkdiff as ti


def test_remembered_summaries_still_catch_a_new_overwrite():
    steps = 4
    x = ti.field(ti.f32, shape=(steps + 1, 3), needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def step(t: ti.i32):
        for i in range(3):
            x[t + 1, i] = x[t, i] * 1.5

    @ti.kernel
    def reset(t: ti.i32):
        for i in range(3):
            x[t, i] = 0.0

    @ti.kernel
    def total():
        for i in range(3):
            loss[None] += x[steps, i]

    for i in range(3):
        x[0, i] = i + 1.0
    for _ in range(3):  # the same launches: summaries remembered
        with ti.Tape(loss):
            for t in range(steps):
                step(t)
            total()
        assert [x.grad[0, i] for i in range(3)] == [1.5 ** steps] * 3
    with pytest.raises(ti.AutodiffError, match='overwrites'):
        with ti.Tape(loss):  # reset(1) after step(1) read x[1]: rule 1 broken
            step(0)
            step(1)
            reset(1)
            step(2)
            step(3)
            total()
