"""Pass (backend, first in `lower`): messages from kernels to the host. Each `print` statement
becomes the append of one record to the device log, which the host reads back at a sync.

The log is two Buffers the API layer binds to storage (launch/status.py):
  head  i32 (3,): [words reserved, records dropped, end of the records written]
  data  i32 (capacity,): records [message id, value words...] back to back.
A record reserves its words with one atomic add on head[0] (so records of parallel invocations
never overlap; their order is the device's); a record that fits is written and raises head[2] to
its end (atomic max), one that does not counts itself in head[1] and writes nothing. Values travel
as 32-bit words (narrow integers widened, f16 as f32, u1 as i32; 64-bit types as two words, low
first). The message table (`DeviceLog.messages`, id = index + 1) keeps each record's format at
compile time; `decode` turns the words back into (message, values)."""
import numpy as np

from .. import ir
from .. import types as T
from ..errors import CompileError, located
from . import printf

DEFAULT_CAPACITY = 1 << 18  # words of records (1 MiB)


class Message:
    """The format of one kind of record: `kind` ('print'), the literal texts around the values
    (len(dtypes) + 1), each value's printf specifier and travelling type, the source location."""

    def __init__(self, kind, text, specs, dtypes, loc=None):
        self.kind, self.text, self.specs, self.dtypes, self.loc = kind, text, specs, dtypes, loc

    @property
    def words(self):
        return 1 + sum(printf.storage(dt)[1] for dt in self.dtypes)

    def key(self):
        return (self.kind, self.text, self.specs, tuple(d.name for d in self.dtypes), str(self.loc))

    def render(self, values):
        """The printed text of a record's values."""
        out = [self.text[0]]
        for spec, v, t in zip(self.specs, values, self.text[1:]):
            out += [printf.format_value(spec, v), t]
        return ''.join(out)


class DeviceLog:
    """A program's device log: its Buffers and its message table (compile-time data only)."""

    def __init__(self, capacity=DEFAULT_CAPACITY):
        self.capacity = int(capacity)
        self.head = ir.Buffer('device_log_head', T.i32, (3,), role='temp')
        self.data = ir.Buffer('device_log', T.i32, (self.capacity,), role='temp')
        self.messages = []
        self._ids = {}

    def register(self, msg):
        """The id of `msg` in the table (the same format gets the same id)."""
        k = msg.key()
        if k not in self._ids:
            self.messages.append(msg)
            self._ids[k] = len(self.messages)
        return self._ids[k]

    def decode(self, head, data):
        """(records [(Message, values)], records dropped) from the host copies of the Buffers."""
        end, dropped = int(head[2]), int(head[1])
        words = np.asarray(data[:end], dtype=np.int32).view(np.uint32)
        records, pos = [], 0
        while pos < end:
            k = int(words[pos])
            if not 1 <= k <= len(self.messages):
                raise ValueError(f'internal: device log record at word {pos} has id {k}')
            msg = self.messages[k - 1]
            pos += 1
            values = []
            for dt in msg.dtypes:
                st, n = printf.storage(dt)
                w = words[pos:pos + n]
                pos += n
                values.append(_decode(w, st))
            records.append((msg, values))
        return records, dropped


def _decode(w, st):
    if n_words(st) == 2:
        bits = np.array([int(w[0]) | (int(w[1]) << 32)], np.uint64)
        return bits.view(st.np)[0].item()
    return np.array(w[:1], np.uint32).view(st.np)[0].item()


def n_words(dt):
    return 2 if dt.bits == 64 else 1


# ---------------------------------------------------------------- the pass
def lower_prints(task, log_fn, features=None):
    """Replace the task's `print` statements by appends to the log `log_fn()` returns (called
    only when the task prints). 64-bit values travel as two words split with 64-bit integer
    ops: without them (`features['int64']` false) printing one is a CompileError."""
    prints = [s for s in ir.walk(task.body) if s.op == 'print']
    if not prints:
        return
    log = log_fn()
    for s in prints:
        dtypes = tuple(a.dtype for a in s.args)
        wide = [dt for dt in dtypes if dt.bits == 64]
        if wide and features is not None and not features.get('int64'):
            raise located(CompileError, f'printing a {wide[0].name} value needs 64-bit integers '
                          '(shaderInt64), which this Vulkan device lacks; print a 32-bit cast '
                          'of it (ti.cast(x, ti.f32))', s.loc)
        msg = Message('print', tuple(s.attrs['text']), tuple(s.attrs['specs']), dtypes, s.loc)
        stmts = append_record(log, log.register(msg), s.args)
        block = s.parent
        i = block.stmts.index(s)
        block.stmts.pop(i)
        for k, x in enumerate(stmts):
            x.loc = s.loc
            block.insert(i + k, x)


def append_record(log, msg_id, values):
    """The IR statements appending the record [msg_id, values...] to `log` (a list to insert)."""
    out = []

    def add(op, dtype, args=(), attrs=None, blocks=()):
        return _put(out, ir.Stmt(op, dtype, args, attrs, blocks))

    words = [add('const', T.i32, attrs={'value': msg_id})]
    for v in values:
        words += _to_words(v, add)
    i32 = T.i32
    zero, n = add('const', i32, attrs={'value': 0}), add('const', i32, attrs={'value': len(words)})
    base = add('atomic', i32, [zero, n], {'buf': log.head, 'comp': 0, 'fn': 'add'})
    end = add('add', i32, [base, n])
    cap = add('const', i32, attrs={'value': log.capacity})
    fits = add('le', T.u1, [end, cap])
    then, other = [], []
    for k, w in enumerate(words):
        at = _put(then, ir.Stmt('add', i32, [base, _put(then, ir.const(k, i32))]))
        _put(then, ir.Stmt('gstore', None, [at, w], {'buf': log.data, 'comp': 0}))
    two = _put(then, ir.const(2, i32))
    _put(then, ir.Stmt('atomic', i32, [two, end], {'buf': log.head, 'comp': 0, 'fn': 'max'}))
    one = _put(other, ir.const(1, i32))
    _put(other, ir.Stmt('atomic', i32, [one, _put(other, ir.const(1, i32))],
                        {'buf': log.head, 'comp': 0, 'fn': 'add'}))
    add('if', None, [fits], blocks=[ir.Block(then), ir.Block(other)])
    return out


def _put(lst, s):
    lst.append(s)
    return s


def _to_words(v, add):
    """i32 statements carrying the value `v` (see the module docstring)."""
    dt = v.dtype
    st, n = printf.storage(dt)
    if st is not dt:
        v = add('cast', st, [v])
    if n == 1:
        return [v if st is T.i32 else add('bitcast', T.i32, [v])]
    if st is T.f64:
        v = add('bitcast', T.i64, [v])
        st = T.i64
    lo = add('cast', T.u32, [v])
    hi = add('cast', T.u32, [add('shr', st, [v, add('const', st, attrs={'value': 32})])])
    return [add('bitcast', T.i32, [lo]), add('bitcast', T.i32, [hi])]
