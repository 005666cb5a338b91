"""Frontend: compile-time values against run-time ones. The markers kernel code evaluates to
(`ti.static(x)`, `ti.ndrange(...)`, `ti.grouped(...)`), the exceptions that cut a `ti.static`
loop short, and the predicates the expression, statement and loop builders share (a
compile-time value? a struct local? a struct field?)."""
import itertools

import numpy as np

from ..errors import TaichiSyntaxError, TaichiTypeError
from ..lang.matrix import Matrix
from . import ops
from .context import Value, error
from .lvalues import new_local


class Static:
    """`ti.static(x)`: x is compile-time."""

    def __init__(self, value):
        self.value = value

    def __getitem__(self, key):  # `ti.static(offsets)[0]`: a compile-time element
        return self.value[key]

    def __len__(self):
        return len(self.value)


class NDRange:
    """`ti.ndrange(n, (lo, hi), ...)`, checked as Taichi does: each argument a scalar or a
    (begin, end) pair of integers (Python, numpy or run-time integer values)."""

    def __init__(self, *bounds):
        self.bounds = [(0, b) if not isinstance(b, (tuple, list)) else tuple(b) for b in bounds]
        for b in self.bounds:
            if len(b) != 2:
                raise error('Every argument of ndrange should be a scalar or a tuple/list like '
                            '(begin, end)', TaichiSyntaxError)
            for x in b:
                if not (isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))
                        or isinstance(x, Value) and x.dtype.is_int):
                    raise error('Every argument of ndrange should be an integer scalar or a '
                                'tuple/list of (int, int)', TaichiTypeError)
        self.bounds = [tuple(int(x) if isinstance(x, np.integer) else x for x in b)
                       for b in self.bounds]

    def __iter__(self):  # Python-scope use
        return itertools.product(*[range(lo, hi) for lo, hi in self.bounds])


class Grouped:
    def __init__(self, target):
        self.target = target


class _LoopCtl(Exception):
    pass


class _StaticBreak(_LoopCtl):
    """`break` directly in a ti.static loop body: stop unrolling."""


class _StaticContinue(_LoopCtl):
    """`continue` directly in a ti.static loop body: skip the rest of this unrolled copy."""


def _compile_time(x):
    if isinstance(x, Value):
        return False
    if isinstance(x, Matrix):
        return all(_compile_time(e) for e in x.entries)
    return True


def _is_runtime_scalar_or_matrix(v):
    from ..lang.struct import Struct  # lang.struct imports launch.kernel, which imports the frontend
    if isinstance(v, Value) or ops.is_number(v):
        return True
    return isinstance(v, (Matrix, Struct))


def _is_struct_lv(v):
    return getattr(type(v), '_vkdiff_struct_lvalue', False)


def _is_struct_field(v):
    return getattr(type(v), '_vkdiff_struct_field', False)


def _struct_copy(v):
    from ..lang.struct import Struct  # (as above)
    return new_local(v) if isinstance(v, Struct) else v
