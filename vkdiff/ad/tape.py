"""API stage, autodiff front: `Tape`, `grad_replaced` / `grad_for` (Taichi's names and semantics).
The tape records kernel launches (and custom-gradient calls) and replays their adjoints in
reverse order."""
from ..errors import AutodiffError, VkdiffError
from ..lang import state


def clear_all_gradients(kind='grad'):
    for f in list(state.fields):
        g = getattr(f, kind, None)
        if g is not None and f._generation == state.generation and f._shape is not None:
            g.fill(0)


class Tape:
    """`with ti.Tape(loss): ...` — on entry clears every gradient and sets the 0-D loss to 0; on
    exit seeds loss.grad = 1 and runs the recorded adjoints in reverse order.

    Before that it checks that no launch overwrote what an earlier launch read (their adjoints
    replay those reads): statically from the index patterns, or with `validation=True` element
    by element at run time (slower: it copies what each launch read)."""

    def __init__(self, loss=None, clear_gradients=True, validation=False, grad_check=None):
        self.loss = loss
        self.clear_gradients = clear_gradients
        self.validation = validation
        self.grad_check = grad_check
        self.entries = []   # ('kernel', kernel, args) | ('custom', func, args, kwargs)
        if validation:
            from .tape_validation import ReadLog
            self._reads = ReadLog()
        if loss is not None:
            from ..errors import AutodiffArgumentError, VkdiffTypeError
            from ..lang.field import Field
            if not isinstance(loss, Field):
                raise VkdiffTypeError(f'Tape(loss=...) needs a 0-D float field with '
                                      f'needs_grad=True, got {type(loss).__name__} {loss!r}')
            if loss.shape != ():
                raise AutodiffArgumentError(f'Tape(loss=...) needs a 0-D field; {loss.name} has '
                                            f'shape {loss.shape} (use kernel.grad() for other '
                                            'outputs)')
            if loss.grad is None:
                raise AutodiffArgumentError(f'the loss {loss.name} has no gradient: declare it '
                                            'with needs_grad=True')

    def __enter__(self):
        if state.tape is not None:
            raise VkdiffError('Tapes cannot be nested')
        if self.clear_gradients:
            clear_all_gradients()
        if self.loss is not None:
            self.loss.fill(0)  # on the device: no host sync inside the time loop
        state.tape = self
        return self

    def record(self, kernel, args):
        self.entries.append(('kernel', kernel, args))
        if self.validation:
            self._reads.record(kernel, args)

    def record_custom(self, fn, args, kwargs):
        self.entries.append(('custom', fn, args, kwargs))

    def __exit__(self, exc_type, exc, tb):
        state.tape = None
        if exc_type is not None:
            return False
        if self.validation:
            self._reads.check()  # element by element, instead of the static index-pattern check
        else:
            self.check()
        if self.loss is not None:
            self.loss.grad.fill(1)
        self.grad()
        if self.grad_check:
            self.grad_check_error = self._grad_check()
        return False

    def _grad_check(self):
        """Tape(grad_check=[fields]): the worst relative error of the gradients of those fields
        (forward-mode directional derivatives against the reverse gradient); printed and kept as
        `tape.grad_check_error`. The gradients computed by the tape are left in place."""
        from .check import gradcheck
        saved = {f: f.grad.to_numpy() for f in state.fields if f.grad is not None
                 and f._generation == state.generation and f._shape is not None}

        def replay():
            for e in self.entries:
                e[1](*e[2], **(e[3] if len(e) > 3 else {}))
        err = gradcheck(self.loss, self.grad_check, replay)
        for f, g in saved.items():
            f.grad.from_numpy(g)
        print(f'[vkdiff] Tape grad_check: worst relative error {err:.3e} over '
              f'{", ".join(f.name for f in self.grad_check)}')
        return err

    def __str__(self):
        from .tape_view import describe
        return describe(self)

    def to_dot(self):
        """The recorded launches, the fields they read and wrote, and the adjoint order, as
        Graphviz DOT text."""
        from .tape_view import to_dot
        return to_dot(self)

    def check(self):
        from ..autodiff.access_rules import check_tape, launch_summary, written_fields
        kernels = [(e[1], e[1].instance(e[2])[0], e[2]) for e in self.entries if e[0] == 'kernel']
        written = frozenset().union(*(written_fields(inst) for _, inst, _ in kernels))
        check_tape([(k.__name__, launch_summary(inst, _rt_args(k, args), written))
                    for k, inst, args in kernels], written)

    def grad(self):
        for e in reversed(self.entries):
            if e[0] == 'kernel' and state.fwd is not None:
                _adjoint_tangent(e[1], e[2])
            elif e[0] == 'kernel':
                e[1].grad(*e[2])
            else:
                fn, args, kwargs = e[1], e[2], e[3]
                if fn.grad is None:
                    raise AutodiffError(f'{fn.__name__} is grad_replaced but has no grad_for function')
                fn.grad(*args, **kwargs)


def _adjoint_tangent(kernel, args):
    """A Tape closing inside a FwdMode block: the adjoint runs as a tangent kernel
    (forward-over-reverse), so gradients that have a dual get the directional derivative of the
    gradient, and the gradients themselves are the same as without FwdMode."""
    inst, rargs = kernel.instance(args)
    adjoint = inst.adjoint()
    adjoint.tangent().launch(rargs)
    if adjoint.overflow_flags:
        from ..lang.compiled import check_overflow
        check_overflow(adjoint)


def gradcheck(loss, params, fn, *args, **kwargs):
    from .check import gradcheck as check
    return check(loss, params, fn, *args, **kwargs)


def _rt_args(kernel, args):
    _, rargs = kernel._key(args)
    return rargs


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


def _check_replaced(primal):
    if not hasattr(primal, 'jvp') or not hasattr(primal, '__wrapped__'):
        raise VkdiffError('grad_for()/jvp_for() take a function decorated with @ti.ad.grad_replaced')


def grad_for(primal):
    """`@ti.ad.grad_for(f)`: the reverse-mode (VJP) function of a grad_replaced `f`."""
    _check_replaced(primal)

    def deco(func):
        primal.grad = func
        return func
    return deco


def jvp_for(primal):
    """`@ti.ad.jvp_for(f)`: the forward-mode (JVP) function of a grad_replaced `f`; it reads the
    inputs' `.dual` and writes the outputs' `.dual`."""
    _check_replaced(primal)

    def deco(func):
        primal.jvp = func
        return func
    return deco


class FwdMode:
    """`with ti.ad.FwdMode(loss=y, param=x, seed=[...]):` — kernel launches inside run their
    tangent (JVP) kernels: they compute the primal as usual and, in every `needs_dual` field's
    `.dual`, the directional derivative along `seed` (a list with one entry per element of
    `param`; a 0-D or one-element param needs none)."""

    def __init__(self, loss, param, seed=None, clear_gradients=True):
        import numpy as np
        self.loss, self.param, self.clear = loss, param, clear_gradients
        for f, what in ((param, 'param'), *([(l, 'loss') for l in _as_list(loss)])):
            if f.dual is None:
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
            raise VkdiffError('FwdMode blocks cannot be nested (one inside a Tape, or a Tape '
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
    if loss.grad is None or param.grad is None:
        raise AutodiffError('hvp needs needs_grad=True on the loss and the parameter')
    for f in list(state.fields):
        if f.grad is not None and f._generation == state.generation and f._shape is not None:
            if f.dual is None:
                f._add_grad('dual')
            if f.grad.dual is None:
                f.grad._add_grad('dual')
    if loss.dual is None:
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
    import numpy as np
    return np.asarray(v.to_numpy() if hasattr(v, 'to_numpy') else v, dtype=np.float64).ravel()


def no_grad(func):
    """`@ti.ad.no_grad`: a Python function whose launches a Tape records with an empty gradient
    (and FwdMode with no tangent): its outputs count as constants for autodiff."""
    decorated = grad_replaced(func)
    decorated.grad = lambda *args, **kwargs: None
    decorated.jvp = lambda *args, **kwargs: None
    return decorated
