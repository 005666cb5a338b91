"""Issue 10 item 11: kernel launches, host access (field reads and writes) and compilation work
from any Python thread, with results as if the calls were serialised."""
import threading

import numpy as np
import pytest

import vkdiff as ti

THREADS = 4


def _run_threads(target, n=THREADS):
    errors = []

    def guarded(k):
        try:
            target(k)
        except BaseException as e:  # reported in the main thread
            errors.append((k, e))

    ts = [threading.Thread(target=guarded, args=(k,)) for k in range(n)]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=300)
    assert not any(t.is_alive() for t in ts), 'a thread hung'
    if errors:
        k, e = errors[0]
        raise AssertionError(f'{len(errors)} thread(s) failed; thread {k}: {e!r}') from e


def test_launches_and_host_access_from_threads():
    n, rounds = 64, 150
    own = [ti.field(ti.i32, shape=n) for _ in range(THREADS)]
    total = ti.field(ti.i32, shape=())
    shared = ti.field(ti.f32, shape=THREADS)

    @ti.kernel
    def step(f: ti.template(), v: ti.i32):
        for i in f:
            f[i] += v + i
        total[None] += v

    @ti.kernel
    def fetch(k: ti.i32) -> ti.f32:
        return shared[k] * 2.0

    def worker(k):
        f = own[k]
        expect = np.zeros(n, np.int64)
        for r in range(rounds):
            step(f, k + 1)
            expect += k + 1 + np.arange(n)
            shared[k] = float(r)                      # host write, then a launch that reads it
            assert fetch(k) == 2.0 * r
            if r % 10 == 0:
                np.testing.assert_array_equal(f.to_numpy(), expect)
                assert f[n - 1] == expect[-1]
        np.testing.assert_array_equal(f.to_numpy(), expect)

    _run_threads(worker)
    assert total[None] == rounds * sum(k + 1 for k in range(THREADS))
    np.testing.assert_array_equal(shared.to_numpy(), np.full(THREADS, rounds - 1))


def test_host_writes_to_one_field_from_threads_are_all_kept():
    n = 200
    x = ti.field(ti.i32, shape=THREADS * n)

    @ti.kernel
    def bump():
        for i in x:
            x[i] += 1000

    def worker(k):
        for i in range(n):
            x[k * n + i] = k * n + i        # disjoint elements of the same field
            if i % 50 == 0:
                bump()                      # uploads x while other threads write it

    _run_threads(worker)
    got = x.to_numpy()
    idx = np.arange(THREADS * n)
    # each element was written once and then bumped by the launches that followed its write
    assert np.all((got - idx) % 1000 == 0) and np.all(got >= idx), got[:20]
    assert np.all(got - idx <= 1000 * THREADS * (n // 50))


def test_compiling_from_threads(tmp_path, monkeypatch):
    monkeypatch.setenv('VKDIFF_CACHE_DIR', str(tmp_path / 'cache'))  # a cold disk cache
    out = ti.field(ti.f32, shape=(THREADS, 6))
    salt = np.random.default_rng().integers(1, 1 << 20)  # new constants: a cold memory cache too

    def worker(k):
        for j in range(6):
            c = float(salt + 100 * k + j)

            @ti.kernel
            def kern(a: ti.f32):
                out[k, j] = ti.sqrt(a) + c     # k, j and c are compile-time constants

            kern(16.0)
            assert out[k, j] == pytest.approx(4.0 + c)

    _run_threads(worker)
    expect = 4.0 + salt + 100 * np.arange(THREADS)[:, None] + np.arange(6)[None, :]
    np.testing.assert_allclose(out.to_numpy(), expect, rtol=1e-6)
