"""Autodiff pass: the derivative of atomic max / min (`ti.atomic_max(x[I], v)`), reverse and
forward mode, with a tie rule that does not depend on execution order.

The result of a launch's atomic maxima into x[I] is m = the largest of the old x[I] and every
contribution v_j. Its derivative flows to the contender that won:
  * the contributions of the launch equal to m share it evenly (k ties: each gets 1/k);
  * the old value of x[I] gets it only if no contribution of the launch equals m
    (a contribution beats the value it was compared with; over several launches the latest
    launch that reached m wins, as its adjoint runs first and clears the gradient);
  * a contribution below m gets zero.
This needs the final m (x[I] after the launch: the adjoint reads it, the fields are left as
the forward pass wrote them) and the count k of tied winners, so each task with such atomics
gets extra passes that replay it (global writes dropped):
  reverse: count (k[I] += 1 where v == m), the adjoint (adj v += [v == m] x.grad[I] / k[I]),
           clear (x.grad[I] = 0 where v == m: the old value lost or tied);
  forward: the task, count + clear (x.dual[I] = 0 where v == m), add (x.dual[I] += dv / k[I]).
The counts are one i32 temporary per kernel (every target's elements at an offset), zeroed by a
task in front. What this cannot do right is an AutodiffError: the target also read or written
otherwise in the same task, written by a later task of the kernel, targets in several tasks,
max and min mixed, an ndarray argument as the target."""
import math

from .. import ir
from .. import types as T
from ..errors import AutodiffError, located
from ..irbuild import Value
from ..passes.tasks import Task
from .activity import analyse

FNS = ('max', 'min')


class Ties:
    """The kernel's atomic max/min statements whose target needs a `kind` ('grad' / 'dual')
    derivative: their tasks, and where each target's tie counts live."""

    def __init__(self, name):
        self.stmts = set()      # the contending atomic statements (of the cloned tasks)
        self.task_of = {}       # target Buffer -> index of the task holding its atomics
        self.offset = {}        # target Buffer -> its first element in `counts`
        self.counts = None      # the i32 temporary of tie counts (None: no targets)
        self.name = name

    def __bool__(self):
        return bool(self.stmts)

    def in_task(self, i):
        return any(k == i for k in self.task_of.values())

    # ---------------------------------------------------------------- emission helpers
    def count_index(self, b, s, m):
        """The element of `counts` that statement s's target element x[I] uses."""
        f = s.buf
        k = b.value(0, T.i32)
        for n, i in zip(f.shape, s.indices):
            k = b.binary('add', b.binary('mul', k, n), Value(m.get(i, i)))
        ncomp = math.prod(f.elem_shape)
        k = b.binary('add', b.binary('mul', k, ncomp), s.attrs['comp'] + self.offset[f])
        return k

    def won(self, b, s, m):
        """Whether s's contribution equals the final value of its target element (a bool)."""
        f = s.buf
        v = b.cast(Value(m.get(s.value_arg, s.value_arg)), f.dtype)
        cur = Value(b.emit('gload', f.dtype, [m.get(i, i) for i in s.indices],
                           {'buf': f, 'comp': s.attrs['comp']}, loc=s.loc))
        return b.binary('eq', v, cur)

    def count(self, b, s, m):
        """The number of tied winners at s's target element, as a float of its dtype (>= 1)."""
        c = Value(b.emit('gload', T.i32, [self.count_index(b, s, m).stmt],
                         {'buf': self.counts, 'comp': 0}, loc=s.loc))
        return b.cast(b.binary('max', c, 1), s.buf.dtype)

    def share(self, b, s, m, g):
        """A winner's share of `g` (the derivative of the target element), zero for a loser."""
        return b.select(self.won(b, s, m), b.binary('div', g, self.count(b, s, m)),
                        b.value(0.0, s.buf.dtype))

    def if_won(self, b, s, m, then):
        body = ir.Block()
        b.emit('if', None, [self.won(b, s, m).stmt], blocks=[body, ir.Block()], loc=s.loc)
        with b.open(body):
            then()

    def count_and_clear(self, kind):
        """The callback of the count pass: k[I] += 1 and x.<kind>[I] = 0 where v == m (for
        reverse mode the clear is a pass of its own, after the adjoint; kind None: count only)."""
        def on(rv, s):
            b, m = rv.b, rv.m

            def then():
                b.emit('atomic', T.i32, [self.count_index(b, s, m).stmt, b.value(1, T.i32).stmt],
                       {'buf': self.counts, 'comp': 0, 'fn': 'add'}, loc=s.loc)
                if kind is not None:
                    clear(b, s, m, kind)
            self.if_won(b, s, m, then)
        return on

    def clear(self, kind):
        def on(rv, s):
            self.if_won(rv.b, s, rv.m, lambda: clear(rv.b, s, rv.m, kind))
        return on

    def zero_task(self):
        """A parallel task zeroing the tie counts."""
        body = ir.Block()
        n = body.append(ir.const(self.counts.shape[0], T.i32))
        inner = ir.Block()
        loop = body.append(ir.Stmt('parfor', T.i32, [n], blocks=[inner]))
        z = inner.append(ir.const(0, T.i32))
        inner.append(ir.Stmt('gstore', None, [loop, z], {'buf': self.counts, 'comp': 0}))
        return Task('parallel', body, self.name + '_zero_tie_counts')


def clear(b, s, m, kind):
    d = getattr(s.buf, kind)
    b.emit('gstore', None, [m.get(i, i) for i in s.indices] + [b.value(0.0, d.dtype).stmt],
           {'buf': d, 'comp': s.attrs['comp']}, loc=s.loc)


def is_extremum(s):
    return s.op == 'atomic' and s.attrs.get('fn') in FNS


def plan(tasks, kind, name):
    """The Ties of a kernel's (cloned) tasks, checked: AutodiffError where the derivative would
    not be right."""
    ties = Ties(name)
    fn_of = {}
    for ti, t in enumerate(tasks):
        active = analyse(t.body, kind)
        for s in ir.walk(t.body):
            if not is_extremum(s) or getattr(s.buf, kind) is None:
                continue
            f = s.buf
            if s.value_arg not in active:
                continue  # a constant contender: counted below if the target has active ones
            fn_of.setdefault(f, s.attrs['fn'])
            ties.task_of.setdefault(f, ti)
    if not fn_of:
        return ties
    size = 0
    for f, ti in ties.task_of.items():
        for tj, t in enumerate(tasks):
            for s in ir.walk(t.body):
                if s.buf is not f:
                    continue
                what = f'atomic {fn_of[f]} into {f.name}, which ' + \
                    ('needs a gradient' if kind == 'grad' else 'has a dual')
                if is_extremum(s):
                    if s.attrs['fn'] != fn_of[f]:
                        raise located(AutodiffError, f'{what}, cannot be differentiated: atomic max '
                                      'and atomic min into the same field in one kernel', s.loc)
                    if tj != ti:
                        raise located(AutodiffError, f'{what}, cannot be differentiated: its atomic '
                                      'max/min sit in several loops of one kernel; split the kernel',
                                      s.loc)
                    ties.stmts.add(s)
                elif tj == ti:
                    raise located(AutodiffError, f'{what}, cannot be differentiated: the same loop '
                                  'also reads or writes it otherwise (the adjoint needs its final '
                                  'value); split the kernel', s.loc)
                elif tj > ti and s.op in ('gstore', 'atomic'):
                    raise located(AutodiffError, f'{what}, cannot be differentiated: a later loop '
                                  'of the kernel writes it again (the adjoint needs the value the '
                                  'max/min left)', s.loc)
        if f.role not in ('field', 'temp') or f.shape is None:
            s = next(x for x in ties.stmts if x.buf is f)
            raise located(AutodiffError, f'atomic {fn_of[f]} into {f.name} (an ndarray argument) '
                          'cannot be differentiated; use a field', s.loc)
        ties.offset[f] = size
        size += math.prod(f.shape) * math.prod(f.elem_shape)
    ties.counts = ir.Buffer(name + '.tie_counts', T.i32, (max(size, 1),), role='temp')
    return ties
