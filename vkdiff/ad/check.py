"""API stage, launch-level AD: gradient checking (`ti.ad.gradcheck`, `Tape(grad_check=...)`).
Compares the reverse gradient with directional derivatives along random directions: <grad L, u>
against a forward-mode JVP (no finite differences, so it works in f32) or against central finite
differences (best in f64). Reports the worst relative error."""
import numpy as np

from ..errors import AutodiffError
from ..lang import state
from .forward import FwdMode
from .tape import Tape


def _shape(p):
    return p.shape + p.elem_shape


def gradcheck(loss, params, fn, *args, mode='jvp', directions=3, eps=1e-4, seed=0):
    """Worst relative error between <grad, u> (reverse mode) and the directional derivative
    (mode 'jvp': forward mode; 'fd': central differences with step eps) over random directions u.
    `fn(*args)` launches the kernels that compute the 0-D `loss` (from a zeroed loss)."""
    params = list(params) if isinstance(params, (list, tuple)) else [params]
    with Tape(loss):
        fn(*args)
    grads = [p.grad.to_numpy().astype(np.float64) for p in params]
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(directions):
        us = [rng.standard_normal(_shape(p)) for p in params]
        rev = sum(float((g * u).sum()) for g, u in zip(grads, us))
        if mode == 'jvp':
            _ensure_duals(loss)
            dd = 0.0
            for p, u in zip(params, us):
                loss.fill(0)
                with FwdMode(loss, p, seed=u.ravel()):
                    fn(*args)
                dd += loss.dual[None]
        elif mode == 'fd':
            base = [p.to_numpy() for p in params]
            vals = []
            for sign in (1, -1):
                for p, b, u in zip(params, base, us):
                    p.from_numpy((b + sign * eps * u).astype(b.dtype))
                loss.fill(0)
                fn(*args)
                vals.append(loss[None])
            for p, b in zip(params, base):
                p.from_numpy(b)
            dd = (vals[0] - vals[1]) / (2 * eps)
        else:
            raise AutodiffError(f"gradcheck mode must be 'jvp' or 'fd', not {mode!r}")
        err = abs(rev - dd) / max(abs(rev), abs(dd), 1e-30)
        worst = max(worst, err)
    loss.fill(0)
    fn(*args)  # leave the primal state as it was after the forward pass
    return worst


def _ensure_duals(loss):
    for f in list(state.fields):
        if f._grad is not None and f._dual is None and f._generation == state.generation \
                and f._shape is not None:
            f._add_grad('dual')
    if loss._dual is None:
        loss._add_grad('dual')
