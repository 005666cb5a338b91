"""Face floor: `ti.lang.ops`, Taichi's operator functions by name (`ti.lang.ops.add(a, b)`,
`logical_not`, `abs`, ...), entrywise on vectors and matrices, in both scopes."""
from ..frontend import ops as _ops
from . import api as _api
from .matrix import Matrix as _Matrix


def _named(f, name):
    f.__name__ = f.__qualname__ = name  # Taichi's function name (ti.lang.ops.abs.__name__ == 'abs')
    return f


def _bin(op, name=None):
    def f(a, b):
        return _ops.binary(op, a, b)
    return _named(f, name or op)


def _un(op, name=None):
    def f(x):
        if isinstance(x, _Matrix):
            return x._map(lambda e: f(e))
        if op == 'not':
            return _ops.cast(_ops.binary('eq', x, 0), int) if hasattr(x, 'stmt') else int(not x)
        return _ops.unary(op, x)
    return _named(f, name or op)


add, sub, mul, truediv, floordiv, mod, pow = (_bin(o, n) for o, n in (
    ('add', 'add'), ('sub', 'sub'), ('mul', 'mul'), ('div', 'truediv'), ('floordiv', 'floordiv'),
    ('mod', 'mod'), ('pow', 'pow')))
bit_and, bit_or, bit_xor, bit_shl, bit_sar = (_bin(o, n) for o, n in (
    ('band', 'bit_and'), ('bor', 'bit_or'), ('bxor', 'bit_xor'), ('shl', 'bit_shl'),
    ('shr', 'bit_sar')))
cmp_lt, cmp_le, cmp_gt, cmp_ge, cmp_eq, cmp_ne = (_bin(o, 'cmp_' + o) for o in (
    'lt', 'le', 'gt', 'ge', 'eq', 'ne'))
logical_and, logical_or = _bin('land', 'logical_and'), _bin('lor', 'logical_or')
bit_shr = _bin('lshr', 'bit_shr')  # logical: zeros shifted in, also for signed integers
max, min, atan2 = _bin('max'), _bin('min'), _bin('atan2')
neg, bit_not, logical_not = _un('neg'), _un('bnot', 'bit_not'), _un('not', 'logical_not')
abs, sqrt, sin, cos, exp, log, floor, ceil = (_un(o) for o in ('abs', 'sqrt', 'sin', 'cos', 'exp',
                                                                'log', 'floor', 'ceil'))
atomic_add, atomic_sub, atomic_mul = _api.atomic_add, _api.atomic_sub, _api.atomic_mul
atomic_min, atomic_max = _api.atomic_min, _api.atomic_max
atomic_and, atomic_or, atomic_xor = _api.atomic_and, _api.atomic_or, _api.atomic_xor
select, cast = _api.select, _api.cast

