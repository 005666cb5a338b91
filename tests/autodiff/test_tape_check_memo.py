"""The Tape's check of the global data access rules across launches remembers each launch's
access summary (a Tape replays the same launches every iteration): a remembered summary must
not hide an overwrite that a later Tape adds, at the same or another time step."""
import pytest

import vkdiff as ti

from shared_programs import scaled_steps


def test_remembered_summaries_still_catch_a_new_overwrite():
    steps = 4
    x, loss, step, total = scaled_steps(steps, 3, 1.5)

    @ti.kernel
    def reset(t: ti.i32):
        for i in range(3):
            x[t, i] = 0.0

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


def test_a_repeated_launch_sequence_is_checked_once(monkeypatch):
    """An optimisation loop records the same launches every iteration: the check of the whole
    sequence runs once; a sequence differing in one scalar argument, or in order, is checked
    again (and its overwrite caught)."""
    from vkdiff.ad import tape as tape_mod
    steps = 3
    x, loss, step, total = scaled_steps(steps, 2, 2.0)

    calls = []
    real = tape_mod.check_tape
    monkeypatch.setattr(tape_mod, 'check_tape', lambda *a: (calls.append(1), real(*a))[1])
    x[0, 0], x[0, 1] = 1.0, 2.0
    for _ in range(3):
        with ti.Tape(loss):
            for t in range(steps):
                step(t)
            total()
        assert [x.grad[0, i] for i in range(2)] == [2.0 ** steps] * 2
    assert len(calls) == 1
    with pytest.raises(ti.AutodiffError, match='overwrites'):
        with ti.Tape(loss):  # the second step(0) overwrites x[1], which step(1) read
            step(0)
            step(1)
            step(0)
            step(2)
            total()
    assert len(calls) == 2
