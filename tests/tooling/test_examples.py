"""Short runs of the examples that learn or check gradients (examples/diff_billiards.py,
examples/checkpointing.py), through their main(argv)."""
import importlib.util
import os

import numpy as np
import pytest

EXAMPLES = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), 'examples')


def load_example(name):
    spec = importlib.util.spec_from_file_location(f'example_{name}', os.path.join(EXAMPLES, f'{name}.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_diff_billiards_learns(tmp_path):
    billiards = load_example('diff_billiards')
    out = tmp_path / 'billiards'
    res = billiards.main(['--steps', '100', '--iters', '40', '--out', str(out), '--quiet'])
    losses = np.asarray(res['losses'])
    assert np.all(np.isfinite(losses))
    assert losses[0] > 0.05                               # the first shot misses the goal
    assert losses[-1] < losses[0] / 100, losses           # and gradient descent fixes that
    assert losses[-5:].max() < losses[:5].min() / 30      # not a lucky last iteration
    for name in ('before.png', 'after.png', 'loss.png'):
        assert (out / name).stat().st_size > 1000
    # the learnt shot: the target ball ends at the goal (within less than half a ball radius)
    traj = res['trajectories']['after']
    assert traj.shape == (100, 5, 2)
    np.testing.assert_allclose(traj[-1, 1], res['config']['goal'], atol=0.01)


def test_diff_billiards_gradient_matches_finite_differences():
    """The first gradient of the billiards loss against central differences of a float64 NumPy
    copy of the same simulation (the first step of plain gradient descent is -lr * grad)."""
    billiards = load_example('diff_billiards')
    lr = 0.01
    res = billiards.main(['--steps', '150', '--iters', '1', '--lr', str(lr), '--momentum', '0',
                          '--max-step', '100', '--no-images', '--quiet'])
    v0 = np.asarray(res['v_cue_start'], np.float64)
    grad = (v0 - np.asarray(res['v_cue'])) / lr
    c = res['config']
    start, dt, steps = np.asarray(c['start'], np.float64), c['dt'], 150

    def loss(v):
        x, vel = start.copy(), np.zeros_like(start)
        vel[0] = v
        for _ in range(steps - 1):
            d = x[:, None] - x[None]
            dist = np.sqrt((d ** 2).sum(-1) + 1e-8)
            overlap = np.maximum(2 * c['radius'] - dist, 0)
            np.fill_diagonal(overlap, 0)
            f = ((c['stiffness'] * overlap ** 2 / dist)[..., None] * d).sum(1)
            vel = (vel + dt * f) * np.exp(-c['drag'] * dt)
            x = x + dt * vel
        return ((x[c['target']] - c['goal']) ** 2).sum()

    h = 1e-6
    fd = [(loss(v0 + h * e) - loss(v0 - h * e)) / (2 * h) for e in np.eye(2)]
    assert np.linalg.norm(fd) > 0.5
    np.testing.assert_allclose(grad, fd, rtol=0.01, atol=0.01)


def test_checkpointing_matches_stored_gradient():
    """ti.ad.checkpointed gives the stored (full Tape) gradient bit for bit, in a fraction of
    its field memory."""
    ck = load_example('checkpointing')
    res = ck.main(['--steps', '256', '--every', '16', '--check-fd'])
    a, b = res['stored'], res['checkpointed']
    assert np.isfinite(a['loss']) and a['loss'] > 0
    assert a['loss'] == b['loss']
    assert np.abs(a['grad_v_init']).max() > 1e-4          # a gradient that is not trivially zero
    if os.environ.get('LP_NUM_THREADS') == '0':  # (float atomics in the adjoints: one order)
        np.testing.assert_array_equal(b['grad_v_init'], a['grad_v_init'])
        assert b['grad_stiffness'] == a['grad_stiffness']
    np.testing.assert_allclose(b['grad_v_init'], a['grad_v_init'], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(b['grad_stiffness'], a['grad_stiffness'], rtol=1e-5, atol=1e-12)
    assert b['bytes'] * 3 < a['bytes']
    # and both are the true gradient: central differences of the checkpointed forward
    for what, ad, fd in res['fd']:
        assert ad == pytest.approx(fd, rel=0.05), what


def test_ad_gravity_main_job_headless(tmp_path):
    """The README's main job, headless: PNG frames and a GIF, with the FPS/energy readout."""
    import subprocess
    import sys
    script = os.path.join(os.path.dirname(__file__), '..', '..', 'examples', 'ad_gravity.py')
    env = dict(os.environ)
    env.pop('DISPLAY', None)
    out = subprocess.run([sys.executable, script, '--frames', '3', '--substeps', '5',
                          '--out', str(tmp_path / 'frames'), '--gif', str(tmp_path / 'g.gif')],
                         capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0, out.stderr
    assert 'substeps/s' in out.stdout and 'U+K' in out.stdout
    assert sorted(os.listdir(tmp_path / 'frames')) == [f'frame_{k:05d}.png' for k in range(3)]
    assert (tmp_path / 'g.gif').stat().st_size > 0


def test_mpm88_example_headless(tmp_path):
    """Taichi's mpm88 with `import vkdiff as ti`: runs headless and writes its frames."""
    import subprocess
    import sys
    script = os.path.join(os.path.dirname(__file__), '..', '..', 'examples', 'mpm88.py')
    out = subprocess.run([sys.executable, script, '--frames', '2', '--out', str(tmp_path / 'f')],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert sorted(os.listdir(tmp_path / 'f')) == ['frame_00000.png', 'frame_00001.png']
