"""API stage: `ti.lang.ops`, Taichi's operator functions by name (`ti.lang.ops.add(a, b)`,
`logical_not`, `abs`, ...), entrywise on vectors and matrices, in both scopes."""
from ..frontend import ops as _ops
from . import api as _api
from .matrix import Matrix as _Matrix


def _bin(op):
    def f(a, b):
        return _ops.binary(op, a, b)
    f.__name__ = op
    return f


def _un(op):
    def f(x):
        if isinstance(x, _Matrix):
            return x._map(lambda e: f(e))
        if op == 'not':
            return _ops.cast(_ops.binary('eq', x, 0), int) if hasattr(x, 'stmt') else int(not x)
        return _ops.unary(op, x)
    return f


add, sub, mul, truediv, floordiv, mod, pow = (_bin(o) for o in ('add', 'sub', 'mul', 'div',
                                                              'floordiv', 'mod', 'pow'))
bit_and, bit_or, bit_xor, bit_shl, bit_sar = (_bin(o) for o in ('band', 'bor', 'bxor', 'shl', 'shr'))
bit_shr = _bin('lshr')  # logical: zeros shifted in, also for signed integers (Taichi's bit_shr)
cmp_lt, cmp_le, cmp_gt, cmp_ge, cmp_eq, cmp_ne = (_bin(o) for o in ('lt', 'le', 'gt', 'ge', 'eq',
                                                                  'ne'))
logical_and, logical_or = _bin('land'), _bin('lor')
max, min, atan2 = _bin('max'), _bin('min'), _bin('atan2')
neg, bit_not, logical_not = _un('neg'), _un('bnot'), _un('not')
abs, sqrt, sin, cos, exp, log, floor, ceil = (_un(o) for o in ('abs', 'sqrt', 'sin', 'cos', 'exp',
                                                                'log', 'floor', 'ceil'))
atomic_add, atomic_sub, atomic_mul = _api.atomic_add, _api.atomic_sub, _api.atomic_mul
atomic_min, atomic_max = _api.atomic_min, _api.atomic_max
atomic_and, atomic_or, atomic_xor = _api.atomic_and, _api.atomic_or, _api.atomic_xor
select, cast = _api.select, _api.cast

# each function is named as exported (Taichi's ti.lang.ops.abs.__name__ == 'abs')
for _name, _fn in list(globals().items()):
    if callable(_fn) and getattr(_fn, '__module__', None) == __name__ and \
            getattr(_fn, '__qualname__', '').startswith(('_bin.', '_un.')):
        _fn.__name__ = _fn.__qualname__ = _name
