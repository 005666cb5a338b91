"""The benchmark's struct-heavy particle program (tools/programs/dem.py: grains as a
`@ti.dataclass` struct field; one kernel of eight loops with a cell list, a serialized prefix
sum, atomics into vector components, whole-struct copies and a contact force through a ti.func)
run unchanged through the `taichi` alias gives the same grains as a numpy model of the same
physics: after `STEPS` steps every grain (found by its id: the kernel reorders the grains every
step) is where numpy puts it, and the contact count and energies agree.

The numpy model finds contacts by brute force over all pairs, which is what the cell list must
find: a cell is one grain diameter wide, so any overlapping pair lies in neighbouring cells.
At 16,384 grains, `tools/bench_programs.py --check 5 --only dem` compares with Taichi 1.7.4: the
kinetic energy after 5 iterations of 20 steps in f64 equals Taichi CPU's to 3.3e-15 relative."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROGRAM = os.path.join(ROOT, 'tools', 'programs', 'dem.py')
GRAINS, STEPS = 400, 60

SCRIPT = '''
    import json, runpy, sys
    sys.path.insert(0, {tools!r})
    from taichi_harness import alias_vkdiff
    ti = alias_vkdiff()
    ti.init()
    g = runpy.run_path({path!r}, run_name='program')
    init = {{k: v.tolist() for k, v in g['initial_state']().items()}}
    consts = {{k: g[k] for k in CONSTS}}
    for _ in range({steps}):
        g['step']()
    gf = g['gf']
    out = {{name: getattr(gf, name).to_numpy().tolist() for name in ('p', 'v', 'f', 'gid')}}
    out['stats'] = g['stats'].to_numpy().tolist()
    print(json.dumps({{'init': init, 'consts': consts, 'out': out}}))
'''
CONSTS = ('dt', 'gravity', 'stiffness', 'damping', 'domain')


def run_vkdiff():
    script = f'CONSTS = {CONSTS!r}\n' + textwrap.dedent(SCRIPT).format(
        tools=os.path.join(ROOT, 'tools'), path=PROGRAM, steps=STEPS)
    env = dict(os.environ, DEM_GRAINS=str(GRAINS),
               PYTHONPATH=ROOT + os.pathsep + os.environ.get('PYTHONPATH', ''))
    r = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, env=env,
                       cwd=ROOT, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads(r.stdout.strip().splitlines()[-1])
    arrays = lambda d: {k: np.array(v) for k, v in d.items()}
    return arrays(res['init']), res['consts'], arrays(res['out'])


def numpy_steps(st, c, steps):
    """The program's physics in f64 numpy, contacts by brute force; returns the state and the
    last step's (contacts, elastic energy, kinetic energy)."""
    p, v, r, m = st['p'].copy(), st['v'].copy(), st['r'], st['m']
    k, dt, dom = c['stiffness'], c['dt'], c['domain']
    for _ in range(steps):
        d = p[:, None, :] - p[None, :, :]
        dist = np.sqrt((d * d).sum(-1))
        overlap = r[:, None] + r[None, :] - dist
        touch = (overlap > 0) & ~np.eye(len(p), dtype=bool)
        n = np.where(touch[..., None], d / np.where(touch, dist, 1)[..., None], 0)
        vn = ((v[:, None, :] - v[None, :, :]) * n).sum(-1)
        m_eff = m[:, None] * m[None, :] / (m[:, None] + m[None, :])
        cdamp = 2 * c['damping'] * np.sqrt(k * m_eff)
        f = np.where(touch[..., None], ((k * overlap - cdamp * vn)[..., None]) * n, 0).sum(1)
        lo, hi = r[:, None] - p, p + r[:, None] - dom
        f += np.where(lo > 0, k * lo - 0.2 * v, 0) - np.where(hi > 0, k * hi + 0.2 * v, 0)
        contacts = touch.sum() / 2
        elastic = (0.5 * k * np.where(touch, overlap, 0) ** 2).sum() / 2
        v = v + (f / m[:, None] + [0.0, c['gravity']]) * dt
        p = p + v * dt
        kinetic = (0.5 * m * (v * v).sum(-1)).sum()
    return p, v, f, (contacts, elastic, kinetic)


def test_dem_program_matches_numpy():
    st, c, got = run_vkdiff()
    p, v, f, stats = numpy_steps(st, c, STEPS)
    order = np.argsort(got['gid'])
    assert (got['gid'][order] == np.arange(GRAINS)).all()      # a permutation of the grains
    assert not (got['gid'] == np.arange(GRAINS)).all()         # ... reordered by cell
    moved = np.abs(p - st['p']).max()
    assert moved > 2e-4                                        # the grains did move
    assert got['p'][order] == pytest.approx(p, abs=1e-3 * moved)  # f32 round-off: ~1e-7
    assert got['v'][order] == pytest.approx(v, rel=1e-3, abs=1e-3 * np.abs(v).max())
    assert got['f'][order] == pytest.approx(f, rel=1e-3, abs=1e-3 * np.abs(f).max())
    assert stats[0] >= 20                                      # grains touch
    assert got['stats'][0] == stats[0]
    assert got['stats'][1] == pytest.approx(stats[1], rel=1e-3)
    assert got['stats'][2] == pytest.approx(stats[2], rel=1e-3)
