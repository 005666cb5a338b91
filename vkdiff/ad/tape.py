"""API stage, launch-level reverse mode: `ti.ad.Tape` (Taichi's names and semantics) and
`clear_all_gradients`. The tape records kernel launches (and custom-gradient calls, ad/custom.py)
and replays their adjoints in reverse order, after checking that no launch overwrote what an
earlier one read (statically, or element by element: ad/tape_validation.py)."""
from ..autodiff.access_rules import check_tape, has_adjoint, launch_summary, written_fields
from ..errors import AutodiffArgumentError, AutodiffError, VkdiffTypeError
from ..lang import state
from ..launch.arg_binding import array_buffers, map_summary
from ..launch.builtin_kernels import zero_fields
from ..launch.replay import TapeReplay, why_not
from ..lang.field import Field
from .tape_undo import UndoLog
from .tape_view import describe, to_dot
from ..lang.ndarray import Ndarray


def clear_all_gradients(kind='grad'):
    """Zero every field's gradient (kind='dual': tangent): one launch per SNode holding them, as
    Taichi (a gradient is placed where it was placed explicitly, else beside its primal, as
    lazy_grad places it; a `shape=` field's gradient has a node of its own)."""
    groups = {}
    for f in list(state.fields):
        g = getattr(f, '_' + kind, None)
        if g is None or f._generation != state.generation or f._shape is None or \
                g._shape is None:
            continue
        leaf = getattr(g, '_snode_leaf', None) or getattr(f, '_snode_leaf', None)
        key = (id(leaf._parent), g._shape) if leaf is not None else id(g)
        groups.setdefault(key, []).append(g)
    for fields in groups.values():
        zero_fields(fields)


# Launch sequences whose static access check passed (Tape.check), by kernel instance and
# scalar arguments, within one ti.init generation (instances live as long as their kernel).
_PASSED = {}


class Tape:
    """`with ti.Tape(loss): ...` — on entry clears every gradient and sets the 0-D loss to 0; on
    exit seeds loss.grad = 1 and runs the recorded adjoints in reverse order.

    Before that it checks that no launch overwrote what an earlier launch read (their adjoints
    replay those reads): statically from the index patterns, or with `validation=True` element
    by element at run time (slower: it copies what each launch read)."""

    def __init__(self, loss=None, clear_gradients=True, validation=False, grad_check=None,
                 replay=None, undo=False):
        self.loss = loss
        self.clear_gradients = clear_gradients
        self.validation = validation
        self.grad_check = grad_check
        self.entries = []   # ('kernel', kernel, args) | ('custom', func, args, kwargs) |
        #                     ('checkpoint', ad.checkpoint.Checkpointed, ())
        # launch/replay.py: None (default) or True replays the launches of the Tape before it
        # when they repeat; False never
        self.replay = replay
        self.replaying = None  # its TapeReplay while one may replay or capture
        self.replayed = False  # every launch and adjoint was replayed
        self.replay_fallback = None  # why not, where it did not
        self.undo = UndoLog(undo and not validation)   # ad/tape_undo.py: frames of launches that overwrite earlier reads
        self.undo_bytes = 0     # the peak bytes they held, after the Tape's exit
        if validation:
            # deferred: the tape validator (and the passes it uses) loads when a Tape validates
            from .tape_validation import ReadLog
            self._reads = ReadLog()
        if loss is not None:
            if not isinstance(loss, Field):
                raise VkdiffTypeError(f'Tape(loss=...) needs a 0-D float field with '
                                      f'needs_grad=True, got {type(loss).__name__} {loss!r}')
            if loss.shape != () and not (loss.shape == (1,) and _is_ndarray(loss)):
                raise AutodiffArgumentError(f'Tape(loss=...) needs a 0-D field; {loss.name} has '
                                            f'shape {loss.shape} (use kernel.grad() for other '
                                            'outputs)')
            if loss._grad is None:  # (not loss.grad: an unplaced one counts as none)
                raise AutodiffArgumentError(f'the loss {loss.name} has no gradient: declare it '
                                            'with needs_grad=True')

    def __enter__(self):
        if state.tape is not None:
            raise AutodiffError('Tapes cannot be nested')
        if self.clear_gradients:
            clear_all_gradients()
        if self.loss is not None:
            self.loss.fill(0)  # on the device: no host sync inside the time loop
        self.replay_fallback = why_not(self)
        if self.replay_fallback is None:
            self.replaying = TapeReplay(self)
        state.tape = self
        return self

    def before_launch(self, kernel, inst, rargs):
        if self.undo.enabled:  # (validation=True checks element by element and refuses)
            self.undo.before_launch(len(self.entries), inst, rargs)

    def record(self, kernel, args):
        self.entries.append(('kernel', kernel, args))
        if self.validation:
            self._reads.record(kernel, args)

    def _clear_array_grads(self):
        """The gradients of the ndarrays the recorded launches used start from zero, as the
        fields' do (clear_all_gradients at the Tape's entry covers fields only)."""
        seen = set()
        for e in self.entries:
            for a in e[2]:
                if isinstance(a, Ndarray) and a.grad is not None and id(a) not in seen:
                    seen.add(id(a))
                    a.grad.fill(0)

    def stop_replay(self, reason):
        """This Tape's launches can not be replayed (launch/replay.py): plain from here on."""
        if self.replaying is not None:
            self.replaying.abandon(reason)
            self.replaying = None

    def record_custom(self, fn, args, kwargs):
        self.stop_replay('a custom gradient (grad_replaced) on the tape')
        self.entries.append(('custom', fn, args, kwargs))

    def __exit__(self, exc_type, exc, tb):
        state.tape = None
        replay, self.replaying = self.replaying, None
        if exc_type is not None:
            if replay is not None:
                replay.finish(False)
            return False
        try:
            self._exit(replay)
        except BaseException:
            if replay is not None:
                replay.finish(False)
            raise
        if replay is not None:
            replay.finish(True)
        return False

    def _exit(self, replay):
        self.replayed = replay is not None and replay.complete()
        if self.validation:
            self._reads.check()  # element by element, instead of the static index-pattern check
        elif not self.replayed:  # (a replay repeats a sequence that passed)
            self.check()
        if self.clear_gradients:
            self._clear_array_grads()
        if self.loss is not None:
            self.loss.grad.fill(1)
        if replay is not None and state.fwd is None:
            replay.grads(self.entries, self._grad_entry)
        else:
            self.grad()
        if self.grad_check:
            self.grad_check_error = self._grad_check()
        return False

    def _grad_check(self):
        """Tape(grad_check=[fields]): the worst relative error of the gradients of those fields
        (forward-mode directional derivatives against the reverse gradient); printed and kept as
        `tape.grad_check_error`. The gradients computed by the tape are left in place."""
        # cycle: ad/check.py imports this module
        from .check import gradcheck
        saved = {f: f.grad.to_numpy() for f in state.fields if f._grad is not None
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
        return describe(self)

    def to_dot(self):
        """The recorded launches, the fields they read and wrote, and the adjoint order, as
        Graphviz DOT text."""
        return to_dot(self)

    def check(self):
        """The static global-data-access check of the recorded launches (validation=True
        checks fields and ndarrays element by element instead)."""
        idx = [i for i, e in enumerate(self.entries) if e[0] == 'kernel']
        kernels = [(self.entries[i][1], *self.entries[i][1].instance(self.entries[i][2]))
                   for i in idx]
        # ndarray parameters: the arrays bound at each launch (one Buffer per array)
        subst = [array_buffers(inst, rargs) for _, inst, rargs in kernels]
        # an optimisation loop records the same launches every iteration: a sequence of the
        # same compiled kernels with the same scalar arguments passed before passes again
        key = None
        if not any(subst):
            try:
                key = (state.generation,
                       tuple((id(inst), tuple(rargs)) for _, inst, rargs in kernels),
                       tuple(sorted(self.undo.frames)))
                hash(key)
            except TypeError:
                key = None
            if key is not None and key in _PASSED:
                return
        written = frozenset().union(*({m.get(b, b) for b in written_fields(inst)}
                                      for (_, inst, _), m in zip(kernels, subst)))
        # (a launch whose adjoint does nothing needs nothing it read kept: only its writes count)
        check_tape([(k.__name__, _adjoint_reads(_unframed(_filter_reads(map_summary(
                        launch_summary(inst, rargs, None if m else written), m), written),
                                                          self.undo.framed(i)), inst))
                    for (k, inst, rargs), m, i in zip(kernels, subst, idx)], written)
        if key is not None:
            if len(_PASSED) > 64:
                _PASSED.clear()
            _PASSED[key] = [inst for _, inst, _ in kernels]  # their ids stay theirs

    def grad(self):
        blocks = [e[1] for e in self.entries if e[0] == 'checkpoint']
        undo = self.undo
        if undo.frames:
            undo.start_backward()
        try:
            self._grad()
        finally:
            undo.finish()
            self.undo_bytes = undo.peak
            for b in blocks:  # (in recording order: a later block's final values win)
                b.finish()

    def _grad(self):
        for i in reversed(range(len(self.entries))):
            self.undo.rewind(i)  # the fields this launch overwrote, as it saw them
            self._grad_entry(self.entries[i])

    @staticmethod
    def _grad_entry(e):
        if e[0] == 'kernel' and state.fwd is not None:
            _adjoint_tangent(e[1], e[2])
        elif e[0] == 'kernel':
            if has_adjoint(e[1].instance(e[2])[0]):  # (else it has nothing to propagate)
                e[1].grad(*e[2])
        elif e[0] == 'checkpoint':
            e[1].backward()  # ti.ad.checkpointed: recomputes its segments (ad/checkpoint.py)
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
        from ..launch.compiled import check_overflow  # the compiler loads on first compile only
        check_overflow(adjoint)


def _is_ndarray(x):
    return isinstance(x, Ndarray)  # Taichi takes a (1,)-shaped ndarray as the loss too


def _adjoint_reads(summary, inst):
    writes, reads = summary
    return (writes, reads) if has_adjoint(inst) else (writes, [])


def _unframed(summary, framed):
    """A launch's summary without its writes under an undo frame (ad/tape_undo.py)."""
    if not framed:
        return summary
    writes, reads = summary
    return [e for e in writes if e[0] not in framed], reads


def _filter_reads(summary, written):
    writes, reads = summary
    return [e for e in writes if e[0] in written], [e for e in reads if e[0] in written]


def _rt_args(kernel, args):
    _, rargs = kernel._key(args)
    return rargs
