"""API stage, launch-level reverse mode: `ti.ad.checkpointed(step, steps=T, every=k)` (or
`budget_bytes=B`), a time loop inside a `ti.ad.Tape` whose backward pass recomputes instead of
keeping every step's state.

Forward: `step(t)` runs for t = 0 .. T-1 under a recorder that keeps the launches (kernel and
arguments, or a grad_replaced call) and, per segment of k steps, a snapshot: a device copy of every
field the segment overwrites (or accumulates into), taken just before its first write there
(state.launch_watch sees each launch before it runs, inside grad_replaced functions too).

Backward, segment by segment from the last: the snapshot is copied back, the segment's recorded
launches are replayed forward (each first saving what it is about to overwrite: an undo frame),
then their adjoints run in reverse, each followed by its undo frame. Every adjoint therefore sees
exactly the fields its launch left in the forward pass, which is what the full Tape gives it when
no launch overwrote another's reads: the gradients are the full Tape's, bit for bit, where the
forward pass is deterministic; and a step may overwrite its own state in place (a field without
a time axis, or a two-slot ping-pong), which is what makes the memory O(sqrt T).

Python state: the replay re-runs the recorded launches with their recorded arguments (a scalar
argument or a branch on a device value in Python is replayed as it was), a field written from
Python scope inside a step is captured (its new contents kept on the host and written again in
the replay), and a grad_replaced function, re-run as Python, must launch the same kernels with the
same arguments again. What cannot be reproduced is refused with a CheckpointError: a field the
steps read (and do not write) that changed between the forward and the backward pass, ti.random in
a step (its stream depends on the launch count), ndarray arguments, sparse or dynamic fields,
FwdMode, nested blocks.
"""
import math

from ..autodiff.access_rules import has_adjoint, launch_summary
from ..errors import AutodiffError, CheckpointBudgetError, CheckpointError
from .. import ir
from ..lang import binding, state
from ..lang.dynpool import node_of
from ..lang.sparse import guards_of
from ..runtime.program import Storage  # loads no native module (runtime/program.py loads it with the device)


# ------------------------------------------------------------------ device copies of storages
class _Pool:
    """Device buffers for snapshots and undo frames, reused by size within one ti.init
    generation; counts the bytes live and their peak."""

    def __init__(self):
        self.free, self.generation = {}, None
        self.live = self.peak = self.allocated = 0

    def get(self, nbytes):
        if self.generation != state.generation:
            self.free, self.generation, self.allocated = {}, state.generation, 0
        lst = self.free.get(nbytes)
        if lst:
            b = lst.pop()
        else:
            import numpy as np
            b = Storage(state.runtime(), (nbytes // 4,), np.uint32, 'checkpoint')
            self.allocated += nbytes
        self.live += nbytes
        self.peak = max(self.peak, self.live)
        return b

    def put(self, b):
        self.live -= b.nbytes
        if self.generation == state.generation:
            self.free.setdefault(b.nbytes, []).append(b)


_pool = _Pool()


def memory_stats():
    """Bytes of the checkpoint buffers: {'live', 'peak' (since the last reset_peak), 'allocated'
    (held for reuse, this ti.init generation)}."""
    return {'live': _pool.live, 'peak': _pool.peak, 'allocated': _pool.allocated}


def reset_peak():
    _pool.peak = _pool.live


def _copy(src, dst):
    rt = state.runtime()
    if rt.can_fill:
        rt.copy(src, dst)
    else:  # a native module without copy commands: through the host
        src.for_host_read()
        data = src.buf.host[:src.nbytes].copy()
        dst.for_host_overwrite()
        dst.buf.host[:src.nbytes] = data


def _save(st):
    b = _pool.get(st.nbytes)
    _copy(st, b)
    return b


def _release(copies):
    for b in copies:
        _pool.put(b)


def _restore(pairs):
    for st, b in pairs:
        _copy(b, st)
        _pool.put(b)


# ------------------------------------------------------------------ what a launch touches
def _launch_info(inst):
    """(fields read, primal fields written, gradient fields written, uses ti.random, has array
    arguments) of a compiled kernel instance (worked out once)."""
    info = getattr(inst, '_checkpoint_info', None)
    if info is None:
        reads, writes, grads, rnd, arrays = [], [], [], False, False
        for t in inst.tasks:
            r, w = t.accesses()
            for b in r + w:
                arrays = arrays or b.role == 'arg'
            for f in map(binding.owner, r):
                if f is not None and f not in reads:
                    reads.append(f)
            for f in map(binding.owner, w):
                if f is None:
                    continue
                lst = grads if f.buffer.primal is not None else writes
                if f not in lst:
                    lst.append(f)
            rnd = rnd or any(s.op == 'random' for s in ir.walk(t.body))
        info = inst._checkpoint_info = (reads, writes, grads, rnd, arrays)
    return info


def _storage(f, kname):
    if node_of(f) is not None or guards_of(f):
        raise CheckpointError(f'checkpointed: kernel {kname} writes {f.name}, a sparse or dynamic '
                              'field; a checkpointed step can write dense fields only')
    return f.storage


def _same_args(a, b):
    try:
        return len(a) == len(b) and all(x is y or (type(x) is type(y) and bool(x == y))
                                        for x, y in zip(a, b))
    except Exception:  # values that do not compare (arrays): the same objects only
        return all(x is y for x, y in zip(a, b))


def _show(kernel, args):
    a = ', '.join(repr(x) if isinstance(x, (int, float)) else type(x).__name__ for x in args)
    return f'{kernel.__name__}({a})'


class _Entry:
    """One recorded operation of a step: a kernel launch, a grad_replaced call, or a field's
    contents written from Python scope (kind 'kernel' | 'custom' | 'host')."""
    __slots__ = ('kind', 'fn', 'args', 'kwargs', 'launches', 'step')

    def __init__(self, kind, fn, args, kwargs, launches, step):
        self.kind, self.fn, self.args, self.kwargs = kind, fn, args, kwargs
        self.launches, self.step = launches, step   # [(kernel, instance, runtime args)]


class _Segment:
    __slots__ = ('start', 'stop', 'entries', 'snapshot', 'grads', 'reads')

    def __init__(self, start):
        self.start, self.stop, self.entries = start, start, []
        self.snapshot = {}   # Storage -> its copy at the segment's start
        self.grads = set()   # gradient Storages the segment's forward launches write
        self.reads = set()   # primal Storages its launches read


class Checkpointed:
    """A time loop recorded into a Tape as one entry (see the module docstring)."""

    def __init__(self, step, steps, every=None, budget_bytes=None):
        if not callable(step):
            raise AutodiffError(f'checkpointed: step must be callable (step(t) runs time step t), '
                                f'got {step!r}')
        if not isinstance(steps, int) or steps < 0:
            raise AutodiffError(f'checkpointed: steps must be an int >= 0, got {steps!r}')
        if every is not None and budget_bytes is not None:
            raise AutodiffError('checkpointed: give every= or budget_bytes=, not both')
        if every is not None and (not isinstance(every, int) or every < 1):
            raise AutodiffError(f'checkpointed: every must be an int >= 1, got {every!r}')
        self.step, self.steps, self.budget = step, steps, budget_bytes
        self.every = every if every is not None else (
            None if budget_bytes is not None else max(1, math.ceil(math.sqrt(steps))))
        self.__name__ = f'checkpointed({getattr(step, "__name__", "step")})'
        self.segments = []
        self.fields = {}       # Storage -> Field, for messages
        self.reads = {}        # Storage -> version after the forward pass (read, never written)
        self.finals = []       # (Storage, copy) of the state the forward pass left
        self.first = {}        # Storage -> its version before the block first wrote it
        self._seg = self._entry = None
        self._pending = []     # launches of the operation being recorded
        self._host = []        # Storages written from Python scope since the last launch
        self._frame = None     # undo frame being filled during a replay

    # -------------------------------------------------------------- forward
    def run(self):
        if state.fwd is not None:
            raise CheckpointError('checkpointed cannot run inside ti.ad.FwdMode (its tangents '
                                  'would need the same recomputation); use a plain loop there')
        if isinstance(state.tape, _Recorder) or state.launch_watch is not None:
            raise CheckpointError('checkpointed blocks cannot be nested (or run while another '
                                  'block replays)')
        tape = state.tape
        if tape is None:  # no Tape: a plain loop
            for t in range(self.steps):
                self.step(t)
            return self
        # the block's launches and its backward's recomputation are not a replayable sequence
        tape.stop_replay('a ti.ad.checkpointed block on the tape')
        self.before = _reads_of(tape.entries)
        rec = _Recorder(self)
        state.tape, state.launch_watch, Storage.host_watch = rec, self._watch_forward, \
            self._watch_host
        written = set()
        try:
            for t in range(self.steps):
                if self._seg is None or (self.every is not None and
                                         t - self._seg.start >= self.every):
                    self._seg = _Segment(t)
                    self.segments.append(self._seg)
                self._t = t
                self.step(t)
                self._flush_host()
                self._seg.stop = t + 1
                if t == min(1, self.steps - 1) and self.every is None:
                    self.every = self._every_from_budget(t + 1)
        except BaseException:
            for seg in self.segments:  # (the Tape will not run this block's backward pass)
                _release(seg.snapshot.values())
            raise
        finally:
            state.tape, state.launch_watch, Storage.host_watch = tape, None, None
        self.all_reads = set()
        for seg in self.segments:
            written.update(seg.snapshot)
            self.all_reads |= seg.reads
        # what a segment reads without snapshotting it, and no later segment writes (so that no
        # undo brings it back), must still hold its value when the backward pass comes
        later, check = set(), set()
        for seg in reversed(self.segments):
            check |= (seg.reads - seg.snapshot.keys()) - later
            later |= seg.snapshot.keys()
        self.reads = {st: st.version for st in check}
        self.written = written
        tape.entries.append(('checkpoint', self, ()))
        return self

    def _every_from_budget(self, done):
        """The largest k whose snapshots (ceil(T/k) + 1 copies of the fields the first steps
        overwrote: a ping-pong writes its two halves in turn) and undo frames (k steps' worth)
        fit in budget_bytes."""
        seg, T = self._seg, self.steps
        S = sum(st.nbytes for st in seg.snapshot) + sum(st.nbytes for st in seg.grads)
        U = math.ceil(sum(sum(st.nbytes for st in _writes(e)) for e in seg.entries) / done)

        def need(k):
            return (math.ceil(T / k) + 1) * S + k * U
        best = None
        for k in range(1, T + 1):
            if need(k) <= self.budget:
                best = k
        if best is None:
            least = min(need(k) for k in range(1, T + 1))
            raise CheckpointBudgetError(
                f'checkpointed: budget_bytes={self.budget} is less than the {least} bytes the '
                f'snapshots and undo frames need at the best segment length (a step overwrites '
                f'{S} bytes of fields, its launches {U})')
        return best

    def _watch_forward(self, kernel, inst, rargs):
        self._flush_host()
        reads, writes, grads, rnd, arrays = _launch_info(inst)
        name = kernel.__name__
        if rnd:
            raise CheckpointError(f'checkpointed: kernel {name} uses ti.random, whose numbers '
                                  'depend on the launch count: the recomputation would draw '
                                  'others. Draw them into a field before the block instead')
        if arrays:
            raise CheckpointError(f'checkpointed: kernel {name} takes ndarray arguments; a '
                                  'checkpointed step can use fields only')
        seg = self._seg
        for f in writes:
            st = _storage(f, name)
            self.fields[st] = f
            if st not in seg.snapshot:
                self.first.setdefault(st, st.version)
                seg.snapshot[st] = _save(st)
        for f in grads:
            seg.grads.add(_storage(f, name))
        for f in reads:
            if f.buffer.primal is None and node_of(f) is None:
                st = f.storage
                self.fields[st] = f
                self.reads[st] = 0
                seg.reads.add(st)
        self._pending.append((kernel, inst, tuple(rargs)))

    def _watch_host(self, st):
        """A Storage about to be overwritten from Python scope inside a step: a field's is
        snapshotted first (its old contents are still there) and its new contents captured at
        the next launch or the step's end."""
        f = self._field_of(st)
        if f is None:
            return
        self.fields[st] = f
        if st not in self._seg.snapshot:
            self.first.setdefault(st, st.version)
            self._seg.snapshot[st] = _save(st)
            state.runtime().flush()  # the copy runs before the host writes the memory
        if st not in self._host:
            self._host.append(st)

    def _field_of(self, st):
        f = self.fields.get(st)
        if f is not None:
            return f
        for f in state.fields:
            if f._storage is st and f.buffer.primal is None:
                return f
        return None

    def _flush_host(self):
        while self._host:
            st = self._host.pop(0)
            st.for_host_read()
            data = st.buf.host[:st.nbytes].copy()
            self._seg.entries.append(_Entry('host', None, (st, data), None, [], self._t))

    def _record(self, kind, fn, args, kwargs):
        launches, self._pending = self._pending, []
        self._seg.entries.append(_Entry(kind, fn, args, kwargs, launches, self._t))

    # -------------------------------------------------------------- backward
    def backward(self):
        """Run the adjoints of the recorded steps (the Tape calls this in reverse order)."""
        if state.fwd is not None:
            raise CheckpointError('a Tape holding a checkpointed block cannot close inside '
                                  'FwdMode')
        for st, v in self.reads.items():
            if st.version != v:
                f = self.fields[st]
                raise CheckpointError(
                    f'checkpointed {self.step.__name__ if hasattr(self.step, "__name__") else ""}: '
                    f'field {f.name}, which the steps read, changed after them (from Python scope, '
                    'or by a launch after the block); the recomputed steps would read the new '
                    'values and the gradient would be wrong. Change it before the block, or '
                    'write a new field')
        # what the forward pass left, given back when the Tape is done (Tape.grad -> finish)
        self.finals = [(st, _save(st)) for st in self.written]
        # a launch must undo its writes to these after its adjoint: an earlier segment (or a
        # launch before the block) read them without snapshotting them
        # (after a grad_replaced call, which may have read anything: every write is undone)
        self.cross = set(self.before) if self.before is not None else set(self.written)
        for seg in self.segments:
            self.cross |= seg.reads - set(seg.snapshot)
        for seg in reversed(self.segments):
            self._backward_segment(seg)
        self.segments = []
        # every write to these was undone: they hold what they held before the block, and an
        # earlier block's check of their version (what it read) must pass
        for st in self.cross & self.written:
            st.version = self.first[st]

    def _backward_segment(self, seg):
        _restore(seg.snapshot.items())
        seg.snapshot = {}
        grads = [(st, _save(st)) for st in seg.grads]
        frames = []
        tape = state.tape
        state.tape, state.launch_watch = None, self._watch_replay
        self._seen = {}  # Buffer -> {first index or None: {read patterns}}, this segment so far
        try:
            for e in seg.entries:
                self._frame, self._expect = [], list(e.launches)
                self._replay(e)
                if self._expect:
                    k, _, a = self._expect[0]
                    raise CheckpointError(
                        f'checkpointed: recomputing step {e.step}, {e.fn.__name__} did not launch '
                        f'{_show(k, a)} as it did in the forward pass (Python state it depends '
                        'on changed); the gradient would be wrong')
                frames.append(self._frame)
        finally:
            state.tape, state.launch_watch = tape, None
            self._frame = None
        _restore(grads)  # the replay leaves the gradients as the adjoints before it left them
        try:
            for e, frame in zip(reversed(seg.entries), reversed(frames)):
                if e.kind == 'kernel':
                    if has_adjoint(e.fn.instance(e.args)[0]):  # (else nothing to propagate)
                        e.fn.grad(*e.args)
                elif e.kind == 'custom':
                    if e.fn.grad is None:
                        raise AutodiffError(f'{e.fn.__name__} is grad_replaced but has no '
                                            'grad_for function')
                    e.fn.grad(*e.args, **e.kwargs)
                _restore(frame)
                frame.clear()
        finally:
            for frame in frames:
                _restore(frame)

    def _replay(self, e):
        if e.kind == 'kernel':
            e.fn(*e.args)
        elif e.kind == 'custom':
            e.fn.__wrapped__(*e.args, **e.kwargs)
        else:
            st, data = e.args
            self._frame.append((st, _save(st)))
            state.runtime().flush()  # the copy runs before the host writes the memory
            st.for_host_overwrite()
            st.buf.host[:st.nbytes] = data

    def _watch_replay(self, kernel, inst, rargs):
        exp = self._expect.pop(0) if self._expect else None
        if exp is None or exp[0] is not kernel or not _same_args(exp[2], tuple(rargs)):
            was = f'where the forward pass launched {_show(exp[0], exp[2])}' if exp else \
                'which the forward pass did not launch there'
            raise CheckpointError(
                f'checkpointed: a grad_replaced function launched {_show(kernel, tuple(rargs))} '
                f'when recomputed, {was}: it depends on Python state that changed between the '
                'passes, and the gradient would be wrong. Pass that state as an argument of '
                'the step')
        # undo what this launch overwrites where an earlier launch of the segment read it (its
        # adjoint needs the old values back) or an earlier segment relies on it
        saved = {st for st, _ in self._frame}
        writes, reads = launch_summary(inst, tuple(rargs))
        seen = self._seen
        for buf, kind, pat, _ in writes:
            f = binding.owner(buf)
            if f is None or buf.primal is not None:
                continue
            st = f.storage
            if st in saved or not (st in self.cross or _read_before(seen.get(buf), pat)):
                continue
            self._frame.append((st, _save(st)))
            saved.add(st)
        for buf, kind, pat, _ in reads:
            seen.setdefault(buf, {}).setdefault(pat[0] if pat else None, set()).add(pat)

    def finish(self):
        """After the whole Tape's backward pass: the fields the steps wrote get back the values
        the forward pass left (as a full Tape leaves them)."""
        finals, self.finals = self.finals, []
        _restore(finals)

    def __call__(self):
        """Run the steps again (Tape(grad_check=...) replays the forward pass)."""
        for t in range(self.steps):
            self.step(t)


def _read_before(by_first, pat):
    """Whether an element of write pattern `pat` may have been read (patterns `by_first`,
    indexed by their first index; None entries vary)."""
    if not by_first:
        return False
    if pat and pat[0] is not None:
        buckets = [by_first.get(pat[0], ()), by_first.get(None, ())]
    else:
        buckets = by_first.values()
    return any(all(a is None or b is None or a == b for a, b in zip(p, pat))
               for bucket in buckets for p in bucket)


def _reads_of(entries):
    """The primal Storages the Tape's entries so far read (launches, earlier blocks), or None
    where a grad_replaced call (whose launches the Tape does not see) may have read anything."""
    out = set()
    for e in entries:
        if e[0] == 'kernel':
            for f in _launch_info(e[1].instance(e[2])[0])[0]:
                if f.buffer.primal is None and node_of(f) is None:
                    out.add(f.storage)
        elif e[0] == 'checkpoint':
            out |= e[1].all_reads
        else:
            return None
    return out


def _writes(e):
    out = []
    for _, inst, _ in e.launches:
        for f in _launch_info(inst)[1]:
            if f.storage not in out:
                out.append(f.storage)
    if e.kind == 'host':
        out.append(e.args[0])
    return out


class _Recorder:
    """state.tape while a block's steps run: keeps their operations in the current segment."""

    def __init__(self, block):
        self.block = block

    def record(self, kernel, args):
        self.block._record('kernel', kernel, args, None)

    def record_custom(self, fn, args, kwargs):
        self.block._record('custom', fn, args, kwargs)


def checkpointed(step, steps, every=None, budget_bytes=None):
    """`ti.ad.checkpointed(step, steps=T)` inside `with ti.ad.Tape(loss):` runs `step(t)` for
    t = 0 .. T-1 and records it so that the backward pass keeps a snapshot of the fields the
    steps overwrite every `every` steps (ceil(sqrt(T)) by default; or the fewest snapshots
    whose memory fits `budget_bytes`) and recomputes each segment from its snapshot. Outside a
    Tape it is a plain loop. Returns the block (its `.every`, and `ti.ad.checkpoint_memory()`
    for the bytes its buffers took)."""
    return Checkpointed(step, steps, every, budget_bytes).run()
