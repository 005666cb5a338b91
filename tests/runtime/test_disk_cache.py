"""Issue 10 item 10: the SPIR-V disk cache. An altered, truncated or garbage entry is discarded and
recompiled, never run; an unusable cache directory gives one warning and compilation goes on
without it; concurrent processes sharing a cache stay correct."""
import os
import struct
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import vkdiff as ti
from vkdiff.codegen import cache

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MARK = 1234.5  # a constant easy to find in the binary


def _entries(d):
    return sorted(os.path.join(r, f) for r, _, fs in os.walk(d) for f in fs)


def _forget_memory():
    """What a new process sees: only the disk cache."""
    cache.clear_memory()


def _run_kernel():
    x = ti.field(ti.f32, shape=4)

    @ti.kernel
    def k():
        for i in x:
            x[i] = MARK + i

    k()
    return x.to_numpy()


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / 'spirv'
    monkeypatch.setenv('VKDIFF_CACHE_DIR', str(d))
    monkeypatch.delenv('VKDIFF_CACHE', raising=False)
    _forget_memory()
    yield d
    _forget_memory()


EXPECT = MARK + np.arange(4, dtype=np.float32)


def _altered(blob):
    return blob.replace(struct.pack('<f', MARK), struct.pack('<f', 99.0))


def _truncated(blob):
    return blob[:len(blob) // 2]


def _garbage(blob):
    return np.random.default_rng(1).integers(0, 256, len(blob), dtype=np.uint8).tobytes()


def _empty(blob):
    return b''


@pytest.mark.parametrize('damage', [_altered, _truncated, _garbage, _empty])
def test_damaged_entry_is_discarded_and_recompiled(cache_dir, damage):
    np.testing.assert_array_equal(_run_kernel(), EXPECT)
    files = _entries(cache_dir)
    assert files, 'nothing was cached'
    good = {}
    for p in files:
        with open(p, 'rb') as f:
            good[p] = f.read()
        with open(p, 'wb') as f:
            f.write(damage(good[p]))
    assert any(struct.pack('<f', MARK) in b for b in good.values()), 'constant not found'
    ti.init()
    _forget_memory()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        np.testing.assert_array_equal(_run_kernel(), EXPECT)
    assert any('corrupt' in str(w.message) for w in caught), [str(w.message) for w in caught]
    # the damaged entries were replaced by good ones: a third run reads them without a warning
    ti.init()
    _forget_memory()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        np.testing.assert_array_equal(_run_kernel(), EXPECT)
    assert not caught, [str(w.message) for w in caught]
    for p in _entries(cache_dir):
        assert not p.endswith('.tmp')


def _three_kernels():
    y = ti.field(ti.i32, shape=3)
    for j in range(3):
        @ti.kernel
        def k():
            y[j] = j * 7 + 1   # j is a compile-time constant: three different kernels
        k()
    return y.to_numpy()


def _unusable_once(monkeypatch, path):
    monkeypatch.setenv('VKDIFF_CACHE_DIR', path)
    _forget_memory()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        np.testing.assert_array_equal(_three_kernels(), [1, 8, 15])
        np.testing.assert_array_equal(_run_kernel(), EXPECT)
    msgs = [str(w.message) for w in caught]
    assert len(msgs) == 1 and 'cache' in msgs[0] and path in msgs[0], msgs
    assert issubclass(caught[0].category, UserWarning)


def test_cache_dir_naming_a_file(tmp_path, monkeypatch):
    f = tmp_path / 'not-a-dir'
    f.write_text('x')
    _unusable_once(monkeypatch, str(f))
    assert f.read_text() == 'x'


def test_read_only_cache_dir(tmp_path, monkeypatch):
    d = tmp_path / 'ro'
    d.mkdir()
    d.chmod(0o555)
    try:
        if os.access(d, os.W_OK):  # root ignores the mode: a folder no one can create files in
            d = '/proc/self/fdinfo'
        _unusable_once(monkeypatch, str(d))
    finally:
        if not isinstance(d, str):
            d.chmod(0o755)


CHILD = textwrap.dedent('''
    import sys
    import numpy as np
    import vkdiff as ti
    ti.init()
    x = ti.field(ti.f32, shape=16)
    for j in range(int(sys.argv[1])):
        @ti.kernel
        def k():
            for i in x:
                x[i] = ti.sin(i * 0.25 - 2.0 + j * 0.1) * (j + 1)
        k()
        expect = np.sin(np.arange(16) * 0.25 - 2.0 + j * 0.1) * (j + 1)
        # sin's arguments stay in [-pi, pi], where Vulkan bounds its error by 2**-11 absolute
        assert np.allclose(x.to_numpy(), expect, rtol=0, atol=2.0 ** -11 * (j + 1) + 1e-6), j
    print('OK')
''')


def test_concurrent_processes_share_a_cache(tmp_path):
    script = tmp_path / 'child.py'
    script.write_text(CHILD)
    env = dict(os.environ, VKDIFF_CACHE_DIR=str(tmp_path / 'shared'),
               PYTHONPATH=ROOT + os.pathsep + os.environ.get('PYTHONPATH', ''))
    env.pop('VKDIFF_CACHE', None)
    for _ in range(2):  # a cold cache, then a warm one
        procs = [subprocess.Popen([sys.executable, str(script), '6'], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(3)]
        for p in procs:
            out, err = p.communicate(timeout=600)
            assert p.returncode == 0 and out.strip() == 'OK', err[-3000:]
    files = _entries(tmp_path / 'shared')
    assert files and not any(f.endswith('.tmp') for f in files)
