"""Issue 10 item 13: under VKDIFF_VALIDATION=1 the validation layer opens its log in each new
VkInstance and never closes it; ti.init() cycles must not leak those file handles."""
import os
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

CHILD = textwrap.dedent('''
    import os
    import vkdiff as ti
    from vkdiff.runtime import validation

    def handles():
        return len(os.listdir('/proc/self/fd'))

    def cycle(k):
        ti.init()
        x = ti.field(ti.i32, shape=4)

        @ti.kernel
        def fill(v: ti.i32):
            for i in x:
                x[i] = v + i

        fill(k)
        assert list(x.to_numpy()) == [k, k + 1, k + 2, k + 3]

    cycle(0)
    before = handles()
    for k in range(200):
        cycle(k)
    print('ENABLED', validation.enabled())
    print('HANDLES', before, handles())
    print('MESSAGES', len(validation.read_new_messages()))
''')


def _native_module_current():
    from vkdiff.runtime import _vkrt
    return hasattr(_vkrt, 'OutOfMemoryError')


@pytest.mark.skipif(not _native_module_current(), reason='vkdiff/runtime/_vkrt is older than '
                    'vkdiff/runtime/native: rebuild it (bash tools/setup.sh)')
def test_init_cycles_leak_no_file_handles_under_validation(tmp_path):
    script = tmp_path / 'fd_child.py'
    script.write_text(CHILD)
    env = dict(os.environ, VKDIFF_VALIDATION='1', VKDIFF_VALIDATION_LOG=str(tmp_path / 'v.log'),
               PYTHONPATH=ROOT + os.pathsep + os.environ.get('PYTHONPATH', ''))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                       timeout=600)
    assert r.returncode == 0, f'{r.stdout}\n{r.stderr[-3000:]}'
    out = dict(l.split(' ', 1) for l in r.stdout.splitlines())
    assert out['ENABLED'] == 'True'
    before, after = map(int, out['HANDLES'].split())
    assert after <= before, f'{after - before} file handles leaked over 200 ti.init() cycles'
    assert out['MESSAGES'] == '0'
