"""Gradient fuzzer, generator: a hypothesis strategy for random LEGAL vkdiff/Taichi programs,
written out as Python source text (vkdiff's frontend reads a kernel's real source).

A program is a module: input fields (x 1-D, s 0-D, y 2-D, v a 3-vector field, A a 2x2 matrix
field), temporaries written by one kernel and read by later ones, a 0-D `loss`, ti.funcs, 1-3
kernels and a `forward()` that launches them in order (the harness runs it on one Tape, in
FwdMode and for finite differences). Every value carries an interval, so the ops are only used
where they are smooth (log/sqrt of positive values, division away from zero, asin inside
(-1, 1), ...) and values stay bounded. Branches, min/max and abs switch on data; the harness
treats an element whose finite differences depend on the step size as non-smooth and skips it.

Taichi's global data access rules are obeyed: a temporary, once read, is never written again;
a second write to it is an atomic add, or a whole overwrite by a later kernel ('overwrite').
A 0-D temporary may instead be the target of one loop's ti.atomic_max / ti.atomic_min ('max'),
which nothing writes again.

Features that exercise known defects can be left out (`features`): KNOWN_BUGS says which."""
import math

from hypothesis import strategies as st

N, M = 5, 3            # the 1-D length; y is N x M
STACK = 16             # ti.init(ad_stack_size=STACK): run-time trip counts stay below it
KNOWN_BUGS = {
    'toplocal': 'issue 9 item 1: a top-level local read by a later parallel loop',
    'toplocal_serial': 'issue 9 item 1: a top-level local read by top-level code after a loop',
    'overwrite': 'issue 9 item 2: a temporary overwritten by a later kernel on one Tape',
    'mat_rt_store': 'issue 9 item 3: matrix/vector field elements stored at run-time indices',
    'mat_rt_read': 'issue 9 item 3: matrix field elements read at run-time indices',
}
ALL = frozenset(KNOWN_BUGS)
INPUTS = {'x': (0.5, 1.5), 's': (0.5, 1.5), 'y': (-1.0, 1.0), 'v': (0.2, 1.2), 'A': (-0.3, 1.3)}
CONSTS = (0.5, 1.5, -0.75, 2.0, 0.25, -1.25, 3.0)


# ---------------------------------------------------------------- intervals
def hull(*ivs):
    return (min(a for a, _ in ivs), max(b for _, b in ivs))


def i_add(a, b):
    return (a[0] + b[0], a[1] + b[1])


def i_sub(a, b):
    return (a[0] - b[1], a[1] - b[0])


def i_mul(a, b):
    p = (a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])
    return (min(p), max(p))


def i_scale(a, c):
    return i_mul(a, (c, c))


def i_mono(f, a):
    return (f(a[0]), f(a[1]))


def i_sq(a):
    lo, hi = a
    if lo >= 0:
        return (lo * lo, hi * hi)
    if hi <= 0:
        return (hi * hi, lo * lo)
    return (0.0, max(lo * lo, hi * hi))


def mag(a):
    return max(abs(a[0]), abs(a[1]))


def away(a, m=0.2):
    """The interval keeps a margin m from zero."""
    return a[0] > m or a[1] < -m


class Temp:
    def __init__(self, name, kind, iv, task, kernel):
        self.name, self.kind, self.iv = name, kind, iv   # kind: 1d 2d 0d vec mat
        self.task, self.kernel, self.read = task, kernel, False
        self.store_task = -1   # the task of its last plain store (no accumulation there)
        self.extremum = False  # written by ti.atomic_max/min: nothing accumulates into it later


class Scope:
    def __init__(self, idx):
        self.idx = idx        # None (top-level code), ('i',) or ('i', 'j')
        self.scal = {}        # float locals: name -> interval
        self.vec = {}         # 3-vector locals: name -> interval of the components
        self.ints = {}        # int loop variables: name -> (lo, hi, static)
        self.frozen = set()   # carried locals: only the loop's own update assigns them
        self.args = {}        # float kernel arguments: name -> value
        self.func = False     # inside a ti.func (no kernel arguments)

    def child(self):
        c = Scope(self.idx)
        c.scal, c.vec, c.ints = dict(self.scal), dict(self.vec), dict(self.ints)
        c.frozen, c.args, c.func = set(self.frozen), self.args, self.func
        return c


SIZES = {   # (kernels, blocks per kernel, statements per block, nesting depth)
    'small': (2, 2, 2, 1),    # the CI budget: compile time dominates
    'full': (3, 3, 3, 2),
}


class Gen:
    def __init__(self, draw, features, size='full'):
        self.draw, self.features, self.focus = draw, frozenset(features), None
        self.max_kernels, self.max_blocks, self.max_stmts, self.max_depth = SIZES[size]
        self.lines, self.ind, self.funcs = [], 1, []
        self.count, self.temps, self.task, self.kernel = 0, [], 0, 0
        self.used = set()

    # ------------------------------------------------------------ drawing helpers
    def n(self, lo, hi):
        return self.draw(st.integers(lo, hi))

    def pick(self, seq):
        return seq[self.n(0, len(seq) - 1)]

    def fresh(self, p):
        self.count += 1
        return f'{p}{self.count}'

    def emit(self, line):
        self.lines.append('    ' * self.ind + line)

    def bound(self, src, iv):
        if mag(iv) <= 6:
            return src, iv
        return f'(4.0 * ti.tanh(0.25 * {src}))', i_mono(lambda t: 4 * math.tanh(t / 4), iv)

    # ------------------------------------------------------------ field reads
    def index1(self, sc, n):
        """An index expression into an axis of length n (the loop index when it fits)."""
        opts = [lambda: str(self.n(0, n - 1))]
        if sc.idx is not None and n == N:
            opts = [lambda: 'i', lambda: f'{N - 1} - i', lambda: f'(i + {self.n(1, N - 1)}) % {N}'] + opts
        if sc.idx is not None and len(sc.idx) == 2 and n == M:
            opts = [lambda: 'j', lambda: f'{M - 1} - j'] + opts
        for k, (lo, hi, _) in sc.ints.items():
            if hi < n:
                opts.append(lambda k=k: k)
        return self.pick(opts)()

    def mat_index(self, sc):
        """Two indices into a 2x2 matrix: constants, or int loop variables in range."""
        rt = [k for k, (lo, hi, static) in sc.ints.items() if hi <= 1 and not static]
        st_ = [k for k, (lo, hi, static) in sc.ints.items() if hi <= 1 and static]
        opts = [str(self.n(0, 1))] + st_
        if 'mat_rt_read' in self.features:
            opts += rt
        return self.pick(opts), self.pick(opts)

    def read(self, sc):
        name = self.pick(['x', 's', 'y', 'v', 'A', 'temp'])
        if name == 'temp':
            ready = [t for t in self.temps if t.task < self.task and t.kind in ('1d', '2d', '0d')]
            if not ready:
                name = 'x'
            else:
                t = self.pick(ready)
                t.read = True
                src = {'1d': lambda: f'{t.name}[{self.index1(sc, N)}]',
                       '2d': lambda: f'{t.name}[{self.index1(sc, N)}, {self.index1(sc, M)}]',
                       '0d': lambda: f'{t.name}[None]'}[t.kind]()
                return src, t.iv
        self.used.add(name)
        if name == 'x':
            return f'x[{self.index1(sc, N)}]', INPUTS['x']
        if name == 's':
            return 's[None]', INPUTS['s']
        if name == 'y':
            return f'y[{self.index1(sc, N)}, {self.index1(sc, M)}]', INPUTS['y']
        if name == 'v':
            return f'v[{self.index1(sc, N)}][{self.n(0, 2)}]', INPUTS['v']
        p, q = self.mat_index(sc)
        return f'A[{self.index1(sc, N)}][{p}, {q}]', INPUTS['A']

    # ------------------------------------------------------------ scalar expressions
    def leaf(self, sc):
        opts = ['const', 'read']
        if sc.scal:
            opts.insert(1, 'local')
        if sc.ints:
            opts.append('int')
        if sc.args:
            opts.append('arg')
        k = self.pick(opts)
        if k == 'const':
            c = self.pick(CONSTS)
            return repr(c), (c, c)
        if k == 'local':
            name = self.pick(sorted(sc.scal))
            return name, sc.scal[name]
        if k == 'int':
            name = self.pick(sorted(sc.ints))
            lo, hi, _ = sc.ints[name]
            return f'({name} * 0.25)', (lo * 0.25, hi * 0.25)
        if k == 'arg':
            name = self.pick(sorted(sc.args))
            return name, (sc.args[name], sc.args[name])
        return self.read(sc)

    def ex(self, sc, d=2):
        if d <= 0 or self.n(0, 2) == 0:
            return self.leaf(sc)
        k = self.n(0, 10)
        if k <= 2:
            (a, ia), (b, ib) = self.ex(sc, d - 1), self.ex(sc, d - 1)
            f = (i_add, i_sub, i_mul)[k]
            return self.bound(f'({a} {"+-*"[k]} {b})', f(ia, ib))
        if k == 3:
            (a, ia), (b, ib) = self.ex(sc, d - 1), self.ex(sc, d - 1)
            if away(ib):
                return self.bound(f'({a} / {b})', i_mul(ia, hull((1 / ib[0], 1 / ib[0]), (1 / ib[1], 1 / ib[1]))))
            den = i_add((1.0, 1.0), i_sq(ib))
            return f'({a} / (1.0 + {b} * {b}))', i_mul(ia, (1 / den[1], 1.0))
        if k == 4:
            return self.smooth(sc, d)
        if k == 5:
            (a, ia) = self.ex(sc, d - 1)
            p = self.pick((2, 3, 1.5, 'var'))
            if p in (2, 3):
                return self.bound(f'(({a}) ** {p})', i_sq(ia) if p == 2 else i_mono(lambda t: t ** 3, ia))
            if ia[0] <= 0.1:
                a, ia = f'(1.0 + {a} * {a})', i_add((1.0, 1.0), i_sq(ia))
            if p == 1.5:
                return self.bound(f'({a}) ** 1.5', i_mono(lambda t: t ** 1.5, ia))
            e = self.ex(sc, d - 1)
            e = (f'ti.sin({e[0]})', (-1.0, 1.0))
            return self.bound(f'ti.pow({a}, {e[0]})', hull(*[(ia[u] ** e[1][w], ia[u] ** e[1][w]) for u in (0, 1) for w in (0, 1)]))
        if k == 6:
            return self.kinked(sc, d)
        if k == 7:
            return self.func_call(sc, d)
        if k == 8:
            return self.vec_scalar(sc, d)
        if k == 9:
            return self.mat_scalar(sc, d)
        return self.bounded_domain(sc, d)

    def smooth(self, sc, d):
        a, ia = self.ex(sc, d - 1)
        f = self.pick(('sin', 'cos', 'tanh', 'atan', 'exp', 'log', 'sqrt'))
        if f in ('sin', 'cos'):
            return f'ti.{f}({a})', (-1.0, 1.0)
        if f in ('tanh', 'atan'):
            return f'ti.{f}({a})', i_mono(getattr(math, f), ia)
        if f == 'exp':
            if ia[1] > 3:
                a, ia = f'ti.sin({a})', (-1.0, 1.0)
            return f'ti.exp({a})', i_mono(math.exp, ia)
        if ia[0] <= 0.1:
            a, ia = f'({a} * {a} + 0.5)', i_add(i_sq(ia), (0.5, 0.5))
        return f'ti.{f}({a})', i_mono(getattr(math, f), ia)

    def bounded_domain(self, sc, d):
        a, ia = self.ex(sc, d - 1)
        f = self.pick(('asin', 'acos', 'tan', 'atan2', 'rsqrt'))
        if f in ('asin', 'acos', 'tan'):
            if not (-0.9 < ia[0] and ia[1] < 0.9):
                a, ia = f'(0.8 * ti.tanh({a}))', i_mono(lambda t: 0.8 * math.tanh(t), ia)
            return f'ti.{f}({a})', i_mono(getattr(math, f), ia) if f != 'acos' else (math.acos(ia[1]), math.acos(ia[0]))
        if f == 'rsqrt':
            if ia[0] <= 0.1:
                a, ia = f'({a} * {a} + 0.5)', i_add(i_sq(ia), (0.5, 0.5))
            return f'ti.rsqrt({a})', (1 / math.sqrt(ia[1]), 1 / math.sqrt(ia[0]))
        b, ib = self.ex(sc, d - 1)
        if not away(ib):
            b = f'({b} * {b} + 0.5)'
        return f'ti.atan2({a}, {b})', (-math.pi, math.pi)

    def kinked(self, sc, d):
        (a, ia), (b, ib) = self.ex(sc, d - 1), self.ex(sc, d - 1)
        k = self.pick(('min', 'max', 'select', 'abs', 'floor'))
        if k in ('min', 'max'):
            f = min if k == 'min' else max
            return f'ti.{k}({a}, {b})', (f(ia[0], ib[0]), f(ia[1], ib[1]))
        if k == 'select':
            c, ic = self.ex(sc, d - 1)
            return f'ti.select({c} > {a}, {a}, {b})', hull(ia, ib)
        if k == 'abs':
            return f'ti.abs({a})', (0.0 if not away(ia, 0) else min(abs(ia[0]), abs(ia[1])), mag(ia))
        return f'(ti.floor({a}) * 0.5 + {b})', i_add(i_scale((math.floor(ia[0]), math.floor(ia[1])), 0.5), ib)

    # ------------------------------------------------------------ vectors and matrices
    def vex(self, sc, d):
        """A 3-vector expression: (source, interval of its components)."""
        opts = ['field', 'build']
        if sc.vec:
            opts.append('local')
        if d > 0:
            opts += ['scale', 'add', 'normalized', 'cross']
        k = self.pick(opts)
        if k == 'field':
            temp = self.ready_temp('vec')
            if temp is not None:
                return f'{temp.name}[{self.index1(sc, N)}]', temp.iv
            self.used.add('v')
            return f'v[{self.index1(sc, N)}]', INPUTS['v']
        if k == 'local':
            name = self.pick(sorted(sc.vec))
            return name, sc.vec[name]
        if k == 'build':
            es = [self.ex(sc, d - 1) for _ in range(3)]
            return f'ti.Vector([{", ".join(e[0] for e in es)}])', hull(*[e[1] for e in es])
        a, ia = self.vex(sc, d - 1)
        if k == 'scale':
            e, ie = self.ex(sc, d - 1)
            return self.bound(f'({a} * {e})', i_mul(ia, ie))
        if k == 'add':
            b, ib = self.vex(sc, d - 1)
            return self.bound(f'({a} + {b})', i_add(ia, ib))
        if k == 'normalized':
            if away(ia):
                return f'{a}.normalized()', (-1.0, 1.0)
            return f'({a} / ti.sqrt({a}.norm_sqr() + 0.5))', (-1.5, 1.5)
        b, ib = self.vex(sc, d - 1)
        m = 2 * mag(ia) * mag(ib)
        return self.bound(f'{a}.cross({b})', (-m, m))

    def vec_scalar(self, sc, d):
        a, ia = self.vex(sc, d - 1)
        k = self.pick(('comp', 'dot', 'norm', 'sum', 'rt', 'static'))
        if k == 'comp':
            return f'{a}[{self.n(0, 2)}]', ia
        if k == 'dot':
            b, ib = self.vex(sc, d - 1)
            return self.bound(f'{a}.dot({b})', i_scale(i_mul(ia, ib), 3))
        if k == 'norm':
            if away(ia):
                lo = min(abs(ia[0]), abs(ia[1]))
                return f'{a}.norm()', (lo, math.sqrt(3) * mag(ia))
            return f'ti.sqrt({a}.norm_sqr() + 0.25)', (0.5, math.sqrt(3 * mag(ia) ** 2 + 0.25))
        if k == 'sum':
            return f'{a}.sum()', i_scale(ia, 3)
        rt = [v for v, (lo, hi, _) in sc.ints.items() if hi <= 2]
        if k == 'rt' and rt:
            return f'{a}[{self.pick(rt)}]', ia
        name = self.fresh('u')       # a ti.static loop over the components
        e, ie = self.ex(sc, d - 1)
        self.emit(f'{name} = {e}')
        self.emit('for cs in ti.static(range(3)):')
        self.emit(f'    {name} = {name} + {a}[cs] * (cs + 1.0)')
        return name, i_add(ie, i_scale(ia, 6))

    def ready_temp(self, kind):
        """Now and then a temporary of that kind written by an earlier task (it is then read)."""
        ready = [t for t in self.temps if t.task < self.task and t.kind == kind]
        if not ready or not self.draw(st.booleans()):
            return None
        t = self.pick(ready)
        t.read = True
        return t

    def mat_scalar(self, sc, d):
        temp = self.ready_temp('mat')
        if temp is not None:
            m, iv = f'{temp.name}[{self.index1(sc, N)}]', temp.iv
            k = self.pick(('elem', 'trace', 'matvec'))
            if k == 'elem':
                p, q = self.mat_index(sc)
                return f'{m}[{p}, {q}]', iv
            if k == 'trace':
                return f'{m}.trace()', i_scale(iv, 2)
            (a, ia), (b, ib) = self.ex(sc, d - 1), self.ex(sc, d - 1)
            return self.bound(f'({m} @ ti.Vector([{a}, {b}]))[{self.n(0, 1)}]', i_scale(i_mul(hull(ia, ib), iv), 2))
        self.used.add('A')
        m = f'A[{self.index1(sc, N)}]'
        k = self.pick(('elem', 'det', 'trace', 'matvec', 'gram', 'inverse'))
        if k == 'elem':
            p, q = self.mat_index(sc)
            return f'{m}[{p}, {q}]', INPUTS['A']
        if k == 'det':
            return f'{m}.determinant()', (0.4, 1.8)
        if k == 'trace':
            return f'{m}.trace()', (1.4, 2.6)
        if k == 'matvec':
            (a, ia), (b, ib) = self.ex(sc, d - 1), self.ex(sc, d - 1)
            return self.bound(f'({m} @ ti.Vector([{a}, {b}]))[{self.n(0, 1)}]', i_mul(hull(ia, ib), (-0.6, 2.6)))
        if k == 'gram':
            return f'({m} @ {m}.transpose())[{self.n(0, 1)}, {self.n(0, 1)}]', (-0.8, 3.5)
        return f'{m}.inverse()[{self.n(0, 1)}, {self.n(0, 1)}]', (-3.3, 3.3)

    # ------------------------------------------------------------ ti.func
    def func_call(self, sc, d):
        args = [self.ex(sc, d - 1) for _ in range(self.n(1, 2))]
        name = self.fresh('f')
        fsc = Scope(sc.idx)
        fsc.func = True
        for k, (_, iv) in enumerate(args):
            fsc.scal[f'p{k}'] = iv
        params = list(sc.idx or ()) + [f'p{k}' for k in range(len(args))]
        saved = self.lines, self.ind
        self.lines, self.ind = [], 1
        # inlined into top-level code, a loop would be a parallel loop: none there
        self.stmts(fsc, self.n(0, 2), depth=1 if sc.idx else 0, writes=False)
        r, ir_ = self.ex(fsc, d - 1)
        self.emit(f'return {r}')
        self.funcs.append(['@ti.func', f'def {name}({", ".join(params)}):'] + self.lines)
        self.lines, self.ind = saved
        return f'{name}({", ".join(list(sc.idx or ()) + [a for a, _ in args])})', ir_

    # ------------------------------------------------------------ statements
    def stmts(self, sc, count, depth, writes=True):
        for _ in range(count):
            self.stmt(sc, depth, writes)

    def assignable(self, sc):
        return sorted(set(sc.scal) - sc.frozen)

    def new_local(self, sc):
        name = self.fresh('t')
        e, iv = self.ex(sc)
        self.emit(f'{name} = {e}')
        sc.scal[name] = iv
        return name

    def stmt(self, sc, depth, writes):
        k = self.n(0, 6 if depth > 0 else 2)
        if k == 0 or (k in (1, 3) and not self.assignable(sc)):
            self.new_local(sc)
        elif k == 1:                                   # overwrite a local
            name = self.pick(self.assignable(sc))
            e, iv = self.ex(sc)
            self.emit(f'{name} = {e}')
            sc.scal[name] = iv
        elif k == 2:
            name = self.fresh('w')
            e, iv = self.vex(sc, 2)
            self.emit(f'{name} = {e}')
            sc.vec[name] = iv
        elif k == 3:
            self.branch(sc, depth, writes)
        elif k == 4 and writes:
            self.write_loss(sc)
        else:
            self.inner_loop(sc, depth, writes)

    def branch(self, sc, depth, writes):
        a, _ = self.ex(sc, 1)
        b, _ = self.ex(sc, 1)
        self.emit(f'if {a} {self.pick(("<", ">"))} {b}:')
        target = self.pick(self.assignable(sc))
        ivs = [sc.scal[target]]
        has_else = self.draw(st.booleans())
        for part in ((0, 1) if has_else else (0,)):
            if part:
                self.emit('else:')
                ivs = ivs[1:]
            self.ind += 1
            inner = sc.child()
            self.stmts(inner, self.n(0, 1), depth - 1, writes)
            e, iv = self.ex(inner)
            self.emit(f'{target} = {e}')
            ivs.append(iv)
            self.ind -= 1
        sc.scal[target] = hull(*ivs)

    def inner_loop(self, sc, depth, writes):
        """A serial loop carrying locals: a contracting update (an interval [-R, R], R >= 3,
        maps into itself) and an accumulator (read only by its own update)."""
        carried = self.fresh('c')
        e0, i0 = self.ex(sc)
        self.emit(f'{carried} = {e0}')
        R = max(3.0, mag(i0))
        acc = self.fresh('a')
        e1, i1 = self.ex(sc)
        self.emit(f'{acc} = {e1}')
        var = self.fresh('k')
        kind = self.pick(('const', 'runtime', 'start', 'static'))
        if kind == 'runtime' and sc.func:
            kind = 'const'
        if kind == 'const':
            trips = self.n(1, 4)
            lo, hi, header = 0, trips - 1, f'range({trips})'
        elif kind == 'start':
            trips = self.n(1, 3)
            lo, hi, header = 1, trips, f'range(1, {trips + 1})'
        elif kind == 'static':
            trips = self.n(1, 3)
            lo, hi, header = 0, trips - 1, f'ti.static(range({trips}))'
        else:
            trips = self.mval
            lo, hi, header = 0, trips - 1, 'range(m)'
        self.emit(f'for {var} in {header}:')
        self.ind += 1
        inner = sc.child()
        inner.scal[carried] = (-R, R)
        inner.frozen |= set(sc.scal) | {carried}   # outer locals: assigned once, not per trip
        inner.ints[var] = (lo, hi, kind == 'static')
        self.stmts(inner, self.n(0, 1), depth - 1, writes)
        e, _ = self.ex(inner)
        form = self.n(0, 2)
        self.emit(f'{carried} = ' + (f'0.5 * {carried} + 1.5 * ti.tanh({e})', f'{carried} * 0.8 + 0.5 * ti.cos({e})',
                                     f'2.0 * ti.sin({carried} + {e})')[form])
        e2, i2 = self.ex(inner)
        self.emit(f'{acc} += {e2}')
        if writes and self.draw(st.booleans()):
            self.write_loss(inner)
        self.ind -= 1
        sc.scal[carried] = (-R, R)
        sc.scal[acc] = i_add(i1, i_scale(i2, trips))

    def write_loss(self, sc):
        e, _ = self.ex(sc)
        self.emit(self.pick((f'loss[None] += {e}', f'ti.atomic_add(loss[None], {e})',
                             f'loss[None] -= {e}')))
