"""API stage, launch-level forward mode: `ti.ad.FwdMode` (launches inside run their tangent
kernels, seeded along a direction) and `ti.ad.hvp` (Hessian-vector products, forward over
reverse)."""
import numpy as np

from ..errors import AutodiffError
from ..lang import state
from .tape import clear_all_gradients


class FwdMode:
    """`with ti.ad.FwdMode(loss=y, param=x, seed=[...]):` — kernel launches inside run their
    tangent (JVP) kernels: they compute the primal as usual and, in every `needs_dual` field's
    `.dual`, the directional derivative along `seed` (a list with one entry per element of
    `param`; a 0-D or one-element param needs none)."""

    def __init__(self, loss, param, seed=None, clear_gradients=True):
        self.loss, self.param, self.clear = loss, param, clear_gradients
        for f, what in ((param, 'param'), *([(l, 'loss') for l in _as_list(loss)])):
            if f._dual is None:
                raise AutodiffError(f'FwdMode {what} {f.name} has no dual: declare it with '
                                    'needs_dual=True (or call ti.root.lazy_dual())')
        n = int(np.prod(param.shape + param.elem_shape, dtype=np.int64))
        if seed is None:
            if n != 1:
                raise AutodiffError(f'FwdMode needs a seed with {n} entries for {param.name}')
            seed = [1.0]
        seed = np.asarray(seed, dtype=param.dtype.np)
        if seed.size != n:
            raise AutodiffError(f'the seed has {seed.size} entries; {param.name} has {n}')
        self.seed = seed.reshape(param.shape + param.elem_shape)
        self.recorded = []

    def __enter__(self):
        if state.fwd is not None:
            raise AutodiffError('FwdMode blocks cannot be nested (one inside a Tape, or a Tape '
                              'inside one, is fine)')
        if self.clear:
            clear_all_gradients('dual')
        self.param.dual.from_numpy(self.seed)
        state.fwd = self
        return self

    def launch(self, kernel, inst, args, rargs):
        self.recorded.append((kernel, args))
        return inst.tangent().launch(rargs)

    def __exit__(self, exc_type, exc, tb):
        state.fwd = None
        self.param.dual.fill(0)  # the seed is cleared on exit, as in Taichi; tangents stay
        return False


def _as_list(x):
    return list(x) if isinstance(x, (list, tuple)) else [x]


def hvp(loss, param, v, fn, *args, **kwargs):
    """Hessian-vector product H·v of the 0-D `loss` that `fn(*args)` computes (by launching
    kernels), with respect to `param`; returned as a numpy array shaped like param.

    Forward-over-reverse: the launches run as tangent kernels (seeded with v), then the adjoint
    of each launch runs as a tangent kernel too, so `param.grad.dual` collects H·v (and
    `param.grad` the gradient, as a by-product). None of Taichi, Warp or Dr.Jit offers this."""
    if loss._grad is None or param._grad is None:
        raise AutodiffError('hvp needs needs_grad=True on the loss and the parameter')
    for f in list(state.fields):
        if f._grad is not None and f._generation == state.generation and f._shape is not None:
            if f._dual is None:
                f._add_grad('dual')
            if f.grad.dual is None:
                f.grad._add_grad('dual')
    if loss._dual is None:
        loss._add_grad('dual')
    loss.fill(0)
    fwd = FwdMode(loss, param, seed=list(_flat(v)))
    with fwd:
        fn(*args, **kwargs)
    clear_all_gradients('grad')
    loss.grad.fill(1)
    param.dual.from_numpy(fwd.seed)  # the adjoints' tangents need the seed FwdMode cleared
    for kernel, kargs in reversed(fwd.recorded):
        if not hasattr(kernel, 'instance'):
            raise AutodiffError(f'hvp cannot go through the custom operation {kernel.__name__}')
        inst, rargs = kernel.instance(kargs)
        inst.adjoint().tangent().launch(rargs)
    param.dual.fill(0)
    return param.grad.dual.to_numpy()


def _flat(v):
    return np.asarray(v.to_numpy() if hasattr(v, 'to_numpy') else v, dtype=np.float64).ravel()
