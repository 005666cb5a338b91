"""Runtime stage: on a device of type CPU the native module keeps the host's cores awake for
Device.keep_awake_ms after each submission and wait (awake.hpp: one thread per core, up to 16, at
SCHED_IDLE, yielding in a loop; VKDIFF_KEEP_AWAKE_MS overrides, 0 turns it off). Whatever the
window, results are those of plain submissions; the threads run at the idle policy only (a
normal-priority spinner would take CPU time from everything else) and end with the Device."""
import os
import struct
import sys

import numpy as np
import pytest

from test_native import ADD, glsl, new_device
from vkdiff.runtime import _vkrt, validation

VALIDATING = validation.maybe_enable()
SCHED_IDLE = 5


@pytest.fixture(autouse=True)
def native_module_with_keep_awake():
    if not hasattr(_vkrt.Device, 'keep_awake_ms'):
        pytest.skip('this checkout\'s native module predates keep_awake_ms: rebuild it')


@pytest.fixture(autouse=True)
def layer_log():
    validation.read_new_messages()
    yield
    if VALIDATING:
        messages = validation.read_new_messages()
        assert messages == [], 'validation layer:\n' + '\n\n'.join(messages)


def chain(dev, n=200):
    """n dependent dispatches, each its own submission without waiting (at most two in flight,
    then a wait), then a wait: word i of the buffer is the sum of the increments."""
    buf = dev.buffer(4 * 64)
    add = dev.algorithm([buf], glsl(ADD), 8)
    batch = dev.batch()
    for k in range(n):
        batch.dispatch(add, 1, struct.pack('<II', 64, k))
        batch.barrier()
        batch.submit(False)
    batch.wait()
    batch.download(buf)
    batch.submit()
    np.testing.assert_array_equal(buf.host.view(np.uint32), np.full(64, sum(range(n))))


def idle_policy_threads():
    """Threads of this process by scheduling policy: {policy: count} (/proc, Linux)."""
    got = {}
    for t in os.listdir('/proc/self/task'):
        try:
            with open(f'/proc/self/task/{t}/stat') as f:
                fields = f.read().rsplit(')', 1)[1].split()
        except OSError:  # the thread ended meanwhile
            continue
        policy = int(fields[38])  # field 41 of stat; fields[0] is field 3 (state)
        got[policy] = got.get(policy, 0) + 1
    return got


@pytest.mark.parametrize('ms', ['0', '0.001', '1000'])
def test_dependent_submissions_whatever_the_window(monkeypatch, ms):
    monkeypatch.setenv('VKDIFF_KEEP_AWAKE_MS', ms)
    dev = new_device()
    try:
        assert dev.keep_awake_ms == pytest.approx(float(ms))
        chain(dev)
    finally:
        dev.close()


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='SCHED_IDLE is Linux\'s')
def test_keep_awake_threads_run_at_idle_policy_and_end_with_the_device(monkeypatch):
    before = idle_policy_threads().get(SCHED_IDLE, 0)
    monkeypatch.setenv('VKDIFF_KEEP_AWAKE_MS', '60000')
    dev = new_device()
    try:
        chain(dev, 4)
        n = min(16, max(1, os.cpu_count() or 1))
        assert idle_policy_threads().get(SCHED_IDLE, 0) == before + n
    finally:
        dev.close()
    assert idle_policy_threads().get(SCHED_IDLE, 0) == before


@pytest.mark.skipif(not sys.platform.startswith('linux'), reason='SCHED_IDLE is Linux\'s')
def test_off_starts_no_threads(monkeypatch):
    before = idle_policy_threads().get(SCHED_IDLE, 0)
    monkeypatch.setenv('VKDIFF_KEEP_AWAKE_MS', '0')
    dev = new_device()
    try:
        chain(dev, 4)
        assert idle_policy_threads().get(SCHED_IDLE, 0) == before
    finally:
        dev.close()


@pytest.mark.parametrize('bad', ['fast', '-1', '1e9'])
def test_bad_keep_awake_setting_is_a_clear_error(monkeypatch, bad):
    monkeypatch.setenv('VKDIFF_KEEP_AWAKE_MS', bad)
    with pytest.raises(RuntimeError, match='VKDIFF_KEEP_AWAKE_MS'):
        new_device()
