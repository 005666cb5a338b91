"""Autodiff pass: forward mode (tangents, Jacobian-vector products) on the IR.

The tangent task keeps the primal statements in place and adds, after each active one, its
tangent from the op table (`optable.jvp`). Buffers' tangents live in their `.dual` Buffers:
  gload x[I] -> dx = x.dual[I]     x[I] = v -> x.dual[I] = dv     x[I] += v -> x.dual[I] += dv
Locals get tangent locals; control flow keeps its shape, so no values need storing.
Applied to an adjoint task it gives forward-over-reverse: Hessian-vector products."""
from .. import ir
from ..errors import AutodiffError, located
from .. import optable
from ..irbuild import Builder, Value, building
from .activity import analyse
from . import extremum
from .reverse import replay_task, _check_random
from ..passes.simplify import simplify
from ..passes.tasks import Task


class Tangent:
    def __init__(self, active, builder, ties=None, on_extremum=None):
        self.b = builder     # emits the tangent task
        self.ties = ties     # extremum.Ties: the atomic max/min contenders and their tie counts
        # a replay-only pass (global writes dropped) if set: what an atomic max/min becomes
        self.on_extremum = on_extremum
        self.active = active
        self.m = {}      # primal stmt -> its clone in the tangent task
        self.dot = {}    # primal value -> tangent Value (same block)
        self.dvar = {}   # primal local -> tangent local

    def tan(self, s):
        """The tangent of a primal value (None if it has none)."""
        return self.dot.get(s)

    def run(self, block):
        for s in block.stmts:
            self.visit(s)

    def visit(self, s):
        op = s.op
        if op in ('if', 'for', 'while', 'parfor'):
            args = [self.m[a] for a in s.args]
            blocks = [ir.Block() for _ in s.blocks]
            c = self.b.emit(op, s.dtype, args, s.attrs, blocks=blocks, loc=s.loc)
            self.m[s] = c
            for pb, nb in zip(s.blocks, blocks):
                with self.b.open(nb):
                    self.run(pb)
            return
        if self.on_extremum is not None and op in ('gstore', 'atomic', 'print'):
            if self.ties and s in self.ties.stmts:
                self.on_extremum(self, s)
            return
        c = self.b.emit(op, s.dtype, [self.m.get(a, a) for a in s.args], s.attrs, loc=s.loc)
        self.m[s] = c
        f = s.attrs.get('buf')
        if op == 'gload':
            if s in self.active:
                self.dot[s] = Value(self.b.emit('gload', s.dtype, c.args, {**s.attrs, 'buf': f.dual}))
        elif op in ('gstore', 'atomic') and f.dual is not None:
            if op == 'atomic' and s.attrs['fn'] not in ('add', 'sub'):
                if self.ties and s in self.ties.stmts:
                    return  # the passes after the task give the target its tangent
                if s.value_arg in self.active:
                    raise located(AutodiffError, f'atomic {s.attrs["fn"]} into {f.name}, which has '
                                  'a dual, cannot be differentiated', s.loc)
                return
            d = self.tan(s.value_arg)
            if d is None and op == 'atomic':
                return
            d = self.b.value(0.0, f.dtype) if d is None else self.b.cast(d, f.dtype)
            self.b.emit(op, s.dtype, c.args[:-1] + [d.stmt], {**s.attrs, 'buf': f.dual}, loc=s.loc)
        elif op == 'alloca':
            if s in self.active:
                v = self.b.emit('alloca', s.dtype, attrs=s.attrs)
                self.dvar[s] = v
        elif op == 'store':
            var = s.args[0]
            if var in self.dvar:
                d = self.tan(s.args[1])
                self.b.emit('store', None, [self.dvar[var], self.b.value(0.0, var.dtype) if d is None
                                          else self.b.cast(d, var.dtype)])
        elif op == 'load':
            if s in self.active and s.args[0] in self.dvar:
                self.dot[s] = Value(self.b.emit('load', s.dtype, [self.dvar[s.args[0]]]))
        elif s in self.active:
            self.dot_of_pure(s)

    def dot_of_pure(self, s):
        op = s.op
        dargs = [self.tan(a) for a in s.args]
        if all(d is None for d in dargs):
            return
        if op == 'cast':
            if s.args[0].dtype.is_float:
                self.dot[s] = self.b.cast(dargs[0], s.dtype)
            return
        if not optable.has_rule(op):
            raise located(AutodiffError, f'no derivative rule for the IR op {op!r}', s.loc)
        d = optable.jvp(self.b, op, [Value(self.m[a]) for a in s.args], Value(self.m[s]), dargs)
        if d is not None:
            self.dot[s] = self.b.cast(d, s.dtype)


def tangent_task(task, ties=None, on_extremum=None, suffix='_jvp'):
    """The tangent (JVP) version of a task: primal plus tangents; None if nothing is active.
    With `on_extremum`, a replay of it instead: values and tangents recomputed, global writes
    dropped, each atomic max/min contender (of `ties`) turned into what on_extremum emits."""
    active = analyse(task.body, 'dual')
    body = ir.Block()
    b = Builder()
    with building(b), b.open(body):
        Tangent(active, b, ties, on_extremum).run(task.body)
    simplify(body)
    return Task(task.kind, body, task.name + suffix)


def _add_winner_tangents(ties):
    """The last pass of an atomic max/min's tangent: x.dual[I] += dv / k[I] where v won."""
    def on(tg, s):
        d = tg.tan(s.value_arg)
        if d is None:
            return
        f = s.buf
        b, m = tg.b, tg.m

        def then():
            share = b.binary('div', b.cast(d, f.dtype), ties.count(b, s, m))
            b.emit('atomic', f.dual.dtype, [m.get(i, i) for i in s.indices] + [share.stmt],
                   {'buf': f.dual, 'comp': s.attrs['comp'], 'fn': 'add'}, loc=s.loc)
        ties.if_won(b, s, m, then)
    return on


def _temporaries_get_duals(tasks):
    """Kernel-internal temporaries (locals shared between tasks, and their gradients in an
    adjoint) carry tangents like any field."""
    for t in tasks:
        for s in ir.walk(t.body):
            f = s.attrs.get('buf')
            if f is None or not f.dtype.is_float:
                continue
            base = f.primal if f.primal is not None else f
            if base.is_temp and f.dual is None:
                f.derive('dual')


def tangent_tasks(tasks):
    """The JVP version of a kernel's tasks (or of its adjoint's: forward-over-reverse)."""
    _temporaries_get_duals(tasks)
    tasks = [t.clone() for t in tasks]
    ties = extremum.plan(tasks, 'dual', tasks[0].name if tasks else 'kernel')
    if not ties:
        return [tangent_task(t) for t in tasks]
    out = [ties.zero_task()]
    for i, t in enumerate(tasks):
        out.append(tangent_task(t, ties))
        if ties.in_task(i):  # atomic max/min: count the winners, clear, add their tangents
            _check_random(t.body, analyse(t.body, 'dual'))
            out.append(replay_task(t, ties, ties.count_and_clear('dual'), '_tie_count'))
            out.append(tangent_task(t, ties, _add_winner_tangents(ties), '_tie_tangent'))
    return out
