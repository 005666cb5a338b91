"""Values floor, the frontend's state: the block statements are emitted into, the current source location, and the
run-time scalar `Value` that kernel code computes with."""
from .. import irbuild
from ..errors import CompileError, located
from ..irbuild import current, building as emitting  # noqa: F401  (the frontend's names)


class Emitter(irbuild.Builder):
    """The kernel's IR builder, plus what the frontend tracks while it builds."""

    def __init__(self, debug=False, check_bounds=False):
        super().__init__()
        # settings, filled in by launch/kernel.py from ti.init's config (as launch/compiled.py
        # fills compiler.CompileOptions): asserts are built (debug), bound checks are built
        self.debug, self.check_bounds = debug, check_bounds
        self.kernel_ir = None  # the kernel being built (funcs called from library code need it)
        self.loop_config = None  # set by ti.loop_config(...) for the next for loop
        self.V = Value


def emit(op, dtype=None, args=(), attrs=None, blocks=()):
    em = current()
    if em is None:
        raise CompileError(f'internal: `{op}` emitted outside a kernel')
    return em.emit(op, dtype, args, attrs, blocks)


def error(message, exc=CompileError):
    em = current()
    return located(exc, message, em.loc if em else None)


def _binop(op, rev=False):
    """An operator method delegating to ops.binary."""
    def f(self, other):
        return ops.binary(op, other, self) if rev else ops.binary(op, self, other)
    return f


class Arithmetic:
    """Python operators of kernel values and matrices (irbuild's table: arithmetic, bitwise,
    shifts, order): each is one ops.binary call (a Python number on either side is folded or
    adopts the other side's type; a matrix goes entry by entry)."""
    __slots__ = ()


irbuild.set_operators(Arithmetic, _binop, irbuild.ARITHMETIC)
irbuild.set_operators(Arithmetic, _binop, irbuild.ORDER, reflected=False)


class Value(Arithmetic, irbuild.Value):
    """A run-time scalar inside a kernel (an irbuild.Value): its operators go through frontend.ops,
    which adds Python-object resolution (matrices, compile-time folding) to the builder's typing."""

    __slots__ = ()

    def __bool__(self):
        raise error('a run-time value cannot be used where Python needs a compile-time bool '
                    '(use `if` on it in kernel code, or ti.static(...) for compile-time values)')

    def __index__(self):
        raise error('a run-time value cannot be used as a compile-time index')

    def __hash__(self):
        return id(self)

    __eq__, __ne__ = _binop('eq'), _binop('ne')

    def __neg__(self):
        return ops.unary('neg', self)

    def __pos__(self):
        return self

    def __invert__(self):
        return ops.unary('bnot', self)

    def __abs__(self):
        return ops.unary('abs', self)


from . import ops  # noqa: E402  (cycle inside the values floor: ops.py imports this module)
