"""The SPIR-V disk cache with many processes: 4 processes compile the same kernels into one cache
directory while a 2-worker Pool compiles them too (a cold cache, then a warm one). Every process
gets right results and the cache holds no half-written entry (writes are a temporary file, then
a rename: vkdiff/codegen/cache.py)."""
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from vkdiff.distributed import Pool

import sweep_tasks

ROOT = str(Path(__file__).resolve().parents[2])
HERE = str(Path(__file__).resolve().parent)

CHILD = textwrap.dedent('''
    import sys
    import vkdiff as ti
    import sweep_tasks
    ti.init()
    print('OK' if sweep_tasks.sine_kernels(int(sys.argv[1])) else 'WRONG')
''')


def test_four_processes_and_a_pool_share_one_cache(tmp_path, monkeypatch):
    script = tmp_path / 'child.py'
    script.write_text(CHILD)
    monkeypatch.setenv('VKDIFF_CACHE_DIR', str(tmp_path / 'shared'))
    monkeypatch.delenv('VKDIFF_CACHE', raising=False)
    monkeypatch.setenv('PYTHONPATH', os.pathsep.join([ROOT, HERE, os.environ.get('PYTHONPATH', '')]))
    with Pool(workers=2) as pool:  # its workers start with the same cache directory
        for _ in range(2):  # a cold cache, then a warm one
            procs = [subprocess.Popen([sys.executable, str(script), '6'], stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE, text=True) for _ in range(4)]
            assert pool.map(sweep_tasks.sine_kernels, [6, 6, 6, 6]) == [True] * 4
            for p in procs:
                out, err = p.communicate(timeout=600)
                assert p.returncode == 0 and out.strip() == 'OK', err[-3000:]
    files = [f for _, _, fs in os.walk(tmp_path / 'shared') for f in fs]
    assert files and not any(f.endswith('.tmp') for f in files)
