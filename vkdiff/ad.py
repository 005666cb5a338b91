"""API stage, autodiff front: `Tape`, `grad_replaced` / `grad_for` (Taichi's names and semantics).
The tape records kernel launches (and custom-gradient calls) and replays their adjoints in
reverse order."""
from .errors import AutodiffError, VkdiffError
from .lang import state


def clear_all_gradients(kind='grad'):
    for f in list(state.fields):
        g = getattr(f, kind, None)
        if g is not None and f._generation == state.generation and f._shape is not None:
            g.fill(0)


class Tape:
    """`with ti.Tape(loss): ...` — on entry clears every gradient and sets the 0-D loss to 0; on
    exit seeds loss.grad = 1 and runs the recorded adjoints in reverse order."""

    def __init__(self, loss=None, clear_gradients=True, validation=False, grad_check=None):
        self.loss = loss
        self.clear_gradients = clear_gradients
        self.validation = validation
        self.grad_check = grad_check
        self.entries = []   # ('kernel', kernel, args) | ('custom', func, args, kwargs)
        if loss is not None:
            if loss.shape != ():
                raise AutodiffError(f'Tape(loss=...) needs a 0-D field; {loss.name} has shape '
                                    f'{loss.shape} (use kernel.grad() for other outputs)')
            if loss.grad is None:
                raise AutodiffError(f'the loss {loss.name} has no gradient: declare it with '
                                    'needs_grad=True')

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

    def record_custom(self, fn, args, kwargs):
        self.entries.append(('custom', fn, args, kwargs))

    def __exit__(self, exc_type, exc, tb):
        state.tape = None
        if exc_type is not None:
            return False
        self.check()
        if self.loss is not None:
            self.loss.grad.fill(1)
        self.grad()
        return False

    def check(self):
        from .autodiff.access_rules import check_tape, launch_summary
        launches = []
        for e in self.entries:
            if e[0] == 'kernel':
                inst, _ = e[1].instance(e[2])
                launches.append((e[1].__name__, launch_summary(inst.tasks, _rt_args(e[1], e[2]))))
        check_tape(launches)

    def grad(self):
        for e in reversed(self.entries):
            if e[0] == 'kernel':
                e[1].grad(*e[2])
            else:
                fn, args, kwargs = e[1], e[2], e[3]
                if fn.grad is None:
                    raise AutodiffError(f'{fn.__name__} is grad_replaced but has no grad_for function')
                fn.grad(*args, **kwargs)


def _rt_args(kernel, args):
    _, rargs = kernel._key(args)
    return rargs


def grad_replaced(func):
    """The Tape records `func`'s grad_for function instead of the launches inside `func`."""
    def decorated(*args, **kwargs):
        tape = state.tape
        if tape is None:
            return func(*args, **kwargs)
        state.tape = None
        try:
            result = func(*args, **kwargs)
        finally:
            state.tape = tape
        tape.record_custom(decorated, args, kwargs)
        return result
    decorated.grad = None
    decorated.__name__ = func.__name__
    decorated.__wrapped__ = func
    return decorated


def grad_for(primal):
    def deco(func):
        if not hasattr(primal, 'grad') or not hasattr(primal, '__wrapped__'):
            raise VkdiffError('grad_for() takes a function decorated with @ti.ad.grad_replaced')
        primal.grad = func
        return func
    return deco
