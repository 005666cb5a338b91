"""Autodiff: `Tape(validation=True)`, the run-time, element-by-element version of the Tape's
access check. After each recorded launch, a marker version of the kernel (its writes dropped, each
read of a field also setting a flag in that field's read mask) finds exactly which elements the
launch read; their values are kept. At the Tape's exit, any of them that a later launch changed
means the adjoint of the earlier launch would replay a wrong value: an AutodiffError."""
import numpy as np

from .. import ir
from ..errors import AutodiffError


def _mask_of(field):
    m = getattr(field, '_readmask', None)
    if m is None or m._generation != field._generation:
        from ..lang.field import Field
        m = Field('i32', field.shape, field.elem_shape, name=f'{field.name}.readmask')
        m.is_temporary = True
        field._readmask = m
    return m


def marker_tasks(tasks):
    """Copies of the tasks that only mark the elements they read."""
    from ..passes.simplify import simplify
    from ..passes.tasks import Task
    out, fields = [], []
    for t in tasks:
        body = ir.clone_block(t.body, {})
        for s in list(ir.walk(body)):
            if s.op in ('gstore', 'atomic'):
                if s.op == 'atomic' and any(s in u.args for u in ir.walk(body)):
                    continue  # its old value is used: keep it (rare)
                s.parent.stmts.remove(s)
            elif s.op == 'gload' and not getattr(s.field, 'is_temporary', False) \
                    and s.field.is_grad_of is None:
                mask = _mask_of(s.field)
                if s.field not in fields:
                    fields.append(s.field)
                one = ir.const(1, mask.dtype)
                pos = s.parent.stmts.index(s) + 1
                s.parent.insert(pos, one)
                s.parent.insert(pos + 1, ir.Stmt('gstore', None, list(s.indices) + [one],
                                                 {'field': mask, 'comp': s.attrs['comp']}))
        simplify(body)
        out.append(Task(t.kind, body, t.name + '_readmarks'))
    return out, fields


class ReadLog:
    def __init__(self):
        self.entries = []   # (kernel name, field, mask, values read)
        self._markers = {}

    def record(self, kernel, args):
        from ..lang import state
        tape, state.tape = state.tape, None  # the fills and reads below are not the user's
        try:
            self._record(kernel, args)
        finally:
            state.tape = tape

    def _record(self, kernel, args):
        from ..lang.compiled import TaskList
        inst, rargs = kernel.instance(args)
        marker = self._markers.get(id(inst))
        if marker is None:
            tasks, fields = marker_tasks(inst.tasks)
            marker = self._markers[id(inst)] = (
                TaskList(inst.name + '.readmarks', tasks, inst.push, inst.packer, inst.converters),
                fields)
        tl, fields = marker
        for f in fields:
            _mask_of(f).fill(0)
        tl.launch(rargs)
        for f in fields:
            read = _mask_of(f).to_numpy() != 0
            if read.any():
                self.entries.append((kernel.__name__, f, read, f.to_numpy()[read].copy()))

    def check(self):
        for kname, field, read, old in self.entries:
            now = field.to_numpy()[read]
            same = now == old
            if now.dtype.kind == 'f':
                same |= np.isnan(now) & np.isnan(old)
            if not same.all():
                where = np.argwhere(read)[np.flatnonzero(~same)[0]]
                raise AutodiffError(
                    f'Tape(validation=True): {int((~same).sum())} element(s) of {field.name} that '
                    f'{kname} read were overwritten later in the tape (first: {field.name}'
                    f'{list(where)}); the gradient would be wrong. Write to a new field instead.')
