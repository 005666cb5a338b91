"""Gradient fuzzer, programs: kernels (top-level code and parallel loops over 1-D and 2-D
domains), temporaries passed from kernel to kernel, the writes that end a loop body, the sinks
that make every temporary reach the loss, and the module source text (`Program.source`).
Loop bodies may end with an atomic max/min into a new 0-D temporary (a max/min reduction)."""
from hypothesis import strategies as st

from .gen import ALL, CONSTS, INPUTS, M, N, Gen, Scope, Temp, hull, i_add, i_mul, i_scale

HEADER = '''"""A vkdiff gradient-fuzzer case (tests/autodiff/gradfuzz); features: {features}."""
import numpy as np
import vkdiff as ti

F = ti.f64
N, M = {N}, {M}
SEED = {seed}
x = ti.field(F, shape=N, needs_grad=True, needs_dual=True)
s = ti.field(F, shape=(), needs_grad=True, needs_dual=True)
y = ti.field(F, shape=(N, M), needs_grad=True, needs_dual=True)
v = ti.Vector.field(3, F, shape=N, needs_grad=True, needs_dual=True)
A = ti.Matrix.field(2, 2, F, shape=N, needs_grad=True, needs_dual=True)
loss = ti.field(F, shape=(), needs_grad=True, needs_dual=True)
'''
DECL = {'1d': 'ti.field(F, shape=N', '2d': 'ti.field(F, shape=(N, M)', '0d': 'ti.field(F, shape=(',
        'vec': 'ti.Vector.field(3, F, shape=N', 'mat': 'ti.Matrix.field(2, 2, F, shape=N'}
INIT = '''

def init_inputs():
    rng = np.random.default_rng(SEED)
    x.from_numpy(rng.uniform({x[0]}, {x[1]}, N))
    s[None] = rng.uniform({s[0]}, {s[1]})
    y.from_numpy(rng.uniform({y[0]}, {y[1]}, (N, M)))
    v.from_numpy(rng.uniform({v[0]}, {v[1]}, (N, 3)))
    A.from_numpy(np.eye(2) + rng.uniform(-0.3, 0.3, (N, 2, 2)))
'''.format(**INPUTS)
SINK = {   # one loop per domain reads every temporary nothing else read
    '1d': 'loss[None] += (0.3 + 0.1 * i) * ti.sin({t}[i])',
    '2d': 'loss[None] += (0.2 + 0.1 * i - 0.05 * j) * ti.sin({t}[i, j])',
    '0d': 'loss[None] += 0.7 * ti.sin({t}[None])',
    'vec': 'loss[None] += ti.sin({t}[i][0]) + 0.1 * {t}[i].norm_sqr() - 0.3 * {t}[i][2]',
    'mat': 'loss[None] += ti.sin(({t}[i] @ ti.Vector([0.4, 0.6]))[0]) + 0.1 * {t}[i][1, 1] ** 2',
}


FOCUS_BLOCKS = {'toplocal': ('top', 'loop1'), 'toplocal_serial': ('top', 'loop1', 'top')}


class Program:
    def __init__(self, source, features, inputs, temps, kernels):
        self.source, self.features = source, features
        self.inputs, self.temps, self.kernels = inputs, temps, kernels

    def __repr__(self):
        return f'Program(kernels={self.kernels}, features={sorted(self.features)})\n{self.source}'


class ProgramGen(Gen):
    def program(self):
        seed = self.n(0, 2 ** 16)
        calls, kernels = [], []
        nk = max(self.n(1, self.max_kernels), 2 if self.focus == 'overwrite' else 1)
        for ki in range(nk):
            self.kernel = ki
            src, args, only_loss = self.kernel_src(ki, ki == nk - 1)
            kernels.append(src)
            calls.append(f'    k{ki}{args}')
            if only_loss and self.draw(st.booleans()):
                calls.append(f'    k{ki}{args}')      # a second launch on the same Tape
        decls = [f'{t.name} = {DECL[t.kind]}{")" if t.kind == "0d" else ""}, needs_grad=True, '
                 'needs_dual=True)' for t in self.temps]
        text = HEADER.format(features=', '.join(sorted(self.features)) or 'none', N=N, M=M, seed=seed)
        text += '\n'.join(decls) + '\n'
        text += f'INPUTS = [{", ".join(sorted(self.used))}]\n'
        text += f'TEMPS = [{", ".join(t.name for t in self.temps)}]\n' + INIT
        for f in self.funcs:
            text += '\n\n' + '\n'.join(f) + '\n'
        for k in kernels:
            text += '\n\n' + k + '\n'
        text += '\n\ndef forward():\n' + '\n'.join(calls) + '\n'
        return Program(text, self.features, sorted(self.used), [t.name for t in self.temps], nk)

    # ------------------------------------------------------------ kernels
    def kernel_src(self, ki, last):
        self.mval, cval = self.n(1, 3), self.pick(CONSTS)
        self.lines, self.ind = [], 1
        self.writes_temp = False
        top = {}                  # top-level locals: name -> interval
        after_loop = set()        # those defined before a parallel loop
        forced = FOCUS_BLOCKS.get(self.focus, ()) if ki == 0 else ()
        loops = 0
        nblocks = 1 if self.focus == 'overwrite' and ki == 0 else self.n(1, self.max_blocks)
        for b in range(max(nblocks, len(forced))):
            self.task += 1
            kind = forced[b] if b < len(forced) else self.pick(('loop1', 'top', 'loop2'))
            if self.focus in ('overwrite', 'mat_rt_store', 'mat_rt_read') and b == 0 and ki < 2:
                kind = 'loop1'
            if kind == 'top':
                sc = Scope(None)
                sc.args = {'c': cval}
                sc.scal = {t: iv for t, iv in top.items()
                           if t not in after_loop or 'toplocal_serial' in self.features}
                before = [t for t in top if t in after_loop]
                if self.focus == 'toplocal_serial' and before:   # read after a loop
                    e, _ = self.ex(sc)
                    self.emit(f'loss[None] += {before[0]} * {e}')
                for n in range(self.n(1, 2)):
                    k = self.n(0, 2) if n else 0
                    if k == 0:
                        name = self.new_local(sc)
                        top[name] = sc.scal[name]
                    elif k == 1:
                        self.write_loss(sc)
                    else:
                        self.temp_write(sc, 'new0d')
            else:
                loops += 1
                after_loop |= set(top)
                idx = ('i',) if kind == 'loop1' else ('i', 'j')
                sc = Scope(idx)
                sc.args = {'c': cval}
                if 'toplocal' in self.features:
                    sc.scal = dict(top)
                    sc.frozen = set(top)      # read in the loop, never assigned there
                self.emit(self.loop_header(idx))
                self.ind += 1
                if loops == 1 and ki < 2:    # the kernel's first parallel loop
                    for w in self.focus_loop(sc, ki, top):
                        self.temp_write(sc, w)
                self.stmts(sc, self.n(1, self.max_stmts), depth=self.max_depth, writes=True)
                for _ in range(self.n(1, 2)):
                    self.temp_write(sc, self.pick(('loss', 'new', 'accum', 'vec', 'mat', 'overwrite', 'accum0d', 'max')))
                self.ind -= 1
        if last:
            self.task += 1
            for header, kinds in (('', ('0d',)), ('for i in range(N):', ('1d', 'vec', 'mat')),
                                  ('for i, j in ti.ndrange(N, M):', ('2d',))):
                sink = [t for t in self.temps if not t.read and t.kind in kinds]
                if sink and header:
                    self.emit(header)
                for t in sink:
                    t.read = True
                    self.emit(('    ' if header else '') + SINK[t.kind].format(t=t.name))
        body = ['@ti.kernel', f'def k{ki}(m: ti.i32, c: F):'] + self.lines
        return '\n'.join(body), f'({self.mval}, {cval})', not self.writes_temp

    def focus_loop(self, sc, ki, top):
        """With a focus (a KNOWN_BUGS feature), the first loop of kernel 0 (and 1) is made to
        exercise it; returns the writes that must end the loop body."""
        if self.focus == 'toplocal' and ki == 0 and top:
            e, _ = self.ex(sc)
            self.emit(f'loss[None] += {sorted(top)[0]} * {e}')
        if self.focus == 'mat_rt_read' and ki == 0 and sc.idx == ('i',):
            self.used.add('A')
            e, _ = self.ex(sc)
            self.emit('for kf in range(2):')
            self.emit(f'    loss[None] += A[i][kf, {self.n(0, 1)}] * {e}')
        if self.focus == 'overwrite' and sc.idx == ('i',):
            return ['new'] if ki == 0 else ['overwrite']
        if self.focus == 'mat_rt_store' and ki == 0 and sc.idx == ('i',):
            return ['mat']
        return []

    def loop_header(self, idx):
        if idx == ('i',):
            over = self.pick(('x', 'range(N)', 'v', 'ti.ndrange(N)'))
            return f'for i in {over}:'
        return f'for i, j in {self.pick(("y", "ti.ndrange(N, M)"))}:'

    # ------------------------------------------------------------ writes to fields
    def new_temp(self, kind, iv):
        prefix = {'1d': 'ga', '2d': 'gb', '0d': 'gz', 'vec': 'gw', 'mat': 'gq'}[kind]
        t = Temp(self.fresh(prefix), kind, iv, self.task, self.kernel)
        self.temps.append(t)
        return t

    def target(self, sc, t):
        if t.kind == '2d' and len(sc.idx or ()) == 2:
            return f'{t.name}[i, j]'
        if t.kind == '0d':
            return f'{t.name}[None]'
        return f'{t.name}[i]'

    def temp_write(self, sc, what):
        """Writes ending a loop body (or a top-level statement): the loss, a new temporary over
        the loop's domain, an accumulation into an unread temporary, a vector or matrix
        temporary, or (feature 'overwrite') a whole overwrite of one a previous kernel wrote."""
        dom = {None: '0d', ('i',): '1d', ('i', 'j'): '2d'}[sc.idx]
        if what == 'loss':
            return self.write_loss(sc)
        self.writes_temp = True
        e, ie = self.ex(sc)
        if what == 'new0d' or (what in ('new', 'vec', 'mat') and dom == '0d'):
            t = self.new_temp('0d', ie)
            t.store_task = self.task
            self.emit(f'{t.name}[None] = {e}')
        elif what == 'new' or (what in ('vec', 'mat') and dom == '2d'):
            t = self.new_temp(dom, ie)
            t.store_task = self.task
            self.emit(f'{self.target(sc, t)} = {e}')
        elif what == 'vec':
            w, iw = self.vex(sc, 2)
            t = self.new_temp('vec', hull(i_mul(iw, ie), (0.0, 0.0)))
            if 'mat_rt_store' in self.features and self.draw(st.booleans()):
                self.emit('for p in range(3):')
                self.emit(f'    {t.name}[i][p] = {w}[p] * {e}')
            else:
                self.emit(f'{t.name}[i] = {w} * {e}')
        elif what == 'mat':
            self.mat_temp(sc, e, ie)
        elif what == 'max':        # a reduction: the old value (0) contends too
            t = self.new_temp('0d', hull(ie, (0.0, 0.0)))
            t.extremum, t.store_task = True, self.task
            self.emit(f'ti.atomic_{self.pick(("max", "min"))}({t.name}[None], {e})')
        elif what == 'overwrite' and 'overwrite' in self.features:
            old = [t for t in self.temps if not t.read and t.kernel < self.kernel and t.kind == dom
                   and not t.extremum]
            if not old:
                return self.write_loss(sc)
            t = self.pick(old)
            self.emit(f'{self.target(sc, t)} = {e}')
            t.iv, t.task, t.kernel, t.store_task = ie, self.task, self.kernel, self.task
        else:
            kinds = ('0d',) if what == 'accum0d' or dom == '0d' else ('1d', '2d', '0d')
            old = [t for t in self.temps if not t.read and t.kind in kinds and t.store_task != self.task
                   and not t.extremum]
            t = self.pick(old) if old else self.new_temp(kinds[0] if dom != '2d' or what == 'accum0d'
                                                          else '2d', (0.0, 0.0))
            if t.kind == '0d':
                ref = f'{t.name}[None]'
            elif t.kind == '1d':
                ref = f'{t.name}[{self.index1(sc, N)}]'
            else:
                ref = f'{t.name}[{self.index1(sc, N)}, {self.index1(sc, M)}]'
            self.emit(f'{ref} += {e}')
            t.iv, t.task = hull(t.iv, i_add(t.iv, i_scale(ie, N * M))), self.task

    def mat_temp(self, sc, e, ie):
        t = self.new_temp('mat', hull(i_mul((-0.3, 1.3), ie), (0.0, 0.0)))
        if 'mat_rt_store' in self.features and (self.focus == 'mat_rt_store' or self.draw(st.booleans())):
            self.emit('for p, q in ti.ndrange(2, 2):')
            self.emit(f'    {t.name}[i][p, q] = (p + 1.0) * A[i][p, q] * {e}')
            self.used.add('A')
        elif self.draw(st.booleans()):
            self.emit(f'{t.name}[i] = A[i] * {e}')
            self.used.add('A')
        else:
            self.emit(f'for p in ti.static(range(2)):')
            self.emit(f'    for q in ti.static(range(2)):')
            self.emit(f'        {t.name}[i][p, q] = (q + 0.5) * A[i][p, q] * {e}')
            self.used.add('A')


@st.composite
def programs(draw, features=ALL, size='full', focus=None):
    """A random legal program; `features` is the set of KNOWN_BUGS features to generate, `size`
    a key of gen.SIZES; `focus` (one of those features) makes every program exercise it."""
    g = ProgramGen(draw, set(features) | ({focus} if focus else set()), size)
    g.focus = focus
    return g.program()
