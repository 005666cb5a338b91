"""Launch floor: replaying a recorded Tape. An optimisation loop launches the same kernels with
the same arguments in the same order every iteration, under a `ti.ad.Tape`. The first such Tape
is captured: for every kernel call (and every adjoint launch at the Tape's exit) the commands the
launch recorded into the runtime's batch (dispatches: pipeline, workgroups, push constants, the
storages read and written). A later Tape with the same loss replays: each kernel call is matched
against the captured one (the same kernel object, the same arguments: numbers by type and value,
ti.Vector / ti.Matrix / struct values by the values they held when captured (they may be
changed in place), everything else by identity) and, when it matches, its commands are recorded again directly
(runtime.Runtime.dispatch: the same hazard tracking and barriers as a plain launch, the launch
counter in the push constants renumbered), without binding the arguments, looking up the
compiled instance, converting and packing the scalars, computing the workgroups, or checking
the tape's accesses (the captured sequence passed that check). So a replay records the same
commands as plain launches, and the fields get the same bits.

What makes a replay wrong is caught before it happens, and the Tape goes on with plain launches
(the captured prefix was replayed: plain launches continue from it), keeping the reason in
`tape.replay_fallback` and capturing the new sequence for the next Tape:
- another kernel, other arguments (scalars, fields, template arguments, ndarrays: an ndarray of
  another shape is another object), fewer or more launches: the call does not match. Python
  control flow that depends on a device value reads it on the host (a sync, as in plain
  launches: the commands replayed so far are real), and a different branch is a mismatch;
- ti.init / ti.reset (new fields, recompiled kernels): plans belong to one (generation,
  kernel_epoch) and are dropped with it. A new field allocated later has storage of its own and
  leaves the recorded storages alone; a kernel that uses it is another call;
- launches whose commands depend on more than their arguments run live (plain) inside a replay:
  ndarray arguments (bound per launch), arguments spilled to a buffer, a workgroup count read
  from field values on the host, kernels that return a value, print or check (debug), adjoints
  with run-time sized storage (their overflow check syncs).
Not replayed at all: Tape(validation=True), grad_check, a Tape inside FwdMode, custom gradients
(ti.ad.grad_replaced), the kernel profiler, VKDIFF_REPLAY=0."""
import math
import os
import struct

import numpy as np

from ..frontend.struct import Struct
from ..lang import state
from ..lang.matrix import Matrix
from ..lang.ndarray import Ndarray

_LAUNCH_ID = struct.Struct('<I')  # the push constants start with the launch counter (u32)
_PLANS = {}  # (loss id, clear_gradients, generation, kernel_epoch) -> Plan
_NUMBERS = (int, float, bool)


class _Snapshot:
    """A ti.Vector / ti.Matrix / struct argument as it was when captured: the same object may be
    changed in place before the next call (v[0] += 1), so identity does not say its values are
    the same."""
    __slots__ = ('cls', 'key')

    def __init__(self, x):
        self.cls, self.key = type(x), _value_key(x)

    def matches(self, x):
        return type(x) is self.cls and _value_key(x) == self.key


def _value_key(x):
    """A comparable form of a value: numbers by type and bits, arrays by bytes, vectors,
    matrices and structs by their entries; anything else by identity."""
    if isinstance(x, Matrix):
        return ('matrix', x.n, x.m, _value_key(x.entries))
    if isinstance(x, Struct):
        return ('struct', tuple((k, _value_key(v)) for k, v in x._members.items()))
    if isinstance(x, (list, tuple)):
        return tuple(_value_key(v) for v in x)
    if isinstance(x, (np.ndarray, np.generic)):
        return ('array', x.dtype.str, x.shape, x.tobytes())
    if type(x) is float:
        return ('float', struct.pack('<d', x))
    if type(x) in (int, bool):
        return (type(x).__name__, x)
    return ('object', id(x))


def _frozen(args):
    """Launch arguments as a plan keeps them: vectors, matrices and structs as _Snapshots."""
    return tuple(_Snapshot(a) if isinstance(a, (Matrix, Struct)) else
                 _frozen(a) if type(a) is tuple else a for a in args)


def _same(a, b):
    """The same argument: a number of the same type and bits, a vector / matrix / struct of the
    same values as when captured, else the same object."""
    if a is b:
        return True
    if a.__class__ is _Snapshot:
        return a.matches(b)
    t = type(a)
    if t is not type(b):
        return False
    if t in _NUMBERS:
        return a == b and (t is not float or math.copysign(1.0, a) == math.copysign(1.0, b))
    if t is tuple:  # (a template argument: a tuple of fields is compared item by item)
        return _same_args(a, b)
    return isinstance(a, np.generic) and a.tobytes() == b.tobytes()


def _storages(a):
    g = getattr(a, '_grad', None)
    return (a._storage, None if g is None else g._storage)


def _arrays(args):
    """The ndarrays among a launch's arguments and their storages (and their gradients'), or
    None."""
    got = tuple((a, _storages(a)) for a in args if isinstance(a, Ndarray))
    return got or None


def _arrays_moved(arrays):
    """Has an ndarray (or its gradient) storage other than the one the commands bind? (One
    not allocated when they were captured is not bound by them.)"""
    if arrays is None:
        return False
    for a, was in arrays:
        for now, st in zip(_storages(a), was):
            if st is not None and now is not st:
                return True
    return False


def _same_args(a, b):
    return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))


def _describe(kernel, args):
    name = getattr(kernel, '__name__', repr(kernel))
    return f'{name}({", ".join(repr(a) if type(a) in _NUMBERS else _type_name(a) for a in args)})'


def _type_name(a):
    return a.cls.__name__ if a.__class__ is _Snapshot else type(a).__name__


class Plan:
    """A captured Tape: per kernel call (kernel, args, its ndarrays and their storages or None,
    commands or None: run live), and per adjoint launch at the exit, in the order they ran,
    the commands or None. `loss`: the Tape's loss (a plan is for that field only)."""

    def __init__(self, loss=None):
        self.loss = loss
        self.calls = []
        self.grads = []


class Capture:
    """Collects a Plan while a Tape runs plain launches: the runtime appends each recorded
    dispatch to `rt.capture`; a launch that must run live sets `rt.capture_live`."""

    def __init__(self, rt, plan=None):
        self.rt = rt
        self.plan = plan or Plan()
        rt.capture = []
        rt.capture_live = None

    def begin(self):
        self.rt.capture_live = None
        return len(self.rt.capture)

    def end(self, start):
        rt = self.rt
        if rt.capture_live is not None:
            return None
        return tuple(rt.capture[start:])

    def stop(self):
        self.rt.capture = None
        self.rt.capture_live = None


def replay_commands(rt, cmds):
    """Record a captured launch's commands again: one more launch for the counter."""
    rt.launches += 1
    launch_id = rt.launches & 0xFFFFFFFF
    push = None
    for kind, algo, groups, pushed, reads, writes in cmds:
        if pushed is not push:  # the tasks of one launch share one push block
            push = pushed
            p = bytearray(pushed)
            if p:
                _LAUNCH_ID.pack_into(p, 0, launch_id)
        if kind == 'd':
            rt.dispatch(algo, groups, p, reads, writes)
        else:  # an indirect dispatch: `groups` is the geometry Storage
            rt.dispatch_indirect(algo, groups, p, reads, writes)


def why_not(tape):
    """Why this Tape neither replays nor captures, or None."""
    if tape.replay is False:
        return 'Tape(replay=False)'
    if os.environ.get('VKDIFF_REPLAY') == '0':
        return 'VKDIFF_REPLAY=0'
    if tape.validation or tape.grad_check:
        return 'Tape(validation=True) or grad_check'
    if tape.undo.enabled:  # (its frames are taken before each plain launch: ad/tape_undo.py)
        return 'Tape(undo=True)'
    if state.fwd is not None:
        return 'a Tape inside FwdMode'
    if state.config.get('kernel_profiler'):
        return 'the kernel profiler'
    if state.offline is not None:
        return 'no device'
    return None


class TapeReplay:
    """A Tape's replay state: replaying a Plan (`plan`, position `pos`) or capturing one."""

    def __init__(self, tape):
        self.tape = tape
        self.key = (id(tape.loss), tape.clear_gradients, state.generation, state.kernel_epoch)
        for k in [k for k in _PLANS if k[2:] != self.key[2:]]:
            del _PLANS[k]  # plans of an earlier ti.init or SNode tree: their kernels are gone
        self.rt = state.runtime()
        self.plan = _PLANS.get(self.key)
        if self.plan is not None and self.plan.loss is not tape.loss:
            self.plan = None  # (another field at a freed one's id)
        self.pos = 0
        self.capture = None
        if self.plan is None:
            self.capture = Capture(self.rt, Plan(tape.loss))
        else:  # named by a watchdog timeout while the replayed launches run
            for name in {c[0].__name__ for c in self.plan.calls}:
                self.rt.note_launch(name)

    def call(self, kernel, args):
        """A kernel call inside the Tape. True: replayed (recorded on the tape); False: run it
        as a plain launch (`begin` / `captured_call` around it while capturing)."""
        if self.capture is not None:
            return False
        calls = self.plan.calls
        i = self.pos
        if i >= len(calls):
            self.fall_back(f'launch {i + 1} ({_describe(kernel, args)}) was not recorded')
            return False
        k, a, arrays, cmds = calls[i]
        if k is not kernel or not _same_args(a, args):
            what = 'kernel' if k is not kernel else 'argument'
            self.fall_back(f'launch {i + 1}: {_describe(kernel, args)} instead of the recorded '
                           f'{_describe(k, a)} (another {what})')
            return False
        if _arrays_moved(arrays):
            self.fall_back(f'launch {i + 1} ({_describe(kernel, args)}): an ndarray has new '
                           'storage')
            return False
        self.pos = i + 1
        if cmds is None:  # matched, runs live
            return False
        replay_commands(self.rt, cmds)
        self.tape.entries.append(('kernel', kernel, args))
        return True

    def fall_back(self, reason):
        """Plain launches from here on; the replayed prefix starts the next plan."""
        self.tape.replay_fallback = reason
        prefix = Plan(self.tape.loss)
        prefix.calls = self.plan.calls[:self.pos]
        self.plan = None
        self.capture = Capture(self.rt, prefix)

    def begin(self):
        return self.capture.begin() if self.capture is not None else None

    def captured_call(self, kernel, args, start):
        if self.capture is not None:
            self.capture.plan.calls.append((kernel, _frozen(args), _arrays(args),
                                            self.capture.end(start)))

    def complete(self):
        """At the Tape's exit: did every launch match the plan (then the adjoints replay)?"""
        if self.capture is not None:
            return False
        if self.pos != len(self.plan.calls):
            self.fall_back(f'{self.pos} launches of the recorded {len(self.plan.calls)}')
            return False
        return True

    def grads(self, entries, run_live):
        """The adjoints, in reverse order: replayed, or run live (`run_live(entry)`) and
        captured."""
        if self.capture is None:
            for entry, cmds in zip(reversed(entries), self.plan.grads):
                if cmds is None:
                    run_live(entry)
                else:
                    replay_commands(self.rt, cmds)
            return
        grads = self.capture.plan.grads
        for entry in reversed(entries):
            start = self.capture.begin()
            run_live(entry)
            grads.append(self.capture.end(start))

    def finish(self, ok):
        """The Tape ended (ok: without an error): keep what was captured for the next one."""
        if self.capture is not None:
            self.capture.stop()
            if ok:
                if len(_PLANS) > 16:
                    _PLANS.clear()
                plan = self.capture.plan
                # the ndarrays' storages as the adjoints found them (a gradient's storage may
                # be made at the Tape's exit)
                plan.calls = [(k, a, _arrays(a) if arrays is not None else None, cmds)
                              for k, a, arrays, cmds in plan.calls]
                _PLANS[self.key] = plan
            else:
                _PLANS.pop(self.key, None)
            self.capture = None

    def abandon(self, reason):
        """Stop capturing and replaying: this Tape can not be replayed (custom gradients)."""
        self.tape.replay_fallback = reason
        if self.capture is not None:
            self.capture.stop()
        _PLANS.pop(self.key, None)


class GraphReplay:
    """`ti.graph` (graph.py): a compiled graph's launches, replayed at each run. Each launch
    whose arguments (the run's values bound to its Args) are those of the run that captured it
    records its commands again; any other (new scalar values, other ndarrays) runs as a plain
    launch and is captured for the next run. Inside a Tape every launch is a plain one (the
    Tape replays, or not)."""

    def __init__(self):
        self.key = None
        self.plan = []  # per launch: (args, ndarrays, commands or None) or None
        self.replayed = 0  # launches replayed at the last run

    def run(self, calls):
        """Launch `calls`, (kernel, args) in order."""
        if state.tape is not None or why_not_graph() is not None:
            for k, a in calls:
                k(*a)
            return
        rt = state.runtime()
        key = (state.generation, state.kernel_epoch, len(calls))
        if self.key != key:
            self.key, self.plan = key, [None] * len(calls)
        self.replayed = 0
        for i, (k, a) in enumerate(calls):
            got = self.plan[i]
            if got is not None and got[2] is not None and _same_args(got[0], a) and \
                    not _arrays_moved(got[1]):
                replay_commands(rt, got[2])
                self.replayed += 1
                continue
            capture = Capture(rt)
            try:
                start = capture.begin()
                k(*a)
                self.plan[i] = (_frozen(a), _arrays(a), capture.end(start))
            except BaseException:
                self.plan[i] = None
                raise
            finally:
                capture.stop()


def why_not_graph():
    if os.environ.get('VKDIFF_REPLAY') == '0':
        return 'VKDIFF_REPLAY=0'
    if state.fwd is not None:
        return 'inside FwdMode'
    if state.config.get('kernel_profiler'):
        return 'the kernel profiler'
    if state.offline is not None:
        return 'no device'
    return None
