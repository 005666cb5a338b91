"""Frontend floor: compile-time values against run-time ones. The markers kernel code evaluates to
(`ti.static(x)`, `ti.ndrange(...)`, `ti.grouped(...)`), the exceptions that cut a `ti.static`
loop short, and the predicates the expression, statement and loop builders share (a
compile-time value? a struct local? a struct field?). `ti.static`, `ti.ndrange` and `ti.grouped`
themselves are here (lang/api.py exports them), each with its `_vkdiff_marker`."""
import itertools

import numpy as np

from ..errors import TaichiSyntaxError, TaichiTypeError
from ..lang.field import Field
from ..lang.matrix import Matrix, Vector
from . import ops
from .context import Value, current, error
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
    if isinstance(v, Value) or ops.is_number(v):
        return True
    return isinstance(v, Matrix) or _is_struct(v)


def _is_struct(v):
    """A struct value (frontend/struct.py's Struct)?"""
    return getattr(type(v), '_vkdiff_struct_value', False)


def _is_struct_lv(v):
    return getattr(type(v), '_vkdiff_struct_lvalue', False)


def _is_struct_field(v):
    return getattr(type(v), '_vkdiff_struct_field', False)


def _struct_copy(v):
    return new_local(v) if _is_struct(v) else v


# ---- ti.static / ti.ndrange / ti.grouped (exported by lang/api.py) --------------------------
def static(x, *xs):
    """`ti.static(x)`: evaluate x at compile time (unrolls loops, selects branches)."""
    if xs:
        return tuple(static(v) for v in (x,) + xs)
    if current() is None:
        return x
    if isinstance(x, Grouped):  # ti.static(ti.grouped(ti.ndrange(...))): unrolled index vectors
        if not isinstance(x.target, NDRange):
            raise error("Only 'ti.ndrange' is allowed in 'ti.static(ti.grouped(...))'.",
                        TaichiSyntaxError)
        return Static([Vector(list(i)) for i in x.target])
    if isinstance(x, (range, list, tuple, NDRange)) or hasattr(x, '__iter__') and \
            not isinstance(x, (str, Field)):
        return Static(list(x) if isinstance(x, NDRange) else x)
    if isinstance(x, Value):
        raise error('ti.static() needs a compile-time value, got a run-time one')
    return x


static._vkdiff_static_scope = True  # the frontend builds its arguments in static scope
static._vkdiff_marker = 'static'  # how the loop builder tells ti.static(...) (loops._decorator)


def ndrange(*bounds):
    return NDRange(*bounds)


ndrange._vkdiff_marker = 'ndrange'


def grouped(x):
    """`ti.grouped(x)`: a loop over x's indices as one index vector."""
    if current() is None:
        import itertools
        if isinstance(x, Field):
            off = x.offset or (0,) * len(x.shape)
            return itertools.product(*[range(o, o + n) for n, o in zip(x.shape, off)])
        return iter(x)
    return Grouped(x)


grouped._vkdiff_marker = 'grouped'
