"""API stage, launch-level reverse mode: undo frames of a plain `ti.ad.Tape`. A launch that
overwrites field elements an earlier launch of the Tape read (Taichi's access rule 1 across
launches: diff_sph's `boundary_handle` clamps F_pos in place after `advance` wrote it and
earlier kernels read it) is made correct instead of refused: just before it runs, a device copy
of each field it is about to overwrite is kept (its undo frame); in the backward pass that copy
is put back right before the launch's adjoint, so that adjoint, and every earlier one, sees
exactly the fields its launch saw. The Tape keeps one more copy of each such field as the
forward pass left it and puts it back when the backward pass is done.

Which writes need a frame comes from the same static index patterns as the Tape's check
(autodiff/access_rules.launch_summary), kept incrementally here because the copy must be made
before the launch runs. Only dense fields get frames; an overwritten ndarray, sparse or dynamic
field is left to the Tape's check, which still refuses it. Opt-in, `ti.ad.Tape(loss,
undo=True)`, for now: without it the Tape refuses these overwrites (AccessRuleError) as before. The memory cost: `Tape.undo_bytes`
(the frames' bytes, plus the final copies) and ad/checkpoint.memory_stats()."""
from ..autodiff.access_rules import _breaks, _overlap, launch_summary
from ..lang import binding
from ..lang.dynpool import node_of
from ..lang.sparse import guards_of
from .checkpoint import _pool, _restore, _save


class UndoLog:
    def __init__(self, enabled):
        self.enabled = enabled  # Tape(undo=True)
        self.reads = {}    # Buffer -> {first index or None -> {(pattern, kind): stmt}}
        self.frames = {}   # entry index -> [(Storage, copy)]
        self.bytes = 0     # bytes the frames hold (and, in the backward pass, the final copies)
        self.peak = 0

    def before_launch(self, index, inst, rargs):
        """Launch `index` of the Tape is about to run: keep a frame of the fields it overwrites
        that an earlier launch read, then index its own reads."""
        if getattr(rargs, 'arrays', None):
            return  # ndarray arguments: left to the Tape's check
        writes, reads = launch_summary(inst, tuple(rargs))
        frame, seen = [], set()
        for buf, kind, pat, stmt in writes:
            if buf.primal is not None or buf in seen or not self._conflict(buf, kind, pat, stmt):
                continue
            f = binding.owner(buf)
            if f is None or node_of(f) is not None or guards_of(f):
                continue  # the Tape's check refuses it
            seen.add(buf)
            frame.append((buf, f.storage, _save(f.storage)))
            self.bytes += f.storage.nbytes
        if frame:
            self.frames[index] = frame
            self.peak = max(self.peak, self.bytes)
        for buf, kind, pat, stmt in reads:
            if buf.primal is None:
                self.reads.setdefault(buf, {}).setdefault(pat[0] if pat else None, {}) \
                    .setdefault((pat, kind), stmt)

    def _conflict(self, buf, kind, pat, stmt):
        by_first = self.reads.get(buf)
        if not by_first:
            return False
        if pat and pat[0] is not None:
            buckets = [by_first.get(pat[0], {}), by_first.get(None, {})]
        else:
            buckets = list(by_first.values())
        return any(_overlap(p, pat) and _breaks(s, kind, stmt)
                   for bucket in buckets for (p, _), s in bucket.items())

    def framed(self, index):
        """The Buffers launch `index` overwrites under an undo frame (the Tape's check skips
        those writes)."""
        return {buf for buf, _, _ in self.frames.get(index, ())}

    def start_backward(self):
        """The fields the frames will rewind, as the forward pass left them (put back by
        finish())."""
        sts = {}
        for frame in self.frames.values():
            for _, st, _ in frame:
                sts[id(st)] = st
        self.finals = [(st, _save(st)) for st in sts.values()]
        self.bytes += sum(st.nbytes for st in sts.values())
        self.peak = max(self.peak, self.bytes)

    def rewind(self, index):
        """Before the adjoint of launch `index`: its fields as they were before it ran."""
        frame = self.frames.pop(index, None)
        if frame:
            _restore([(st, b) for _, st, b in frame])
            self.bytes -= sum(st.nbytes for _, st, _ in frame)

    def finish(self):
        for frame in self.frames.values():   # (a backward pass cut short by an error)
            for _, _, b in frame:
                _pool.put(b)
        self.frames = {}
        finals, self.finals = getattr(self, 'finals', []), []
        _restore(finals)
        self.bytes = 0
