"""Frontend state: the block statements are emitted into, the current source location, and the
run-time scalar `Value` that kernel code computes with."""
import contextlib

from .. import ir
from ..errors import CompileError, located


class Emitter:
    """Appends statements to the innermost open block."""

    def __init__(self):
        self.blocks = []
        self.loc = None
        self.kernel_ir = None  # the kernel being built (funcs called from library code need it)
        self.loop_config = None  # set by ti.loop_config(...) for the next for loop

    def emit(self, stmt):
        if not self.blocks:
            raise CompileError('internal: no open block')
        stmt.loc = stmt.loc or self.loc
        return self.blocks[-1].append(stmt)

    @contextlib.contextmanager
    def open(self, block):
        self.blocks.append(block)
        try:
            yield block
        finally:
            self.blocks.pop()


_stack = []


def current():
    """The active emitter, or None in Python scope."""
    return _stack[-1] if _stack else None


@contextlib.contextmanager
def emitting(emitter):
    _stack.append(emitter)
    try:
        yield emitter
    finally:
        _stack.pop()


def emit(op, dtype=None, args=(), attrs=None, blocks=()):
    em = current()
    if em is None:
        raise CompileError(f'internal: `{op}` emitted outside a kernel')
    return em.emit(ir.Stmt(op, dtype, [a.stmt if isinstance(a, Value) else a for a in args],
                           attrs, blocks))


def error(message, exc=CompileError):
    em = current()
    return located(exc, message, em.loc if em else None)


class Value:
    """A run-time scalar inside a kernel: wraps the IR statement that computes it."""

    __slots__ = ('stmt',)
    __array_priority__ = 1000  # numpy scalars defer to our operators

    def __init__(self, stmt):
        self.stmt = stmt

    @property
    def dtype(self):
        return self.stmt.dtype

    def __repr__(self):
        return f'Value({self.stmt!r}:{self.dtype})'

    def __bool__(self):
        raise error('a run-time value cannot be used where Python needs a compile-time bool '
                    '(use `if` on it in kernel code, or ti.static(...) for compile-time values)')

    def __index__(self):
        raise error('a run-time value cannot be used as a compile-time index')

    def __hash__(self):
        return id(self)

    # arithmetic: delegated to ops (imported lazily to avoid a cycle)
    def _b(op, rev=False):
        def f(self, other):
            from . import ops
            return ops.binary(op, other, self) if rev else ops.binary(op, self, other)
        return f

    __add__, __radd__ = _b('add'), _b('add', True)
    __sub__, __rsub__ = _b('sub'), _b('sub', True)
    __mul__, __rmul__ = _b('mul'), _b('mul', True)
    __truediv__, __rtruediv__ = _b('div'), _b('div', True)
    __floordiv__, __rfloordiv__ = _b('floordiv'), _b('floordiv', True)
    __mod__, __rmod__ = _b('mod'), _b('mod', True)
    __pow__, __rpow__ = _b('pow'), _b('pow', True)
    __and__, __rand__ = _b('band'), _b('band', True)
    __or__, __ror__ = _b('bor'), _b('bor', True)
    __xor__, __rxor__ = _b('bxor'), _b('bxor', True)
    __lshift__, __rlshift__ = _b('shl'), _b('shl', True)
    __rshift__, __rrshift__ = _b('shr'), _b('shr', True)
    __lt__, __le__ = _b('lt'), _b('le')
    __gt__, __ge__ = _b('gt'), _b('ge')
    __eq__, __ne__ = _b('eq'), _b('ne')
    del _b

    def __neg__(self):
        from . import ops
        return ops.unary('neg', self)

    def __pos__(self):
        return self

    def __invert__(self):
        from . import ops
        return ops.unary('bnot', self)

    def __abs__(self):
        from . import ops
        return ops.unary('abs', self)
