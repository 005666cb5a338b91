"""Autodiff pass: reverse mode on the IR. Each task gets an adjoint task; they run in reverse order.

For a block B the adjoint is R(B) = replay(B) then reverse(B): the replay recomputes the primal
values (global writes dropped), the reverse walks B backwards applying the derivative table.
  gload x[I]      -> atomic add of the value's adjoint into x.grad[I]
  x[I] = v        -> adj(v) += x.grad[I]          x[I] += v -> adj(v) += x.grad[I]
  local load/store   -> adjoints of locals are locals too (store: adj(v) += adj(var); adj(var) = 0)
  if c: T else: E -> if c: R(T) else: R(E), after restoring the locals the branch reads
  for i in range(n): body -> for i in reversed(range(n)): restore carried locals; R(body)
Locals carried from one loop iteration to the next are saved per iteration into a per-thread
array sized by the (compile-time) trip count; pure accumulators (`s += f(...)`) need no storage.
What cannot be differentiated exactly raises AutodiffError at the user's line.

Adjoints are SSA values where the control flow allows: a value (or a local) whose every use (load,
store) sits directly in the block that defines it gets all its contributions at the top level of
that block's reverse, so its adjoint is the running sum itself (the first contribution is the sum;
none: a constant 0), with no Function-storage variable to zero, load and store. Only adjoints
reached from nested blocks (a value defined outside a loop or branch and used inside it) are
variables. The nn1 adjoint of the mass-spring robot went from 794 variables to ~10
(tools/bench_ad_compile.py). VKDIFF_AD_SSA=0 makes every adjoint a variable (to measure)."""
import os

from .. import ir
from .. import types as T
from ..errors import AutodiffError, located
from .. import optable
from ..irbuild import Builder, Value, building
from .activity import analyse
from ..passes.simplify import simplify
from ..passes.tasks import Task
from .access_rules import check_rules
from . import extremum


# Accumulators (`s += f(...)`) need no per-iteration storage; VKDIFF_AD_ACCUMULATORS=0 turns the
# detection off (only to measure what it saves: tools/bench_ad_loops.py).
ACCUMULATORS = os.environ.get('VKDIFF_AD_ACCUMULATORS', '1') != '0'
SSA = os.environ.get('VKDIFF_AD_SSA', '1') != '0'


def _err(s, msg):
    return located(AutodiffError, msg, s.loc)


class Reverser:
    def __init__(self, body, active, builder, ad_stack_size=0, same=None, ties=None,
                 on_extremum=None):
        self.ties = ties     # extremum.Ties: the atomic max/min contenders and their tie counts
        self.on_extremum = on_extremum  # replay-only passes: what an atomic max/min becomes
        self.b = builder     # emits the adjoint (its insertion point moves through the blocks)
        self.active = active
        self.ad_stack_size = ad_stack_size
        self.m = {}
        self.adj = {}
        self.ck = {}
        self.snap = {}
        self.capacity = {}   # loop -> per-iteration storage size, for run-time trip counts
        self.flag = None     # 0-D i32 temporary Buffer set when a run-time trip count exceeds it
        self.clearing = False  # replaying to clear the gradients of overwritten elements
        stmts = list(ir.walk(body))
        self.users = {}
        for s in stmts:
            for a in s.args:
                self.users.setdefault(a, []).append(s)
        self.stores = {}
        for s in stmts:
            if s.op == 'store':
                self.stores.setdefault(s.args[0], []).append(s)
        self.sadj = {}   # SSA adjoints: statement -> its running sum (a Value), None while zero
        self.ssa = {s for s in active if SSA and self.straight(s, same or {})}

    def straight(self, s, same):
        """Whether every use of s is directly in its own block (`same` maps a block to the one its
        reverse is emitted with: a parallel task's prologue to the loop body), so all contributions
        to its adjoint come at the top level of that block's reverse, before the adjoint is read."""
        home = s.parent
        if s.op == 'alloca':  # a local: its loads and stores, strictly in its own block
            return 'size' not in s.attrs and all(
                u.parent is home and u.op in ('load', 'store') and u.args[0] is s
                for u in self.users.get(s, ()))
        home = same.get(home, home)
        return all(same.get(u.parent, u.parent) is home for u in self.users.get(s, ()))

    # ------------------------------------------------------------ emission helpers
    def v(self, s):
        return Value(self.m[s])

    def new_adj(self, s, dtype):
        if s in self.ssa:
            self.sadj[s] = None
            return
        a = self.b.emit('alloca', dtype)
        self.b.emit('store', None, [a, self.b.value(0.0, dtype)])
        self.adj[s] = a

    def has_adj(self, s):
        return s in self.adj or s in self.sadj

    def acc(self, s, g):
        if g is None:
            return
        if s in self.sadj:
            g = self.b.cast(g, s.dtype)
            cur = self.sadj[s]
            self.sadj[s] = g if cur is None else self.b.binary('add', cur, g)
            return
        a = self.adj.get(s)
        if a is None:
            return
        cur = Value(self.b.emit('load', a.dtype, [a]))
        self.b.emit('store', None, [a, self.b.binary('add', cur, self.b.cast(g, a.dtype))])

    def grad(self, s):
        if s in self.sadj:
            g = self.sadj[s]
            return g if g is not None else self.b.value(0.0, s.dtype)
        a = self.adj[s]
        return Value(self.b.emit('load', a.dtype, [a]))

    def take(self, var):
        """The adjoint of local `var` at a store into it, which then resets it to zero."""
        g = self.grad(var)
        if var in self.sadj:
            self.sadj[var] = None
        else:
            self.b.emit('store', None, [self.adj[var], self.b.value(0.0, var.dtype)])
        return g

    def contains_active(self, s):
        """Does compound statement s need a reverse? Yes if it computes an active value, stores
        into an active local (even a constant: that kills the local's adjoint), or stores an
        active value computed outside it into a field."""
        return any(x in self.active or (x.op == 'store' and x.args[0] in self.active) or
                   (x.op in ('gstore', 'atomic') and x.value_arg in self.active)
                   for b in s.blocks for x in ir.walk(b))

    def clear_forward(self, s):
        """The reverse of a compound statement without differentiable values that overwrites
        elements of fields with gradients: it runs again forwards (no accumulation inside, so the
        order is free), clearing the gradient of each element it stores into."""
        if not any(clears_grad(x) for b in s.blocks for x in ir.walk(b)):
            return
        self.restore(s)
        self.clearing = True
        try:
            self.replay(s)
        finally:
            self.clearing = False

    # ------------------------------------------------------------ R(B)
    def run(self, block):
        for s in block.stmts:
            self.replay(s)
        for s in reversed(block.stmts):
            self.reverse(s)

    def replay_block(self, block):
        for s in block.stmts:
            self.replay(s)

    def replay(self, s):
        op = s.op
        if op == 'print':
            return  # the primal printed; its adjoint does not print again (Taichi's does)
        if op in ('gstore',):
            if self.clearing and clears_grad(s):
                self.clear_grad(s)
            return
        if op == 'atomic':
            if self.users.get(s) and s.attrs.get('replay_load'):
                # an allocator's atomic on a bookkeeping word (a pointer's block claim,
                # frontend/blockpool.py): the adjoint finds what the primal published, so it
                # replays as a load of the word (no second claim)
                self.m[s] = self.b.emit('gload', s.dtype, [self.m.get(a, a) for a in s.args[:-1]],
                                        {'buf': s.attrs['buf'], 'comp': s.attrs.get('comp', 0)},
                                        loc=s.loc)
                return
            if self.users.get(s):
                raise _err(s, 'the value an atomic operation returns cannot be used in a kernel '
                           'that is differentiated (the adjoint cannot replay it); split the kernel')
            if self.on_extremum is not None and self.ties and s in self.ties.stmts:
                self.on_extremum(self, s)
            return
        if op in ('if', 'for', 'while'):
            return getattr(self, 'replay_' + op)(s)
        if op in ('break', 'continue'):
            self.b.emit(op, loc=s.loc)
            return
        c = self.b.emit(op, s.dtype, [self.m.get(a, a) for a in s.args], s.attrs, loc=s.loc)
        self.m[s] = c
        if s in self.active:
            self.new_adj(s, s.dtype)

    def checkpoint(self, s):
        """Save the locals that compound statement `s` reads, to restore them before R(s)."""
        inner = {x for b in s.blocks for x in ir.walk(b)}
        saved = {}
        for x in inner:
            if x.op == 'load' and x.args[0] not in inner and x.args[0] not in saved \
                    and self.stores.get(x.args[0]):
                a = x.args[0]
                ck = self.b.emit('alloca', a.dtype)
                self.b.emit('store', None, [ck, self.b.emit('load', a.dtype, [self.m[a]])])
                saved[a] = ck
        self.ck[s] = saved

    def restore(self, s):
        for a, ck in self.ck[s].items():
            self.b.emit('store', None, [self.m[a], self.b.emit('load', a.dtype, [ck])])

    def replay_if(self, s):
        self.checkpoint(s)
        t, e = ir.Block(), ir.Block()
        self.b.emit('if', None, [self.m[s.args[0]]], blocks=[t, e], loc=s.loc)
        for pb, nb in zip(s.blocks, (t, e)):
            with self.b.open(nb):
                self.replay_block(pb)

    def replay_while(self, s):
        if self.contains_active(s):
            raise _err(s, 'a while loop that computes differentiable values cannot be reversed '
                       '(its trip count is unknown); use a for loop with constant bounds')
        self.checkpoint(s)
        body = ir.Block()
        self.b.emit('while', None, blocks=[body], loc=s.loc)
        with self.b.open(body):
            self.replay_block(s.blocks[0])

    # ------------------------------------------------------------ serial for loops
    def carried(self, s):
        """Locals read in the loop body whose value one iteration passes to the next."""
        inner = list(ir.walk(s.blocks[0]))
        inner_set = set(inner)
        stored = {x.args[0] for x in inner if x.op == 'store'}
        out = []
        for x in inner:
            if x.op == 'load' and x.args[0] in stored and x.args[0] not in inner_set \
                    and x.args[0] not in out and not (ACCUMULATORS and
                                                      self.is_accumulator(x.args[0], inner)):
                out.append(x.args[0])
        return out

    def is_accumulator(self, var, inner):
        """`var` is only ever updated as var = var +/- (...) in this loop body."""
        for x in inner:
            if x.op == 'load' and x.args[0] is var:
                us = self.users.get(x, [])
                if len(us) != 1 or us[0].op not in ('add', 'sub') or us[0].args[0] is not x:
                    return False
                us2 = self.users.get(us[0], [])
                if len(us2) != 1 or us2[0].op != 'store' or us2[0].args[0] is not var:
                    return False
            if x.op == 'store' and x.args[0] is var:
                val = x.args[1]
                if val.op not in ('add', 'sub') or val.args[0].op != 'load' or val.args[0].args[0] is not var:
                    return False
        return True

    def trip(self, s):
        b, e = self.v(s.args[0]), self.v(s.args[1])
        step = s.attrs['step']
        if s.args[0].op == 'const' and s.args[1].op == 'const':
            lo, hi = s.args[0].attrs['value'], s.args[1].attrs['value']
            return max(0, -(-(hi - lo) // step)) if step > 0 else max(0, -(-(lo - hi) // -step))
        if step > 0:
            return self.b.binary('max', self.b.binary('floordiv', self.b.binary('add', self.b.binary('sub', e, b),
                                                                          step - 1), step), 0)
        return self.b.binary('max', self.b.binary('floordiv', self.b.binary('add', self.b.binary('sub', b, e),
                                                                      -step - 1), -step), 0)

    def replay_for(self, s):
        self.checkpoint(s)
        carried = self.carried(s) if self.contains_active(s) else []
        if carried:
            if any(x.op in ('break', 'continue') for x in ir.walk(s.blocks[0])):
                raise _err(s, 'break/continue in a loop that carries differentiable values is not '
                           'supported by the adjoint')
            n = self.trip(s)
            if not isinstance(n, int):
                n = self.ad_stack_size
                if n <= 0:
                    raise _err(s, 'this loop carries values from one iteration to the next, so its '
                               'adjoint stores them per iteration: it needs a compile-time trip '
                               'count (constant range bounds), or ti.init(ad_stack_size=N) for at '
                               'most N iterations (more is reported as an error)')
                self.capacity[s] = n
            self.snap[s] = {a: self.b.emit('alloca', a.dtype, attrs={'size': max(n, 1)}) for a in carried}
        body = ir.Block()
        loop = self.b.emit('for', T.i32, [self.m[s.args[0]], self.m[s.args[1]]], s.attrs,
                         blocks=[body], loc=s.loc)
        self.m[s] = loop
        with self.b.open(body):
            if carried:
                k = self.iteration_number(s, Value(loop))
                target = self.b.blocks[-1]
                if s in self.capacity:  # run-time trip count: store while it fits, else flag
                    fits, over = ir.Block(), ir.Block()
                    self.b.emit('if', None, [self.b.binary('lt', k, self.capacity[s])], blocks=[fits, over])
                    with self.b.open(over):
                        self.b.emit('gstore', None, [self.b.value(1, T.i32)],
                                  {'buf': self.overflow_flag(s), 'comp': 0}, loc=s.loc)
                    target = fits
                with self.b.open(target):
                    for a, arr in self.snap[s].items():
                        self.b.emit('astore', None, [arr, k, self.b.emit('load', a.dtype, [self.m[a]])])
            self.replay_block(s.blocks[0])

    def overflow_flag(self, s):
        if self.flag is None:
            self.flag = ir.Buffer('ad_stack_overflow', T.i32, (), role='temp',
                                  meta={'overflow_loc': s.loc})
        return self.flag

    def iteration_number(self, s, i):
        step = s.attrs['step']
        k = self.b.binary('sub', i, self.v(s.args[0]))
        return k if step == 1 else self.b.binary('floordiv', k, step)

    def reverse_for(self, s):
        self.restore(s)
        if any(x.op in ('break', 'continue') for x in ir.walk(s.blocks[0])):
            raise _err(s, 'break/continue in a loop with differentiable values is not supported by '
                       'the adjoint')
        n = self.trip(s)
        body = ir.Block()
        rl = self.b.emit('for', T.i32, [self.b.value(0, T.i32), self.b.value(n, T.i32)], {'step': 1},
                       blocks=[body], loc=s.loc)
        with self.b.open(body):
            k = self.b.binary('sub', self.b.binary('sub', n, 1), Value(rl))
            i = self.b.binary('add', self.v(s.args[0]), self.b.binary('mul', k, s.attrs['step']))
            saved = self.m[s]
            self.m[s] = i.stmt
            kk = k if s not in self.capacity else self.b.binary('min', k, self.capacity[s] - 1)
            for a, arr in self.snap.get(s, {}).items():
                self.b.emit('store', None, [self.m[a], self.b.emit('aload', a.dtype, [arr, kk])])
            self.run(s.blocks[0])
            self.m[s] = saved

    # ------------------------------------------------------------ reverse sweep
    def reverse(self, s):
        op = s.op
        if op in ('if', 'for', 'while') and not self.contains_active(s):
            return self.clear_forward(s)
        if op == 'if':
            self.restore(s)
            t, e = ir.Block(), ir.Block()
            self.b.emit('if', None, [self.m[s.args[0]]], blocks=[t, e], loc=s.loc)
            for pb, nb in zip(s.blocks, (t, e)):
                with self.b.open(nb):
                    self.run(pb)
            return
        if op == 'for':
            self.reverse_for(s)
            return
        if op in ('while', 'break', 'continue', 'alloca', 'const', 'arg'):
            return
        if op == 'gstore':
            if clears_grad(s):  # the stored value takes the element's gradient; the old value none
                if s.value_arg in self.active:
                    self.acc(s.value_arg, self.grad_of_field(s))
                self.clear_grad(s)
            return
        if op == 'atomic':
            f, fn = s.buf, s.attrs['fn']
            if f.grad is None or s.value_arg not in self.active:
                return
            if self.ties and s in self.ties.stmts:
                self.acc(s.value_arg, self.ties.share(self.b, s, self.m, self.grad_of_field(s)))
                return
            if fn not in ('add', 'sub'):
                raise _err(s, f'atomic {fn} into {f.name}, which needs a gradient, cannot be '
                           'differentiated')
            g = self.grad_of_field(s)
            self.acc(s.value_arg, g if fn == 'add' else -g)
            return
        if op == 'store':
            var, val = s.args
            if self.has_adj(var):  # the stored value takes the local's adjoint; the old value none
                g = self.take(var)
                if val in self.active:
                    self.acc(val, g)
            return
        if s not in self.active:
            return
        g = self.grad(s) if self.has_adj(s) else None
        if op == 'gload':
            gf = s.buf.grad
            self.b.emit('atomic', gf.dtype, [self.m[i] for i in s.indices] + [g.stmt],
                      {'buf': gf, 'comp': s.attrs['comp'], 'fn': 'add'}, loc=s.loc)
        elif op == 'load':
            self.acc(s.args[0], g)
        elif op == 'cast':
            a = s.args[0]
            if a.dtype.is_float:
                self.acc(a, self.b.cast(g, a.dtype))
        elif op == 'random':
            pass
        elif optable.has_rule(op):
            for a in s.args:
                if a.op == 'random':
                    raise _err(s, 'ti.random() feeds a differentiable value (RandStmt not supported): '
                               'the adjoint cannot replay the same random numbers')
            grads = optable.vjp(self.b, op, [self.v(a) for a in s.args], self.v(s), g)
            for a, ga in zip(s.args, grads):
                if a in self.active:
                    self.acc(a, ga)
        else:
            raise _err(s, f'no derivative rule for the IR op {op!r}')

    def clear_grad(self, s):
        gf = s.buf.grad
        self.b.emit('gstore', None, [self.m[i] for i in s.indices] + [self.b.value(0, gf.dtype)],
                  {'buf': gf, 'comp': s.attrs['comp']}, loc=s.loc)

    def grad_of_field(self, s):
        gf = s.buf.grad
        return Value(self.b.emit('gload', gf.dtype, [self.m[i] for i in s.indices],
                               {'buf': gf, 'comp': s.attrs['comp']}, loc=s.loc))


def adjoint_task(task, flags=None, ad_stack_size=0, ties=None):
    """The adjoint of one task, as a new Task, or None if nothing flows back through it.
    Overflow flags of run-time sized per-iteration storage are appended to `flags`;
    `ad_stack_size` sizes that storage (0: loops need compile-time trip counts); `ties` are the
    kernel's atomic max/min contenders (extremum.plan)."""
    active = analyse(task.body, 'grad')
    if not active and not any(clears_grad(s) for s in ir.walk(task.body)):
        return None
    _check_random(task.body, active)
    body = ir.Block()
    b = Builder()
    with building(b), b.open(body):
        same = {task.body: task.loop.blocks[0]} if task.kind == 'parallel' else {}
        rv = Reverser(task.body, active, b, ad_stack_size, same, ties)
        if task.kind == 'parallel':
            loop = task.loop
            prologue = task.body.stmts[:task.body.stmts.index(loop)]
            for s in prologue:
                rv.replay(s)
            inner = ir.Block()
            new_loop = rv.b.emit('parfor', T.i32, [rv.m[loop.args[0]]], blocks=[inner], loc=loop.loc)
            rv.m[loop] = new_loop
            # The prologue's differentiable values (a top-level `t = sin(x[0])` or a temporary's
            # load, read by every iteration) are recomputed per iteration in the adjoint, and
            # reversed after the iteration, so each iteration's share of their adjoint flows
            # back into the fields they read.
            shared = [s for s in prologue if s in active and s.op != 'alloca']
            with b.open(inner):
                for s in shared:
                    rv.replay(s)
                rv.run(loop.blocks[0])
                for s in reversed(shared):
                    rv.reverse(s)
        else:
            rv.run(task.body)
    if rv.flag is not None and flags is not None:
        flags.append(rv.flag)
    simplify(body)
    return Task(task.kind, body, task.name + '_adj')


def replay_task(task, ties, on_extremum, suffix):
    """A task that replays `task` (its values recomputed, its global writes dropped) with each
    atomic max/min contender turned into what `on_extremum(reverser, stmt)` emits."""
    body = ir.Block()
    b = Builder()
    with building(b), b.open(body):
        rv = Reverser(task.body, set(), b, ties=ties, on_extremum=on_extremum)
        if task.kind == 'parallel':
            loop = task.loop
            for s in task.body.stmts[:task.body.stmts.index(loop)]:
                rv.replay(s)
            inner = ir.Block()
            rv.m[loop] = b.emit('parfor', T.i32, [rv.m[loop.args[0]]], blocks=[inner], loc=loop.loc)
            with b.open(inner):
                rv.replay_block(loop.blocks[0])
        else:
            rv.replay_block(task.body)
    simplify(body)
    return Task(task.kind, body, task.name + suffix)


def clears_grad(s):
    """A plain store into a Buffer with a gradient: its adjoint clears the element's gradient."""
    return s.op == 'gstore' and s.buf.grad is not None


def _check_random(body, active):
    """The adjoint replays the primal, but cannot draw the same random numbers: a random value
    that reaches a differentiable value, or a branch or loop around differentiable code, is an
    AutodiffError (a random value used only for non-differentiable work is fine)."""
    stmts = list(ir.walk(body))
    tainted = {s for s in stmts if s.op == 'random'}
    changed = True
    while changed:
        changed = False
        for s in stmts:
            if s in tainted:
                continue
            hit = any(a in tainted for a in s.args)
            if s.op == 'store' and hit:
                if s.args[0] not in tainted:
                    tainted.add(s.args[0])
                    changed = True
            elif hit or (s.op == 'load' and s.args[0] in tainted):
                tainted.add(s)
                changed = True
    for s in stmts:
        bad = s in active and s in tainted
        if not bad and s.blocks and any(a in tainted for a in s.args):
            bad = any(x in active or (x.op == 'store' and x.args[0] in active)
                      for b in s.blocks for x in ir.walk(b))
        if bad:
            raise _err(s, 'ti.random() decides a differentiable value here (RandStmt not supported): '
                       'the adjoint cannot replay the same random numbers; draw them in a '
                       'separate kernel into a field and read that')


def prepare_temporaries(tasks):
    """Kernel-internal temporaries (shared locals) on a gradient path get gradients too."""
    temps = []
    for t in tasks:
        for s in ir.walk(t.body):
            f = s.attrs.get('buf')
            if f is not None and f.is_temp and f.dtype.is_float:
                if f.grad is None:
                    f.derive('grad')
                if f not in temps:
                    temps.append(f)
    return temps


def adjoint_tasks(tasks, name, ad_stack_size=0):
    """The adjoint of a kernel's tasks (IR -> IR): (adjoint tasks in launch order, overflow
    flags). The flags are 0-D i32 temporaries (meta['overflow_loc'] says which loop) that an
    adjoint with run-time sized per-iteration storage sets when a loop ran more than
    `ad_stack_size` iterations; the launcher reads them back after the launch."""
    tasks = [t.clone() for t in tasks]
    check_rules(tasks, name)
    temps = prepare_temporaries(tasks)
    ties = extremum.plan(tasks, 'grad', name)
    flags = []
    adj = []
    for i in reversed(range(len(tasks))):
        a = adjoint_task(tasks[i], flags, ad_stack_size, ties)
        if ties.in_task(i):  # atomic max/min: count the tied winners first, clear after
            adj.append(replay_task(tasks[i], ties, ties.count_and_clear(None), '_tie_count'))
            adj += [a] if a is not None else []
            adj.append(replay_task(tasks[i], ties, ties.clear('grad'), '_tie_clear'))
        elif a is not None:
            adj.append(a)
    zero = [f.grad for f in temps] + flags
    if zero:
        adj.insert(0, _zero_task(zero, name))
    if ties:
        adj.insert(0, ties.zero_task())
    return adj, flags


def _zero_task(bufs, name):
    body = ir.Block()
    for f in bufs:
        c = body.append(ir.const(0, f.dtype))
        body.append(ir.Stmt('gstore', None, [c], {'buf': f, 'comp': 0}))
    return Task('serial', body, name + '_zero_temporaries')
