"""API stage, launch-level AD: `Tape(validation=True)`, the run-time, element-by-element version
of the Tape's access check. After each recorded launch, a marker version of the kernel (its writes dropped, each
read of a field also setting a flag in that field's read mask) finds exactly which elements the
launch read; their values are kept. At the Tape's exit, any of them that a later launch changed
means the adjoint of the earlier launch would replay a wrong value: an AccessRuleError (an
AutodiffError and a TaichiAssertionError, as Taichi's checker raises)."""
import weakref

import numpy as np

from .. import ir
from .. import types as T
from ..errors import AccessRuleError
from ..passes.simplify import simplify
from ..passes.tasks import Task
from ..lang import binding, state
from ..lang.compiled import TaskList

_masks = weakref.WeakKeyDictionary()  # Buffer -> its read mask (a temporary Buffer)


def _mask_of(buf):
    m = _masks.get(buf)
    if m is None or m.shape != buf.shape:
        m = _masks[buf] = ir.Buffer(f'{buf.name}.readmask', T.i32, buf.shape, buf.elem_shape,
                                    role='temp')
    return m


def marker_tasks(tasks):
    """Copies of the tasks that only mark the elements they read: (tasks, the user Buffers they
    read). `_mask_of(buf)` is the i32 temporary holding the marks of `buf`."""
    out, fields = [], []
    for t in tasks:
        body = ir.clone_block(t.body, {})
        for s in list(ir.walk(body)):
            if s.op in ('gstore', 'atomic'):
                if s.op == 'atomic' and any(s in u.args for u in ir.walk(body)):
                    continue  # its old value is used: keep it (rare)
                s.parent.stmts.remove(s)
            elif s.op == 'gload' and s.buf.role == 'field':
                mask = _mask_of(s.buf)
                if s.buf not in fields:
                    fields.append(s.buf)
                one = ir.const(1, mask.dtype)
                pos = s.parent.stmts.index(s) + 1
                s.parent.insert(pos, one)
                s.parent.insert(pos + 1, ir.Stmt('gstore', None, list(s.indices) + [one],
                                                 {'buf': mask, 'comp': s.attrs['comp']}))
        simplify(body)
        out.append(Task(t.kind, body, t.name + '_readmarks'))
    return out, fields


class ReadLog:
    def __init__(self):
        self.entries = []   # (kernel name, field, mask of elements read, values read)
        self._markers = {}

    def record(self, kernel, args):
        tape, state.tape = state.tape, None  # the fills and reads below are not the user's
        try:
            self._record(kernel, args)
        finally:
            state.tape = tape

    def _record(self, kernel, args):
        inst, rargs = kernel.instance(args)
        marker = self._markers.get(id(inst))
        if marker is None:
            tasks, bufs = marker_tasks(inst.tasks)
            marker = self._markers[id(inst)] = (
                TaskList(inst.name + '.readmarks', tasks, inst.push, inst.packer, inst.converters),
                [(binding.owner(b), binding.storage_for(_mask_of(b))) for b in bufs])
        tl, fields = marker
        for f, mask in fields:
            mask.for_host_overwrite()[...] = 0
        tl.launch(rargs)
        for f, mask in fields:
            vals = f.to_numpy()
            read = (mask.for_host_read() != 0).reshape(vals.shape)
            if read.any():
                self.entries.append((kernel.__name__, f, read, vals[read].copy()))

    def check(self):
        for kname, field, read, old in self.entries:
            now = field.to_numpy()[read]
            same = now == old
            if now.dtype.kind == 'f':
                same |= np.isnan(now) & np.isnan(old)
            if not same.all():
                where = np.argwhere(read)[np.flatnonzero(~same)[0]]
                raise AccessRuleError(
                    f'Tape(validation=True): {int((~same).sum())} element(s) of {field.name} that '
                    f'{kname} read were overwritten later in the tape (first: {field.name}'
                    f'{list(where)}); the gradient would be wrong. Write to a new field instead.')
