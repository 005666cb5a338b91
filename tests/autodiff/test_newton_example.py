"""examples/newton_hvp.py: Newton-CG with vkdiff's Hessian-vector products converges where
gradient descent crawls."""
import importlib.util
import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.requires('float64')
def test_newton_with_hvp_beats_gradient_descent():
    spec = importlib.util.spec_from_file_location(
        'newton_hvp', os.path.join(HERE, '..', '..', 'examples', 'newton_hvp.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    it_n, f_n, it_g, f_g = mod.main(['--n', '16', '--gd-iters', '500', '--quiet'])
    assert f_n < 1e-12 and it_n < 100
    assert f_g > 1e-3  # 500 gradient-descent steps are nowhere near
