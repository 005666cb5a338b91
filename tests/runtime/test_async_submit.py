"""Launches are submitted without waiting once they have been recording for
runtime.program.KICK_SECONDS (the device runs them while the host records more); sync points wait
for everything. With KICK_SECONDS = 0 every launch is its own submission, so dependent launches,
host reads and host writes meet commands still in flight: results must be those of one batch,
and the validation layer (VKDIFF_VALIDATION=1) must see a barrier wherever one submission's
commands depend on an earlier one's."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.lang import state
from vkdiff.runtime import program

from shared_programs import TimeSteps, accumulate, dependent_chain


@pytest.fixture(autouse=True)
def native_module_with_wait():
    if not hasattr(program._load_native().Batch, 'wait'):
        pytest.skip('this checkout\'s native module predates Batch.wait (submissions without '
                    'waiting): rebuild it (bash tools/setup.sh)')


@pytest.fixture
def every_launch_submitted(monkeypatch):
    monkeypatch.setattr(program, 'KICK_SECONDS', 0.0)


def test_launches_are_submitted_without_waiting(every_launch_submitted):
    x = ti.field(ti.f32, shape=())

    @ti.kernel
    def inc():
        x[None] += 1.0

    inc()
    rt = state.runtime()
    seen = []
    for _ in range(300):
        inc()
        seen.append((rt.batch.pending, rt.batch.inflight))
    assert all(p == 0 and 1 <= n <= 2 for p, n in seen)  # queued, at most two in flight
    assert x[None] == 301.0  # the read waits for all of them
    assert (rt.batch.pending, rt.batch.inflight) == (0, 0)


def test_dependent_chain_across_submissions(every_launch_submitted):
    n = 256
    a, b, step_a, step_b = dependent_chain(n)
    for _ in range(200):
        step_a()
        step_b()
    np.testing.assert_array_equal(b.to_numpy(), np.full(n, 200))
    np.testing.assert_array_equal(a.to_numpy(), np.full(n, 200))


def test_host_writes_and_uploads_meet_commands_in_flight(every_launch_submitted):
    """A host write to a field that commands in flight read (write-after-read on the device
    buffer), and to one whose staging copy an upload in flight uses."""
    x, y, acc = accumulate(8)
    xs, expect = np.zeros(8, np.float32), np.zeros(8)
    for k in range(60):
        if k % 3:
            x[k % 8] = k
            xs[k % 8] = k
        else:
            xs = np.arange(8, dtype=np.float32) * k
            x.from_numpy(xs)
        acc()
        expect += xs
    np.testing.assert_array_equal(y.to_numpy(), expect)


@pytest.mark.requires('float64')
def test_adjoint_on_a_tape_across_submissions(every_launch_submitted):
    prog = TimeSteps(16, 20)
    loss, grad = prog.run(0.1)
    want_loss, want_grad = prog.expected(0.1)
    assert loss == pytest.approx(want_loss, rel=1e-12)
    assert grad == pytest.approx(want_grad, rel=1e-10)


class _CountingBatch:
    """rt.batch, counting the barriers recorded."""

    def __init__(self, batch):
        self._batch, self.barriers = batch, 0

    def barrier(self):
        self.barriers += 1
        self._batch.barrier()

    def __getattr__(self, name):
        return getattr(self._batch, name)


@pytest.mark.parametrize('kick', [0.0, -1.0])
def test_barriers_do_not_depend_on_submissions(monkeypatch, kick):
    """A dependent chain gets one barrier between consecutive launches whether they share a
    submission or not (lavapipe runs submissions in order either way, so only the count shows
    a missing one), and independent launches get none."""
    monkeypatch.setattr(program, 'KICK_SECONDS', kick)
    fields = [ti.field(ti.f32, shape=()) for _ in range(4)]

    @ti.kernel
    def inc(f: ti.template()):
        f[None] += 1.0

    for f in fields:
        inc(f)
    ti.sync()
    rt = state.runtime()
    counting = _CountingBatch(rt.batch)
    monkeypatch.setattr(rt, 'batch', counting)
    for _ in range(50):
        inc(fields[0])
    assert counting.barriers == 49
    ti.sync()
    counting.barriers = 0
    for f in fields:  # independent: no barrier, whatever was submitted before
        inc(f)
    assert counting.barriers == 0
    inc(fields[0])
    assert counting.barriers == 1
    assert [f[None] for f in fields] == [53.0, 2.0, 2.0, 2.0]
