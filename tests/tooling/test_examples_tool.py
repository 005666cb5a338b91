"""tools/run_taichi_examples.py's worker on a small Taichi-style program (no side venv needed):
`import taichi` resolves to vkdiff (`taichi.examples.*` to the examples folder), VKDIFF_GUI_MAX_FRAMES stops a `while True` GUI loop after N
frames, the example's fields and printed numbers come back, and two runs compare equal."""
import os
import sys
import textwrap

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'tools'))
import run_taichi_examples as tool  # noqa: E402

PROGRAM = '''
    import taichi as ti
    import taichi.math as tm
    from taichi.examples.helpers.consts import K   # a module in the examples folder

    ti.init(arch=ti.gpu)
    x = ti.field(float, shape=8)


    @ti.kernel
    def step(k: int):
        for i in x:
            x[i] += tm.sqrt(float(i)) * k * K


    gui = ti.GUI('test', res=(16, 16))
    frame = 0
    while True:
        frame += 1
        step(frame)
        gui.set_image(ti.Vector.field(3, float, shape=(16, 16)))
        gui.show()
        print('frame', frame, x[4])
'''


def test_worker_runs_a_taichi_program_for_n_frames(tmp_path):
    path = tmp_path / 'prog.py'
    path.write_text(textwrap.dedent(PROGRAM))
    (tmp_path / 'helpers').mkdir()
    (tmp_path / 'helpers' / 'consts.py').write_text('K = 1.0\n')
    res = tool.run_one(sys.executable, 'vkdiff', str(path), 3, 300, str(tmp_path))
    assert res.get('error') is None, res.get('traceback') or res['stderr'][-2000:]
    # frames 1..3 ran step(); the 4th step ran, then its show() ended the program
    expect = np.sqrt(np.arange(8, dtype=np.float32)) * (1 + 2 + 3 + 4)
    assert np.allclose(res['arrays']['x'], expect, rtol=1e-6)
    printed = tool.printed_numbers(res['stdout'])
    assert [p[1] for p in printed] == [[1, 2.0 * 1], [2, 2.0 * 3], [3, 2.0 * 6]]
    assert tool.compare(res, res)[0] == 'yes'
    other = dict(res, arrays={'x': res['arrays']['x'] * 1.01})
    verdict, detail = tool.compare(other, res)
    assert verdict == 'no' and detail.startswith('x: 7 of 8 values differ')


def test_printed_numbers_leave_out_taichis_ir_dumps():
    # ti.init(print_ir=True) (algorithm/print_offset.py): Taichi prints each kernel's IR to
    # stdout, vkdiff to stderr; the dump is a compiler diagnostic, not a result to compare
    taichi_out = ('[Taichi] Starting on arch=x64\nkernel {\n  $0 : for @tmp0 in S4place<i32> {\n'
                  '    <*u64>@tmp2 = get_addr(S4place<i32>, [0, 0])\n  }\n}\n'
                  '[[ 0  1]\n [ 2  3]]\nkernel {\n  $1 = const 4\n}\ndone 7\n')
    vkdiff_out = '[[ 0  1]\n [ 2  3]]\ndone 7\n'
    assert tool.printed_numbers(taichi_out) == tool.printed_numbers(vkdiff_out) == [
        ('[[ #  #]', [0, 1]), ('[ #  #]]', [2, 3]), ('done #', [7])]


OUT_OF_RANGE = '''
    import taichi as ti
    ti.init(arch=ti.gpu)
    x = ti.field(float, shape=8)
    y = ti.field(float, shape=8)

    @ti.kernel
    def diff():
        for i in x:
            y[i] = x[i + 1] - x[i - 1]   # reads x[-1] and x[8]: undefined in Taichi

    x.from_numpy(__import__('numpy').arange(8.0, dtype='float32'))
    diff()
'''


def test_second_opinions_fast_math_and_out_of_range_reads(tmp_path):
    path = tmp_path / 'oob.py'
    path.write_text(textwrap.dedent(OUT_OF_RANGE))
    v = tool.run_one(sys.executable, 'vkdiff', str(path), 3, 300, str(tmp_path))
    assert v.get('error') is None, v.get('traceback')
    t = dict(v, arrays={'x': v['arrays']['x'], 'y': v['arrays']['y'] + [9, 0, 0, 0, 0, 0, 0, 0]})
    verdict, detail = tool.compare(v, t)
    assert verdict == 'no'
    # the same program with ti.init(debug=True) on vkdiff: Taichi's out-of-bound error
    d = tool.run_one(sys.executable, 'vkdiff-debug', str(path), 3, 300, str(tmp_path))
    assert 'Out of bound access to field x' in d['error']
    assert tool.second_opinion(verdict, detail, v, debug=d)[0] == 'undefined: reads out of range'
    # a reference without fast math that vkdiff equals explains a difference as fast math
    verdict2 = tool.second_opinion(verdict, detail, v, exact=v, debug=d)
    assert verdict2[0] == 'yes, as Taichi CPU without fast_math'
    assert tool.second_opinion(verdict, detail, v, exact=t, debug=None) == (verdict, detail)


def test_array_rules_compare_unordered_lists_and_solver_scratch():
    """ARRAY_RULES: a list filled through an atomic counter compares as a set of rows (a
    permutation of rows is equal, a changed row is not); a solver's scratch vector compares on
    another array's scale (round-off noise at the stopping point is equal, a wrong value not)."""
    rng = np.random.default_rng(0)
    tri = rng.integers(0, 125, size=(192, 3)).astype(np.int32)
    b = rng.standard_normal(375).astype(np.float32) * 7
    r = rng.standard_normal(375).astype(np.float32) * 3e-6
    t = {'stdout': '', 'arrays': {'indices': tri.ravel(), 'F_b': b, 'F_r0': r}}
    rules = {'indices': ('rows', 3), 'F_r0': ('scale', 'F_b')}
    noise = r * -1.7  # another summation order: every digit differs, the magnitude does not
    v = {'stdout': '', 'arrays': {'indices': tri[rng.permutation(192)].ravel(), 'F_b': b,
                                  'F_r0': noise}}
    assert tool.compare(v, t)[0] == 'no'  # entry by entry: both differ
    verdict, detail = tool.compare(v, t, rules=rules)
    assert verdict == 'yes' and 'F_r0, indices by ARRAY_RULES' in detail
    wrong_row = tri[rng.permutation(192)].copy()
    wrong_row[5, 1] += 1
    v2 = dict(v, arrays=dict(v['arrays'], indices=wrong_row.ravel()))
    verdict, detail = tool.compare(v2, t, rules=rules)
    assert verdict == 'no' and detail.startswith('indices (as a set of rows): ')
    v3 = dict(v, arrays=dict(v['arrays'], F_r0=r + 0.1))  # a residual 1% of b: a wrong solve
    verdict, detail = tool.compare(v3, t, rules=rules)
    assert verdict == 'no' and detail.startswith("F_r0 (on F_b's scale): 375 of 375")
    assert set(tool.ARRAY_RULES['simulation/implicit_fem.py']) == {
        'indices', 'F_r0', 'F_p0', 'F_mul_ans'}
