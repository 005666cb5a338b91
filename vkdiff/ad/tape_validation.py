"""API stage, launch-level AD: `Tape(validation=True)`, the run-time, element-by-element version
of the Tape's access check. After each recorded launch, a marker version of the kernel (its
writes dropped, each read of a field or of an ndarray argument also setting a flag in a read
mask of the same shape) finds exactly which elements the launch read; their values are kept.
A field's mask is a temporary Buffer; an ndarray parameter's mask is one more array argument
(role 'arg', the parameter's run-time shape) bound to an i32 ndarray shaped like the array
passed, so the marks follow the array whichever parameter it is passed to. At the Tape's exit,
any of them that a later launch changed means the adjoint of the earlier launch would replay a wrong value: an AccessRuleError (an
AutodiffError and a TaichiAssertionError, as Taichi's checker raises)."""
import weakref

import numpy as np

from .. import ir
from .. import types as T
from ..errors import AccessRuleError
from ..passes.simplify import simplify
from ..passes.tasks import Task
from ..lang import binding, state
from ..launch.compiled import TaskList
from ..lang.ndarray import Ndarray
from ..launch.ndarray_args import Bound
from ..launch.kernel import LaunchArgs

_masks = weakref.WeakKeyDictionary()  # Buffer -> its read mask (a temporary Buffer)


def _mask_of(buf):
    m = _masks.get(buf)
    if m is None or m.shape != buf.shape:
        m = _masks[buf] = ir.Buffer(f'{buf.name}.readmask', T.i32, buf.shape, buf.elem_shape,
                                    role='temp')
    return m


def marker_tasks(tasks, nparams=0):
    """Copies of the tasks that only mark the elements they read: (tasks, the field Buffers they
    read, [(ndarray parameter index, index of its mask parameter)]). `_mask_of(buf)` is the i32
    temporary holding the marks of field `buf`; the mask of ndarray parameter k is one more
    array parameter (numbered from `nparams` on) with k's run-time shape."""
    out, fields, arg_masks = [], [], {}
    for t in tasks:
        body = ir.clone_block(t.body, {})
        for s in list(ir.walk(body)):
            if s.op in ('gstore', 'atomic'):
                if s.op == 'atomic' and any(s in u.args for u in ir.walk(body)):
                    continue  # its old value is used: keep it (rare)
                s.parent.stmts.remove(s)
            elif s.op == 'gload' and s.buf.role in ('field', 'arg') and not s.buf.is_bookkeeping:
                if s.buf.role == 'field':
                    mask = _mask_of(s.buf)
                    if s.buf not in fields:
                        fields.append(s.buf)
                else:
                    mask = arg_masks.get(s.buf)
                    if mask is None:
                        mask = arg_masks[s.buf] = ir.Buffer(
                            f'{s.buf.name}.readmask', T.i32, s.buf.shape, s.buf.elem_shape,
                            role='arg', meta={'dims': s.buf.meta['dims'],
                                              'param': nparams + len(arg_masks)})
                one = ir.const(1, mask.dtype)
                pos = s.parent.stmts.index(s) + 1
                s.parent.insert(pos, one)
                s.parent.insert(pos + 1, ir.Stmt('gstore', None, list(s.indices) + [one],
                                                 {'buf': mask, 'comp': s.attrs['comp']}))
        simplify(body)
        out.append(Task(t.kind, body, t.name + '_readmarks'))
    return out, fields, [(b.meta['param'], m.meta['param']) for b, m in arg_masks.items()]


class ReadLog:
    def __init__(self):
        self.entries = []   # (kernel name, array name, its values now, mask of elements read,
        #                     values read)
        self._markers = {}
        self._arg_masks = {}  # (mask parameter, shape, element shape) -> i32 Ndarray

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
            kir = getattr(inst, 'kir', None)
            params = kir.arg_arrays if kir is not None else []
            tasks, bufs, arg_masks = marker_tasks(inst.tasks, len(params))
            marker = self._markers[id(inst)] = (
                TaskList(inst.name + '.readmarks', tasks, inst.push, inst.packer, inst.converters),
                [(binding.owner(b), binding.storage_for(_mask_of(b))) for b in bufs],
                [(p, m, params[p].name) for p, m in arg_masks])
        tl, fields, arg_masks = marker
        for f, mask in fields:
            mask.for_host_overwrite()[...] = 0
        masks = self._bind_masks(rargs, arg_masks) if arg_masks else []
        tl.launch(self._launch_args(rargs, masks) if masks else rargs)
        for f, mask in fields:
            self._keep(kernel, f.name, f.to_numpy, mask.for_host_read())
        for (p, _, pname), m in zip(arg_masks, masks):
            a = rargs.arrays[p]
            if a.array is not None:
                self._keep(kernel, a.array.name, a.array.to_numpy, m.array.to_numpy())
            else:
                host = a.host
                self._keep(kernel, pname, lambda: host, m.array.to_numpy())

    def _bind_masks(self, rargs, arg_masks):
        """A zeroed i32 ndarray shaped like the array bound to each marked parameter."""
        out = []
        for p, mp, _ in arg_masks:
            a = rargs.arrays[p]
            key = (mp, a.shape, a.elem_shape)
            m = self._arg_masks.get(key)
            if m is None:  # (a 0-sized host array: the kernel reads nothing, any mask will do)
                m = self._arg_masks[key] = Ndarray(T.i32, tuple(max(n, 1) for n in a.shape),
                                                   a.elem_shape, name='readmask')
            m.fill(0)
            out.append(Bound(m, None, a.shape, T.i32, a.elem_shape))
        return out

    @staticmethod
    def _launch_args(rargs, masks):
        la = LaunchArgs(rargs)
        la.arrays = list(rargs.arrays) + masks
        return la

    def _keep(self, kernel, name, values, marks):
        vals = values()
        read = (np.asarray(marks) != 0).reshape(vals.shape)
        if read.any():
            self.entries.append((kernel.__name__, name, values, read, vals[read].copy()))

    def check(self):
        for kname, name, values, read, old in self.entries:
            now = values()[read]
            same = now == old
            if now.dtype.kind == 'f':
                same |= np.isnan(now) & np.isnan(old)
            if not same.all():
                where = np.argwhere(read)[np.flatnonzero(~same)[0]]
                raise AccessRuleError(
                    f'Tape(validation=True): {int((~same).sum())} element(s) of {name} that '
                    f'{kname} read were overwritten later in the tape (first: {name}'
                    f'{[int(w) for w in where]}); the gradient would be wrong. Write to a new '
                    'field instead.')
