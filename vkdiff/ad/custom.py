"""API stage, launch-level AD: Python operations with hand-written derivatives --
`@ti.ad.grad_replaced`, `@ti.ad.grad_for(f)` (the VJP the Tape replays), `@ti.ad.jvp_for(f)` (the
JVP FwdMode runs) and `@ti.ad.no_grad` (an operation autodiff treats as constant)."""
from ..errors import AutodiffError
from ..lang import state


def grad_replaced(func):
    """A Python-level operation with hand-written derivatives: the Tape records its `grad_for`
    function instead of the launches inside it, and FwdMode runs its `jvp_for` function after
    the primal launches instead of their tangent kernels."""
    def decorated(*args, **kwargs):
        tape, fwd = state.tape, state.fwd
        if tape is None and fwd is None:
            return func(*args, **kwargs)
        state.tape = state.fwd = None
        try:
            result = func(*args, **kwargs)
            if fwd is not None:
                if decorated.jvp is None:
                    raise AutodiffError(f'{func.__name__} is grad_replaced but has no jvp_for '
                                        'function, so FwdMode cannot differentiate it')
                decorated.jvp(*args, **kwargs)
        finally:
            state.tape, state.fwd = tape, fwd
        if tape is not None:
            tape.record_custom(decorated, args, kwargs)
        if fwd is not None:
            fwd.recorded.append((decorated, args))
        return result
    decorated.grad = None
    decorated.jvp = None
    decorated.__name__ = func.__name__
    decorated.__wrapped__ = func
    return decorated


def _derivative_for(primal, attr):
    """The decorator that makes a function the `attr` ('grad' or 'jvp') of `primal`."""
    if not hasattr(primal, 'jvp') or not hasattr(primal, '__wrapped__'):  # Taichi's message
        raise AutodiffError(f'Primal function `{getattr(primal, "__name__", primal)}` must be '
                            'decorated by ti.ad.grad_replaced (grad_for()/jvp_for() take one)')

    def deco(func):
        setattr(primal, attr, func)
        return func
    return deco


def grad_for(primal):
    """`@ti.ad.grad_for(f)`: the reverse-mode (VJP) function of a grad_replaced `f`."""
    return _derivative_for(primal, 'grad')


def jvp_for(primal):
    """`@ti.ad.jvp_for(f)`: the forward-mode (JVP) function of a grad_replaced `f`; it reads the
    inputs' `.dual` and writes the outputs' `.dual`."""
    return _derivative_for(primal, 'jvp')


def no_grad(func):
    """`@ti.ad.no_grad`: a Python function whose launches a Tape records with an empty gradient
    (and FwdMode with no tangent): its outputs count as constants for autodiff."""
    decorated = grad_replaced(func)
    decorated.grad = lambda *args, **kwargs: None
    decorated.jvp = lambda *args, **kwargs: None
    return decorated
