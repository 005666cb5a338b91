"""Pass debug_checks (with ti.init(debug=True), or check_out_of_bound=True for the bound checks
alone; the first backend pass, so a kernel, its adjoint and its tangent all get it): run-time
checks that report the first violation of a launch.

- Every gload / gstore / atomic of a user's Buffer (a field, a gradient or tangent, an ndarray
  argument) tests its indices against the shape (an ndarray's run-time shape). Out of range, a
  load reads element 0 instead (its value is never seen: the launch raises), a store or atomic is
  skipped, so no data outside the access changes. Constant indices inside a field's shape need
  no check (with the checks on, the frontend leaves out-of-range constants to this one, as Taichi).
- Integer `floordiv` / `mod` test the divisor for zero (debug only; the result stays vkdiff's 0).
- Integer `add` / `sub` / `mul` / `shl` of the user's code (statements with a source location)
  test for overflow in their own type (debug only), as Taichi's CPU/CUDA backends and its SPIR-V
  codegen do: the result is kept (it wraps), and an overflowing invocation prints Taichi's
  message, e.g. `Addition overflow detected in File "k.py", line 3, in foo:` and the source line,
  through the device log (a `print` statement, lowered by passes/device_log.py), so it reaches
  sys.stdout at the sync after the launch, once per overflowing invocation. The tests need no
  wider type: add: signed ((a^c)&(b^c)) < 0, unsigned c < a; sub: signed ((a^b)&(a^c)) < 0,
  unsigned a < b; mul: c // a != b (a not 0 or -1), or a == -1 with b the type's minimum
  (and the mirror case); shl: (c >> b) != a.
- `check [cond, *values] | message, exc` statements test cond: `assert cond, msg` in kernels
  (debug only), run-time vector/matrix component indices (exc='index') and pow(int, int)'s
  exponent (exc='value'); the frontend emits them only when they are checked.

A failing test reports into the status Buffer (`options.debug_status()`, i32 words): the
invocation whose atomic OR sets word 0 first writes its site's code into word 1 and the site's
values into words 2.. (two words each: 64-bit values split, narrower ones in the low word). The
API layer reads the Buffer back at the next sync (with checks: at the end of each launch) and
raises `error(words)`: KernelIndexError, TaichiAssertionError, KernelValueError or
KernelZeroDivisionError, naming the kernel, the source line, the values (index and shape) as
Taichi's debug mode does."""
import struct
import weakref

import numpy as np

from .. import ir
from .. import types as T
from ..errors import (KernelIndexError, KernelValueError, KernelZeroDivisionError,
                      TaichiAssertionError, located)
from ..irbuild import Builder, Value

MAX_VALUES = 16
_EXC = {'index': KernelIndexError, 'value': KernelValueError}  # a `check`'s exc attribute
WORDS = 2 + 2 * MAX_VALUES


class Site:
    """One check: the exception type, the source location, the dtypes of the values it reports,
    and `render(values) -> message`. The statement that writes its code holds it (attrs
    'site'), so it lives as long as the compiled task."""

    def __init__(self, exc, loc, dtypes, render):
        self.exc, self.loc, self.dtypes, self.render = exc, loc, tuple(dtypes), render

    def __repr__(self):  # (IR printing)
        return f'<{self.exc.__name__} check, line {getattr(self.loc, "line", "?")}>'


# code -> Site, while some compiled task holds it (ti.init drops them with the kernels)
SITES = weakref.WeakValueDictionary()
_next_code = 1


def _register(site):
    """A status code for `site`: a positive i32 no live site has (0 means no error)."""
    global _next_code
    while _next_code in SITES:
        _next_code = _next_code % 0x7FFFFFFF + 1
    code = _next_code
    SITES[code] = site
    _next_code = code % 0x7FFFFFFF + 1
    return code


def new_status():
    """A status Buffer of the task's own (compiles without a launcher's, e.g. device-free)."""
    return ir.Buffer('debug_status', T.i32, (WORDS,), role='temp')


# ---------------------------------------------------------------- host side
def _decode(dt, lo, hi):
    lo &= 0xFFFFFFFF
    bits = (hi & 0xFFFFFFFF) << 32 | lo
    if dt is T.u1:
        return bool(lo)
    if dt.is_float:
        if dt.bits == 64 and not dt.is_narrow:
            return struct.unpack('<d', struct.pack('<Q', bits))[0]
        f32 = np.frombuffer(struct.pack('<I', lo), np.float32)[0]
        return float(str(f32))  # the shortest decimal that is this f32
    n = dt.bits
    v = bits & ((1 << n) - 1)
    if dt.is_signed and v >= 1 << (n - 1):
        v -= 1 << n
    return v


def error(words):
    """The exception the status words read back describe (None when no check failed)."""
    words = [int(w) for w in words]
    if not words[0]:
        return None
    site = SITES.get(words[1])
    if site is None:  # its kernel is gone (each launch with checks reports before it returns)
        return TaichiAssertionError('a run-time check failed in a kernel that no longer exists')
    values = [_decode(dt, words[2 + 2 * k], words[3 + 2 * k]) for k, dt in enumerate(site.dtypes)]
    return located(site.exc, site.render(values), site.loc)


# ---------------------------------------------------------------- the pass
def apply(task, kernel, options, status):
    """Add the checks to `task` (in place). `kernel` names it in messages; `status()` gives the
    status Buffer. Returns the number of checks added."""
    stmts = list(ir.walk(task.body))
    used = {a for s in stmts for a in s.args}
    checker = _Checker(kernel, options, status)
    for s in stmts:
        if s.op in ir.GLOBAL_ACCESS and _checked(s):
            checker.access(s, s in used)
        elif s.op in ('floordiv', 'mod') and options.debug and s.dtype.is_int and \
                not _nonzero_const(s.args[1]):
            checker.division(s)
        elif s.op == 'check':
            checker.assertion(s)
        elif s.op in _OVERFLOW and options.debug and s.dtype is not None and s.dtype.is_int \
                and s.loc is not None and not all(a.op == 'const' for a in s.args):
            checker.overflow(s)
    return checker.count


# Taichi's words (taichi/runtime/llvm/runtime_module/runtime.cpp, debug_add ...)
_OVERFLOW = {'add': 'Addition', 'sub': 'Subtraction', 'mul': 'Multiplication',
             'shl': 'Shift left'}


def _root(buf):
    while buf.primal is not None:
        buf = buf.primal
    return buf


def _checked(s):
    """Does access s need a check? Not into temporaries (the compiler's own), nor at constant
    indices inside a field's shape."""
    root = _root(s.buf)
    if root.is_temp or not s.indices:
        return False
    return root.role == 'arg' or not all(i.op == 'const' and 0 <= i.attrs['value'] < n
                                         for i, n in zip(s.indices, s.buf.shape))


def _nonzero_const(x):
    return x.op == 'const' and x.attrs['value'] != 0


class _Checker:
    def __init__(self, kernel, options, status):
        self.kernel, self.options, self._status = kernel, options, status
        self.buf = None
        self.count = 0

    def status(self):
        if self.buf is None:
            self.buf = self._status()
        return self.buf

    def builder_before(self, s):
        blk = s.parent
        b = Builder(loc=s.loc)
        return b, blk, blk.stmts.index(s)

    # ------------------------------------------------------------ the checks
    def access(self, s, used):
        buf, root = s.buf, _root(s.buf)
        b, blk, at = self.builder_before(s)
        with b.open(blk, at):
            if root.role == 'arg':
                dims = [Value(b.emit('arg', T.i32, attrs={'index': k})) for k in root.meta['dims']]
            else:
                dims = [b.const(n, T.i32) for n in buf.shape]
            ok = None
            for ix, n in zip(s.indices, dims):
                inside = b.land(b.ge(Value(ix), 0), b.lt(Value(ix), n))
                ok = inside if ok is None else b.land(ok, inside)
        values = list(s.indices) + ([d.stmt for d in dims] if root.role == 'arg' else [])
        site = Site(KernelIndexError, s.loc, [T.i32] * len(values),
                    _bounds_message(self.kernel, buf, root, len(s.indices)))
        if s.op == 'gload':  # read element 0 instead (never seen: the launch raises)
            with b.open(blk, blk.stmts.index(s)):
                s.args = [b.select(ok, Value(ix), 0).stmt for ix in s.args]
                self.report_unless(b, ok, site, values)
            return
        then = self.guard(b, blk, s, ok, site, values)
        if s.op == 'atomic' and used:  # the old value, 0 where skipped, through a local
            var = ir.Stmt('alloca', s.dtype)
            zero = ir.const(0, s.dtype)
            k = blk.stmts.index(then.owner)
            for x in (var, zero, ir.Stmt('store', None, [var, zero])):
                blk.insert(k, x)
                k += 1
            then.append(ir.Stmt('store', None, [var, s]))
            old = blk.insert(k + 1, ir.Stmt('load', s.dtype, [var]))
            for x in ir.walk(_top(blk)):
                if x is not old and not (x.op == 'store' and x.args[0] is var):
                    x.args = [old if a is s else a for a in x.args]

    def division(self, s):
        a, d = s.args
        b, blk, at = self.builder_before(s)
        with b.open(blk, at):
            ok = b.ne(Value(d), 0)
            sym = '//' if s.op == 'floordiv' else '%'
            site = Site(KernelZeroDivisionError, s.loc, [a.dtype],
                        lambda v, k=self.kernel, t=s.dtype: f'(kernel={k}) integer division by '
                        f'zero: {v[0]} {sym} 0 ({t}); the result is 0')
            self.report_unless(b, ok, site, [a])

    def assertion(self, s):
        cond, values = s.args[0], s.args[1:]
        b, blk, at = self.builder_before(s)
        blk.stmts.remove(s)
        render = s.attrs['message']
        exc = _EXC.get(s.attrs.get('exc'), TaichiAssertionError)
        site = Site(exc, s.loc, [v.dtype for v in values],
                    lambda v, k=self.kernel: f'(kernel={k}) {render(v)}')
        with b.open(blk, at):
            self.report_unless(b, b.to_bool(Value(cond)), site, values)

    def overflow(self, s):
        """After integer op s (c = a op b): print Taichi's message when it overflowed."""
        blk = s.parent
        b = Builder(loc=s.loc)
        a, d, c, t = Value(s.args[0]), Value(s.args[1]), Value(s), s.dtype
        with b.open(blk, blk.stmts.index(s) + 1):
            if s.op == 'shl':
                bad = b.ne(b.shr(c, d), a)
            elif s.op == 'mul':
                bad = self.mul_overflow(b, a, d, c, t)
            elif t.is_signed:
                x, y = (b.bxor(a, c), b.bxor(d, c)) if s.op == 'add' else (b.bxor(a, d), b.bxor(a, c))
                bad = b.lt(b.band(x, y), 0)
            else:
                bad = b.lt(c, a) if s.op == 'add' else b.lt(a, d)
            then = ir.Block()
            b.emit('if', None, [bad], blocks=[then, ir.Block()])
            with b.open(then):
                text = f'{_OVERFLOW[s.op]} overflow detected in {s.loc}\n'
                b.emit('print', None, [], {'text': (text,), 'specs': ()})
        self.count += 1

    @staticmethod
    def mul_overflow(b, a, d, c, t):
        """c = a * d overflowed: c // a != d, with a == 0 (never) and a == -1 (the division
        MIN // -1 is undefined) apart."""
        if not t.is_signed:
            return b.land(b.ne(a, 0), b.ne(b.floordiv(c, b.select(b.eq(a, 0), 1, a)), d))
        lo = -(1 << (t.bits - 1))
        plain = b.land(b.ne(a, 0), b.ne(a, -1))
        wrong = b.ne(b.floordiv(c, b.select(plain, a, 1)), d)
        return b.lor(b.land(plain, wrong),
                     b.lor(b.land(b.eq(a, -1), b.eq(d, lo)), b.land(b.eq(d, -1), b.eq(a, lo))))

    # ------------------------------------------------------------ reporting
    def guard(self, b, blk, s, ok, site, values):
        """Move s into `if ok: s else: report`; returns the then-block."""
        k = blk.stmts.index(s)
        blk.stmts.remove(s)
        then, other = ir.Block(), ir.Block()
        blk.insert(k, ir.Stmt('if', None, [ok.stmt], blocks=[then, other], loc=s.loc))
        then.append(s)
        with b.open(other):
            self.report(b, site, values)
        return then

    def report_unless(self, b, ok, site, values):
        other = ir.Block()
        b.emit('if', None, [ok], blocks=[ir.Block(), other])
        with b.open(other):
            self.report(b, site, values)

    def report(self, b, site, values):
        """The first failing invocation writes the site's code and values into the status."""
        self.count += 1
        code = _register(site)
        st = self.status()

        def word(k):
            return b.const(k, T.i32)

        old = b.emit('atomic', T.i32, [word(0), word(1)], {'buf': st, 'comp': 0, 'fn': 'bor'})
        first = ir.Block()
        b.emit('if', None, [b.eq(Value(old), 0)], blocks=[first, ir.Block()])
        with b.open(first):
            b.emit('gstore', None, [word(1), word(code)], {'buf': st, 'comp': 0, 'site': site})
            for k, v in enumerate(values):
                for j, w in enumerate(self.encode(b, Value(v))):
                    b.emit('gstore', None, [word(2 + 2 * k + j), w], {'buf': st, 'comp': 0})

    def encode(self, b, v):
        """A value as one or two i32 words (see _decode)."""
        t = v.dtype
        wide = t.bits == 64 and not t.is_narrow
        if t.is_float and wide and self.options.features.get('int64', True):
            v, t = b.bitcast(v, T.i64), T.i64
        if t.is_float:
            return [b.bitcast(b.cast(v, T.f32), T.i32)]
        if wide:
            return [b.cast(v, T.i32), b.cast(b.shr(v, 32), T.i32)]
        return [b.cast(v, T.i32)]


def _top(blk):
    while blk.owner is not None and blk.owner.parent is not None:
        blk = blk.owner.parent
    return blk


def _bounds_message(kernel, buf, root, ndim):
    what = 'ndarray' if root.role == 'arg' else 'field'
    offset = root.meta.get('offset') if root.role != 'arg' else None

    def render(v):
        index = tuple(v[:ndim])
        shape = tuple(v[ndim:]) if root.role == 'arg' else tuple(buf.shape)
        where = ''
        if offset:
            index = tuple(i + o for i, o in zip(index, offset))
            where = f' offset {tuple(offset)}'
        return (f'(kernel={kernel}) Out of bound access to {what} {buf.name} of shape '
                f'{shape}{where} at index {index}; the access was skipped')
    return render
