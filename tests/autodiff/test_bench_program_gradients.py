"""The benchmark's own DiffTaichi-style programs (tools/programs/, run by tools/bench_programs.py)
differentiate correctly: run unchanged through the `taichi` alias in f64 (their fields are
declared with dtype=float, so ti.init(default_fp=ti.f64) makes the whole program f64), the
Tape's gradient equals central finite differences of the loss.

Why f64: in f32 these programs' losses drift apart between vkdiff and Taichi within a few
optimisation iterations (mass_spring_robot: -0.1048 vs -0.1012 after 5 on Taichi Vulkan, -0.0989
on Taichi CPU), because the simulation amplifies round-off (256 steps of stiff springs with
sticky ground contacts: vkdiff's f32 gradient is 1.2% from the f64 one, Taichi Vulkan's 2.5%,
Taichi CPU's 26% after one contact event flips); in f64 vkdiff and Taichi CPU agree to 1e-11
(`tools/bench_programs.py --check 5`). Each program runs in a subprocess: the alias replaces
`taichi` in sys.modules."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SCRIPT = '''
    import json, runpy, sys
    import numpy as np
    sys.path.insert(0, {tools!r})
    from taichi_harness import alias_vkdiff
    ti = alias_vkdiff()
    ti.init(default_fp=ti.f64)
    g = runpy.run_path({path!r}, run_name='program')
    assert g['loss'].dtype == ti.f64
    {reset}

    def run(tape):
        reset()
        if tape:
            with ti.ad.Tape(g['loss']):
                g['forward']()
        else:
            g['forward']()
        return g['loss'][None]

    run(True)
    out = []
    for name, ix in {entries!r}:
        f = g[name]
        tape = float(f.grad.to_numpy()[tuple(ix)])
        base = f.to_numpy()
        lossh = []
        for s in (1, -1):
            a = base.copy()
            a[tuple(ix)] += s * {h!r}
            f.from_numpy(a)
            lossh.append(run(False))
        f.from_numpy(base)
        out.append([name, ix, tape, (lossh[0] - lossh[1]) / (2 * {h!r})])
    print(json.dumps(out))
'''

ROBOT_RESET = '''def reset():
        g['x'].from_numpy(g['x0'])
        g['v'].from_numpy(np.zeros_like(g['x0']))
        g['clear_v_inc']()'''


def tape_and_fd(program, reset, entries, h=1e-6):
    script = textwrap.dedent(SCRIPT).format(
        tools=os.path.join(ROOT, 'tools'), path=os.path.join(ROOT, 'tools', 'programs', program),
        reset=reset, entries=entries, h=h)
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get('PYTHONPATH', ''))
    r = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, env=env,
                       cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


@pytest.mark.requires('float64')
def test_mass_spring_robot_gradient_matches_f64_finite_differences():
    # network weights of both layers (sine inputs, goal input), biases; spring 0 is actuated
    entries = [('weights1', [0, 0]), ('weights1', [3, 20]), ('weights1', [7, 83]),
               ('bias1', [5]), ('weights2', [0, 3]), ('bias2', [0])]
    rows = tape_and_fd('mass_spring_robot.py', ROBOT_RESET, entries)
    for name, ix, tape, fd in rows:
        assert abs(fd) > 1e-4, (name, ix, fd)   # an entry the loss depends on
        # abs: the finite differences themselves scatter by ~3e-8 (h = 1e-5 .. 1e-7)
        assert tape == pytest.approx(fd, rel=1e-5, abs=1e-7), (name, ix)


@pytest.mark.requires('float64')
def test_bench_worker_precision_switch():
    """bench_programs' worker with fp='f64' (its --check runs) really runs the program in f64:
    billiards' losses over 3 iterations agree with the f32 run to f32 round-off, not bit for bit,
    and the f64 run's losses are not f32 values."""
    sys.path.insert(0, os.path.join(ROOT, 'tools'))
    import bench_programs
    path = os.path.join(ROOT, 'tools', 'programs', 'billiards.py')
    runs = {fp: bench_programs.run_program(sys.executable, 'vkdiff', 'own', path, 3, 0, fp=fp)
            for fp in ('f32', 'f64')}
    l32, l64 = runs['f32']['losses'], runs['f64']['losses']
    assert len(l32) == len(l64) == 3
    assert l64[-1] < l64[0]                                   # the optimisation makes progress
    for a, b in zip(l32, l64):
        assert a == pytest.approx(b, rel=1e-4) and a != b
        assert float(np.float32(a)) == a and float(np.float32(b)) != b
