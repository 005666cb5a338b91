"""The dynamic nodes' chunk pool (lang/dynpool.py) under contention, on a device without
independent forward progress between invocations (SwiftShader; AMD, Intel, Apple GPUs): no
invocation may wait on another, so these programs finish on every driver. Each runs in a
subprocess with a time limit, so that a spinning allocator fails the test instead of hanging
the suite; the subprocess inherits the driver (VK_ICD_FILENAMES), so the suite run on
SwiftShader checks it there. Expected values are numpy's."""
import os
import subprocess
import sys
import textwrap

import pytest

import vkdiff as ti
from vkdiff.lang.dynpool import ELECT_MIN_SUBGROUP

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LIMIT_S = 120  # each program takes a few seconds; a spinning allocator never ends

PRELUDE = '''
import os
os.environ['VKDIFF_DYNAMIC_POOL'] = '1'
ELECT = os.environ.get('VKDIFF_DYNAMIC_POOL_ELECT') == '1'
import numpy as np
import vkdiff as ti
ti.init()
def in_use(dn):
    # every slot taken is held by a list, parked for reuse, or counted lost to a race (a race
    # costs at most a chunk per racing lane, per racing subgroup where the lanes elect a
    # claimer). The exact count and no lost element are what the allocator promises. How much
    # a race wastes is the device's concurrency, not a constant (3000 appends holding 1,023
    # slots lost 4-10x that without the election on lavapipe and SwiftShader, 0.25-0.5x with
    # it, from run to run): a figure for the benchmark and the issue's note, not an assertion
    p = dn._pool
    held, spare = p.slots_in_use(), p.slots_parked() + p.slots_lost()
    assert int(p.top.to_numpy()[0]) == held + spare, (int(p.top.to_numpy()[0]), held, spare)
    return held
'''

PROGRAMS = {
    # 3000 appends to one list: each chunk class is needed by hundreds of invocations at once
    'appends_to_one_list': '''
x = ti.field(ti.i32)
dn = ti.root.dynamic(ti.i, 4096, chunk_size=32)
dn.place(x)
@ti.kernel
def push(n: ti.i32):
    for i in range(n):
        x.append(i * 3)
push(3000)
a = x.to_numpy()
assert (np.sort(a[:3000]) == np.arange(3000) * 3).all(), 'an element was lost'
assert not a[3000:].any()
p = dn._pool
need, c = 0, 0
while p.B * ((1 << c) - 1) < 3000:
    need += 1 << c
    c += 1
assert in_use(dn) == need, (in_use(dn), need)
push(500)  # more appends, after chunks a race gave back
a = x.to_numpy()
assert (np.sort(a[:3500]) == np.sort(np.r_[np.arange(3000), np.arange(500)] * 3)).all()
while p.B * ((1 << c) - 1) < 3500:
    need += 1 << c
    c += 1
assert in_use(dn) == need, (in_use(dn), need)
print('ok')
''',
    # stores to arbitrary positions of 64 lists, every position written by 4 invocations,
    # and atomic adds into the same elements: the first touch of a chunk races everywhere
    'stores_and_atomics_racing_for_chunks': '''
x = ti.field(ti.f32)
dn = ti.root.dense(ti.i, 64).dynamic(ti.j, 1024, chunk_size=4)
dn.place(x)
@ti.kernel
def w():
    for i, j, r in ti.ndrange(64, 1000, 4):
        if (i * 7 + j) % 3 != 0:
            ti.atomic_add(x[i, j], 1.0 + r)
@ti.kernel
def total() -> ti.f32:
    s = 0.0
    for i in range(64):
        for j in range(1000):
            s += x[i, j]
    return s
w()
p = dn._pool
full = [(1 << c) for c in range(p.K) if p.B * ((1 << c) - 1) < 1000]
hit_lists = 64  # (every list gets writes at positions up to 999)
assert in_use(dn) == hit_lists * sum(full), (in_use(dn), hit_lists * sum(full))
i, j = np.meshgrid(np.arange(64), np.arange(1000), indexing='ij')
hit = (i * 7 + j) % 3 != 0
want = np.where(hit, 10.0, 0.0).sum()
assert total() == want, (total(), want)
got = np.array([[x[a, b] for b in range(0, 1000, 97)] for a in range(0, 64, 9)])
assert (got == np.where(hit, 10.0, 0.0)[::9, ::97]).all()
print('ok')
''',
}


@pytest.mark.parametrize('elect', ['auto', 'elect'])
@pytest.mark.parametrize('name', sorted(PROGRAMS))
def test_contended_allocation_finishes_and_loses_nothing(name, elect, tmp_path):
    # 'elect': the subgroup election (lang/dynpool.py: by default only on wide subgroups)
    if (name == 'stores_and_atomics_racing_for_chunks' and elect == 'auto'
            and os.environ.get('VKDIFF_GEOMETRY') == 'gpu'
            and ti.lang.state.runtime().subgroup_size < ELECT_MIN_SUBGROUP):
        # a known defect (issue 23's note): with one iteration per invocation and no election,
        # every racing lane takes a chunk, and 256k racing atomics waste more than the pool's
        # slack: the launch ends in DynamicPoolError (clear, not silent), from run to run
        pytest.xfail('without the election, racing lanes can exhaust the chunk pool under the '
                     'GPU launch geometry on narrow subgroups (DynamicPoolError)')
    code = textwrap.dedent(PRELUDE) + textwrap.dedent(PROGRAMS[name])
    prog = tmp_path / f'{name}.py'  # (kernels need their source in a file)
    prog.write_text(code)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get('PYTHONPATH', ''),
               VKDIFF_DYNAMIC_POOL_ELECT='1' if elect == 'elect' else '')
    try:
        r = subprocess.run([sys.executable, str(prog)], env=env, cwd=ROOT,
                           capture_output=True, text=True, timeout=LIMIT_S)
    except subprocess.TimeoutExpired:
        pytest.fail(f'{name} did not finish within {LIMIT_S} s: an invocation waits on another')
    assert r.returncode == 0 and r.stdout.strip().endswith('ok'), r.stdout + r.stderr
