"""Autodiff: the derivative table. One entry per IR op, forward (JVP) and reverse (VJP) side by
side. Both are written with the frontend's scalar ops, so they emit IR like kernel code does.

  jvp(args, y, dargs) -> dy       dargs[k] is None where operand k has no tangent
  vjp(args, y, g)     -> [dx_k]   None where operand k gets nothing

Subgradient choices: |x|' = sign(x) (0 at 0); min/max send the gradient to the first operand on
ties; sqrt'(0) = 0 (so norm() of a zero vector has a zero gradient, not NaN); floor, ceil, round,
comparisons and integer ops have zero derivative."""
from ..frontend import ops

add, sub, mul, div = (lambda a, b: ops.binary('add', a, b)), (lambda a, b: ops.binary('sub', a, b)), \
    (lambda a, b: ops.binary('mul', a, b)), (lambda a, b: ops.binary('div', a, b))
neg = lambda a: ops.unary('neg', a)  # noqa: E731
sel = ops.select


def cmp(op, a, b):
    return ops.binary(op, a, b)


def _sum(*terms):
    terms = [t for t in terms if t is not None]
    if not terms:
        return None
    acc = terms[0]
    for t in terms[1:]:
        acc = add(acc, t)
    return acc


def _scale(d, f):
    return None if d is None else mul(d, f)


def linear_unary(factor):
    """A unary op with dy = factor(x, y) * dx."""
    return (lambda a, y, d: _scale(d[0], factor(a[0], y)),
            lambda a, y, g: [mul(g, factor(a[0], y))])


def _sqrt_factor(x, y):
    return sel(cmp('gt', y, 0.0), div(0.5, y), 0.0)


def _pow_jvp(a, y, d):
    x, p = a
    dx_term = None if d[0] is None else mul(d[0], mul(p, ops.binary('pow', x, sub(p, 1.0))))
    dp_term = None if d[1] is None else mul(d[1], mul(y, ops.unary('log', x)))
    return _sum(dx_term, dp_term)


def _pow_vjp(a, y, g, need=(True, True)):
    x, p = a
    return [mul(g, mul(p, ops.binary('pow', x, sub(p, 1.0)))),
            mul(g, mul(y, ops.unary('log', x)))]


def _atan2_factors(a):
    yv, xv = a
    r2 = add(mul(xv, xv), mul(yv, yv))
    return div(xv, r2), neg(div(yv, r2))


def _sign(x):
    return sel(cmp('gt', x, 0.0), 1.0, sel(cmp('lt', x, 0.0), -1.0, 0.0))


RULES = {
    'add': (lambda a, y, d: _sum(d[0], d[1]),
            lambda a, y, g: [g, g]),
    'sub': (lambda a, y, d: _sum(d[0], None if d[1] is None else neg(d[1])),
            lambda a, y, g: [g, neg(g)]),
    'mul': (lambda a, y, d: _sum(_scale(d[0], a[1]), _scale(d[1], a[0])),
            lambda a, y, g: [mul(g, a[1]), mul(g, a[0])]),
    'div': (lambda a, y, d: _sum(None if d[0] is None else div(d[0], a[1]),
                                 None if d[1] is None else neg(div(mul(d[1], y), a[1]))),
            lambda a, y, g: [div(g, a[1]), neg(div(mul(g, y), a[1]))]),
    'neg': (lambda a, y, d: None if d[0] is None else neg(d[0]),
            lambda a, y, g: [neg(g)]),
    'sin': linear_unary(lambda x, y: ops.unary('cos', x)),
    'cos': linear_unary(lambda x, y: neg(ops.unary('sin', x))),
    'tan': linear_unary(lambda x, y: add(1.0, mul(y, y))),
    'asin': linear_unary(lambda x, y: ops.unary('rsqrt', sub(1.0, mul(x, x)))),
    'acos': linear_unary(lambda x, y: neg(ops.unary('rsqrt', sub(1.0, mul(x, x))))),
    'atan': linear_unary(lambda x, y: div(1.0, add(1.0, mul(x, x)))),
    'sqrt': linear_unary(_sqrt_factor),
    'rsqrt': linear_unary(lambda x, y: mul(-0.5, div(y, x))),
    'exp': linear_unary(lambda x, y: y),
    'log': linear_unary(lambda x, y: div(1.0, x)),
    'tanh': linear_unary(lambda x, y: sub(1.0, mul(y, y))),
    'abs': linear_unary(lambda x, y: _sign(x)),
    'floor': (lambda a, y, d: None, lambda a, y, g: [None]),
    'ceil': (lambda a, y, d: None, lambda a, y, g: [None]),
    'round': (lambda a, y, d: None, lambda a, y, g: [None]),
    'pow': (_pow_jvp, _pow_vjp),
    'atan2': (lambda a, y, d: _sum(*[_scale(dk, fk) for dk, fk in zip(d, _atan2_factors(a))]),
              lambda a, y, g: [mul(g, f) for f in _atan2_factors(a)]),
    'min': (lambda a, y, d: _select_tangent(cmp('le', a[0], a[1]), d),
            lambda a, y, g: _select_grads(cmp('le', a[0], a[1]), g)),
    'max': (lambda a, y, d: _select_tangent(cmp('ge', a[0], a[1]), d),
            lambda a, y, g: _select_grads(cmp('ge', a[0], a[1]), g)),
    'select': (lambda a, y, d: _select_tangent(a[0], d[1:]),
               lambda a, y, g: [None] + _select_grads(a[0], g)),
    'mod': (lambda a, y, d: _sum(d[0], None if d[1] is None else
                                 neg(mul(d[1], ops.unary('floor', div(a[0], a[1]))))),
            lambda a, y, g: [g, neg(mul(g, ops.unary('floor', div(a[0], a[1]))))]),
    'floordiv': (lambda a, y, d: None, lambda a, y, g: [None, None]),
}


def _select_tangent(c, d):
    if d[0] is None and d[1] is None:
        return None
    return sel(c, d[0] if d[0] is not None else 0.0, d[1] if d[1] is not None else 0.0)


def _select_grads(c, g):
    return [sel(c, g, 0.0), sel(c, 0.0, g)]


def jvp(op, args, y, dargs):
    return RULES[op][0](args, y, dargs)


def vjp(op, args, y, g):
    return RULES[op][1](args, y, g)


def has_rule(op):
    return op in RULES
