"""Core: the typed IR builder every stage emits IR with (frontend, autodiff, passes, f64 lowering).

A `Builder` has an insertion point (a block, at its end or at an index), a source location given
to what it emits, and typed constructors: `b.emit(op, dtype, args)` (raw), `b.const(v, dtype)`,
`b.value(x, dtype)`, `b.cast(x, dtype)`, `b.unary(op, x)`, `b.binary(op, x, y)`, `b.select(c, x, y)`
and one method per op of the op table (`b.sin(x)`, `b.add(x, y)`, `b.lt(x, y)`; `not` is
`b.lnot`). Results are `Value`s with Python operators (`x + y`, `2.0 * x`, `-x`, `x < y`), typed
by the table's rules (vkdiff/optable.py): a Python number adopts the other operand's type where
it fits, and otherwise takes its literal type (`default_fp` for floats when given).
Operators emit into the innermost builder made current with `building(b)`."""
import contextlib

import numpy as np

from . import ir
from . import optable
from . import types as T
from .errors import CompileError, TaichiTypeError, located

_stack = []


def current():
    """The builder Values emit into (innermost `building`), or None (Python scope)."""
    return _stack[-1] if _stack else None


@contextlib.contextmanager
def building(builder):
    _stack.append(builder)
    try:
        yield builder
    finally:
        _stack.pop()


def _builder():
    b = current()
    if b is None:
        raise CompileError('internal: IR emitted outside a kernel')
    return b


def _is_number(x):
    return isinstance(x, (int, float, np.generic))


def _op(name, rev=False):
    def f(self, other):
        if not isinstance(other, Value) and not _is_number(other):
            return NotImplemented
        b = _builder()
        return b.binary(name, other, self) if rev else b.binary(name, self, other)
    return f


# Python's binary operators as op-table names: (dunder stem, op)
ARITHMETIC = (('add', 'add'), ('sub', 'sub'), ('mul', 'mul'), ('truediv', 'div'),
              ('floordiv', 'floordiv'), ('mod', 'mod'), ('pow', 'pow'), ('and', 'band'),
              ('or', 'bor'), ('xor', 'bxor'), ('lshift', 'shl'), ('rshift', 'shr'))
_SYMBOLS = {'band': '&', 'bor': '|', 'bxor': '^', 'shl': '<<', 'shr': '>>', 'lshr': '>>'}
ORDER = (('lt', 'lt'), ('le', 'le'), ('gt', 'gt'), ('ge', 'ge'))  # no reflected forms


def set_operators(cls, make, table, reflected=True):
    """Give `cls` the operator methods of `table`: `__add__ = make('add')` and, with
    `reflected`, `__radd__ = make('add', True)`."""
    for stem, op in table:
        setattr(cls, f'__{stem}__', make(op))
        if reflected:
            setattr(cls, f'__r{stem}__', make(op, True))


class Value:
    """A run-time scalar: wraps the IR statement that computes it."""
    __slots__ = ('stmt',)
    __array_priority__ = 1000  # numpy scalars defer to our operators

    def __init__(self, stmt):
        self.stmt = stmt

    @property
    def dtype(self):
        return self.stmt.dtype

    def __repr__(self):
        return f'Value({self.stmt!r}:{self.dtype})'

    def __hash__(self):
        return id(self)

    def __neg__(self):
        return _builder().unary('neg', self)

    def __invert__(self):
        return _builder().unary('bnot', self)

    def __abs__(self):
        return _builder().unary('abs', self)


set_operators(Value, _op, ARITHMETIC)  # x + y, 2.0 * x, x << 1 ...
set_operators(Value, _op, ORDER, reflected=False)  # x < y ...


def _py(x):
    """numpy scalar -> Python number."""
    return x.item() if isinstance(x, np.generic) else x


class Builder:
    """Emits typed IR at its insertion point (see the module docstring)."""
    V = Value  # the class of the values it returns (the frontend's adds matrix resolution)

    def __init__(self, block=None, loc=None, default_fp=None, cache_consts=False):
        self.blocks = [] if block is None else [block]
        self.at_index = [None] * len(self.blocks)
        self.loc = loc
        self.default_fp = default_fp
        self._consts = {} if cache_consts else None

    # ------------------------------------------------------------ insertion point
    @contextlib.contextmanager
    def open(self, block, index=None):
        """Emit into `block` (at its end, or from `index` on) inside the `with`."""
        self.blocks.append(block)
        self.at_index.append(index)
        try:
            yield block
        finally:
            self.blocks.pop()
            self.at_index.pop()

    def insert(self, stmt):
        """Put a built statement at the insertion point; it gets the current location."""
        if not self.blocks:
            raise CompileError('internal: no open block')
        stmt.loc = stmt.loc or self.loc
        k = self.at_index[-1]
        if k is None:
            return self.blocks[-1].append(stmt)
        self.at_index[-1] = k + 1
        return self.blocks[-1].insert(k, stmt)

    def emit(self, op, dtype=None, args=(), attrs=None, blocks=(), loc=None):
        """A raw statement (operands Values or statements; no typing): returns the Stmt."""
        st = ir.Stmt(op, dtype, [a.stmt if isinstance(a, Value) else a for a in args], attrs,
                     blocks, loc=loc)
        return self.insert(st)

    def error(self, message, exc=CompileError):
        return located(exc, message, self.loc)

    # ------------------------------------------------------------ typed values
    @property
    def fp(self):
        return self.default_fp or T.Defaults.fp

    def literal_type(self, x):
        return self.fp if isinstance(x, float) else T.literal_type(x)

    def dtype_of(self, x):
        if isinstance(x, (Value, ir.Stmt)):
            return x.dtype
        if not _is_number(x):
            raise self.error(f'expected a number or a scalar kernel value, got '
                             f'{type(x).__name__}: {x!r}')
        return self.literal_type(_py(x))

    def const(self, value, dtype=None):
        value = _py(value)
        dtype = dtype or self.literal_type(value)
        key = None
        if self._consts is not None:
            key = (dtype.name, 'nan' if value != value else
                   float(value).hex() if dtype.is_float else int(value))
            if key in self._consts:
                return self._consts[key]
        v = self.V(self.insert(ir.const(value, dtype)))
        if key is not None:
            self._consts[key] = v
        return v

    def value(self, x, dtype=None):
        """x as a Value (a number becomes a constant of `dtype` or its literal type)."""
        if isinstance(x, ir.Stmt):
            x = self.V(x)
        if isinstance(x, Value):
            return x if dtype is None or x.dtype is dtype else self.cast(x, dtype)
        if not _is_number(x):
            raise self.error(f'expected a number or a scalar kernel value, got '
                             f'{type(x).__name__}: {x!r}')
        return self.const(x, dtype)

    def cast(self, x, dtype):
        if not isinstance(x, (Value, ir.Stmt)):
            return self.const(x, dtype)
        x = self.value(x)
        if x.dtype is dtype:
            return x
        return self.V(self.emit('cast', dtype, [x]))

    def bitcast(self, x, dtype):
        return self.V(self.emit('bitcast', dtype, [self.value(x)]))

    def to_bool(self, x):
        if isinstance(x, (Value, ir.Stmt)):
            x = self.value(x)
            return x if x.dtype is T.u1 else self.binary('ne', x, 0)
        return self.const(bool(_py(x)), T.u1)

    def operand_types(self, a, b):
        """Result type of a binary op; a Python literal adopts the other side's type where it fits."""
        ta, tb = self.dtype_of(a), self.dtype_of(b)
        if not isinstance(a, (Value, ir.Stmt)):
            ta = tb if (tb.is_float or isinstance(_py(a), (int, bool))) and not tb.is_bool else ta
        if not isinstance(b, (Value, ir.Stmt)):
            tb = ta if (ta.is_float or isinstance(_py(b), (int, bool))) and not ta.is_bool else tb
        return T.promote(ta, tb)

    def unary(self, op, a):
        """The op on a Value (typed by the table); on a Python number, its value (folded)."""
        if not isinstance(a, (Value, ir.Stmt)):
            o = optable.OPS[op]
            return o.fold(_py(a)) if o.fold is not None else float(o.host(_py(a)))
        typing = optable.OPS[op].typing
        if typing == 'logical':
            return self.V(self.emit(op, T.u1, [self.to_bool(a)]))
        t = self.dtype_of(a)
        if typing == 'float' and not t.is_float:
            t = self.fp
        elif typing == 'int' and t.is_float:
            raise self.error(f"unsupported operand type for '~': '{t}' (bitwise operations "
                             f"take integers)", TaichiTypeError)
        elif typing == 'neg' and t.is_bool:
            t = T.i32
        return self.V(self.emit(op, t, [self.value(a, t)]))

    def binary(self, op, a, b):
        """The op on Values (typed by the table); on two Python numbers, its value (folded)."""
        if not isinstance(a, (Value, ir.Stmt)) and not isinstance(b, (Value, ir.Stmt)):
            o = optable.OPS[op]
            return (o.fold or o.host)(_py(a), _py(b))
        typing = optable.OPS[op].typing
        if typing == 'logical':
            return self.V(self.emit(op, T.u1, [self.to_bool(a), self.to_bool(b)]))
        t = self.operand_types(a, b)
        if typing == 'float' and not t.is_float:
            t = self.fp
        elif typing in ('int', 'shift') and (t.is_float or self.dtype_of(a).is_float
                                             or self.dtype_of(b).is_float):
            raise self.error(f"unsupported operand type(s) for '{_SYMBOLS.get(op, op)}': "
                             f"'{self.dtype_of(a)}' and '{self.dtype_of(b)}' (bitwise "
                             f"operations take integers)", TaichiTypeError)
        if typing == 'shift':
            isv = isinstance(a, (Value, ir.Stmt))
            va = self.value(a)
            vb = self.value(b, va.dtype if isv else t)
            return self.V(self.emit(op, va.dtype, [va, vb]))
        rt = T.u1 if typing == 'compare' else t
        return self.V(self.emit(op, rt, [self.value(a, t), self.value(b, t)]))

    def select(self, cond, a, b):
        t = self.operand_types(a, b)
        return self.V(self.emit('select', t, [self.to_bool(cond), self.value(a, t),
                                             self.value(b, t)]))

    def lnot(self, a):
        return self.unary('not', a)


def _method(name, arity):
    if arity == 1:
        def f(self, x):
            return self.unary(name, x)
    else:
        def f(self, x, y):
            return self.binary(name, x, y)
    f.__name__ = name
    return f


for _o in optable.OPS.values():
    if _o.name != 'not':
        setattr(Builder, _o.name, _method(_o.name, _o.arity))
