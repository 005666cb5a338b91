"""The watchdog (runtime/program.py, native Ctx::await): a sync whose kernels run past the
limit raises WatchdogTimeout (a TimeoutError) naming them, instead of hanging; the work stays
submitted, so a later sync finds its results; ti.init() afterwards opens a fresh device; and
the interpreter exits. Each program runs a genuinely long kernel (no mock) in a subprocess
with a time limit (the abandoned device may keep a core busy until the process ends). A
kernel's first launch gets a grace (runtime/program.py FIRST_LAUNCH_GRACE: lavapipe compiles
shaders at the first dispatch), so each program launches its kernels once before."""
import os
import subprocess
import sys
import textwrap
import time

import pytest

import vkdiff as ti
from vkdiff.errors import VkdiffValueError, WatchdogTimeout

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# 2.6e9 iterations of an integer recurrence: seconds on a CPU driver (lavapipe, SwiftShader), a
# fraction of a second on a GPU, where the 0.05 s limit may not fire (then the test skips)
LONG_KERNEL = '''
import time
import numpy as np
import vkdiff as ti
from vkdiff.errors import WatchdogTimeout
ti.init(watchdog=0.05)
N = 1 << 17
x = ti.field(ti.i32, shape=N)
@ti.kernel
def slow_kernel(m: ti.i32):
    for i in x:
        s = i
        for k in range(m):
            s = s * 1103515245 + 12345 + k
        x[i] = s
@ti.kernel
def add_one():
    for i in x:
        x[i] += 1
def want(m, idx):
    s = idx.astype(np.uint32)
    for k in range(m):
        s = s * np.uint32(1103515245) + np.uint32(12345 + k)
    return s.view(np.int32)
idx = np.arange(0, N, 4099)
# first launches may take longer than the limit (their shaders may compile then: grace)
slow_kernel(2000)
add_one()
assert (x.to_numpy()[idx] == want(2000, idx) + 1).all()
M = 20000
t0 = time.perf_counter()
slow_kernel(M)
add_one()
try:
    x.to_numpy()
    print('NOFIRE')
    raise SystemExit(0)
except WatchdogTimeout as e:
    assert isinstance(e, TimeoutError)
    assert e.kernels == ('slow_kernel', 'add_one'), e.kernels
    assert 'slow_kernel, add_one' in str(e) and '0.05 s' in str(e), str(e)
    print('FIRED', round(time.perf_counter() - t0, 3))
'''

STAYS_USABLE = '''
tries = 0
while True:  # each sync waits up to the limit again: once the kernel ends, all continues
    try:
        v = x.to_numpy()
        break
    except WatchdogTimeout:
        tries += 1
print('FINISHED after', tries, 'more timeouts', round(time.perf_counter() - t0, 1), 's')
assert (v[idx] == want(M, idx) + 1).all()
add_one()
assert (x.to_numpy()[idx] == want(M, idx) + 2).all()
print('ok')
'''

# SwiftShader runs every device's work on one thread pool: the fresh device's kernel starts once
# the abandoned one has ended (lavapipe: at once, each device has its own queue thread)
REINIT_WHILE_RUNNING = '''
ti.init(watchdog=200)  # a fresh device while the abandoned one still runs slow_kernel
y = ti.field(ti.i32, shape=8)
@ti.kernel
def fill():
    for i in y:
        y[i] = i * i
fill()
assert y.to_numpy().tolist() == [i * i for i in range(8)]
print('REINIT', round(time.perf_counter() - t0, 1), 's')
print('ok')
'''

# a kernel that never ends: only lavapipe's loop limiter stops it (LoopLimitError)
ENDLESS = '''
import time
import vkdiff as ti
from vkdiff.errors import LoopLimitError, WatchdogTimeout
ti.init(watchdog=0.5)
flag = ti.field(ti.i32, shape=())
out = ti.field(ti.i32, shape=64)
@ti.kernel
def spin():
    for i in out:
        k = 0
        while flag[None] == 0:
            k += 1
        out[i] = k
flag[None] = 1
spin()  # (its first launch, which the watchdog gives a grace for compiling, ends at once)
assert out.to_numpy().sum() == 0
flag[None] = 0
spin()
try:
    out.to_numpy()
    print('ENDED')
except WatchdogTimeout as e:
    assert e.kernels == ('spin',)
    print('FIRED')
except LoopLimitError:
    print('LIMITED')
try:
    out.to_numpy()  # (waits once more, and fires again)
except (WatchdogTimeout, LoopLimitError):
    pass
print('ok')
'''


def _run(tmp_path, code, limit=240):
    prog = tmp_path / 'prog.py'
    prog.write_text(textwrap.dedent(code))
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get('PYTHONPATH', ''))
    env.pop('VKDIFF_WATCHDOG', None)
    t0 = time.perf_counter()
    try:
        r = subprocess.run([sys.executable, str(prog)], env=env, cwd=ROOT, capture_output=True,
                           text=True, timeout=limit)
    except subprocess.TimeoutExpired as e:
        pytest.fail(f'the program did not end within {limit} s (output: {e.stdout!r})')
    out = r.stdout + r.stderr
    if 'NOFIRE' in r.stdout:
        pytest.skip('the long kernel finished within the 0.05 s limit on this device')
    assert r.returncode == 0 and r.stdout.rstrip().endswith('ok'), out
    return r.stdout, time.perf_counter() - t0


def test_a_long_kernel_raises_a_timeout_error_and_the_runtime_stays_usable(tmp_path):
    out, _ = _run(tmp_path, LONG_KERNEL + STAYS_USABLE)
    assert 'FIRED' in out and 'FINISHED' in out


def test_init_after_a_timeout_opens_a_fresh_device_and_the_process_exits(tmp_path):
    # the interpreter exits (no wait for the abandoned device) with the kernel still running
    out, _ = _run(tmp_path, LONG_KERNEL + REINIT_WHILE_RUNNING)
    assert 'FIRED' in out and 'REINIT' in out


def test_an_endless_kernel_is_an_error_and_the_process_still_exits(tmp_path):
    out, took = _run(tmp_path, ENDLESS, limit=120)
    assert 'FIRED' in out or 'LIMITED' in out, out


def test_the_watchdog_setting_is_checked():
    for bad in (-1, 'soon', float('nan')):
        with pytest.raises(VkdiffValueError, match='watchdog'):
            ti.init(watchdog=bad)
    ti.init(watchdog=0)  # no limit
    from vkdiff.lang import state
    assert state.runtime().watchdog == 0
    ti.init()
    assert state.runtime().watchdog == state.DEFAULT_WATCHDOG
