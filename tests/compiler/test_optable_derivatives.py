"""The op table's derivative rules, checked on the host without a device: every differentiable
op's JVP and VJP (vkdiff/optable.py), evaluated with numpy in f64 through optable.HostBuilder,
against central finite differences of the op's own host function at points in its domain; and
the same rules built as f64 IR by irbuild.Builder, run by a small host IR evaluator."""
import numpy as np
import pytest

from vkdiff import optable

# points per op, away from the op's kinks and jumps (default: DEFAULT for every operand)
DEFAULT = [-1.7, -0.6, 0.35, 1.3]
POS = [0.2, 0.7, 1.6, 3.1]
DOMAIN = {
    'asin': [[-0.9, -0.3, 0.2, 0.8]], 'acos': [[-0.9, -0.3, 0.2, 0.8]],
    'tan': [[-1.2, -0.4, 0.3, 1.1]],
    'sqrt': [POS], 'rsqrt': [POS], 'log': [POS], 'log2': [POS],
    'floor': [[-1.7, -0.6, 0.35, 1.3]], 'ceil': [[-1.7, -0.6, 0.35, 1.3]],
    'round': [[-1.7, -0.8, 0.35, 1.3]],
    'div': [DEFAULT, [1.3, -0.7, 2.1, -1.9]],
    'mod': [[2.3, -1.1, 0.35, 5.2], [1.3, 0.7, -2.1, 1.9]],
    'floordiv': [[2.3, -1.1, 0.35, 5.2], [1.3, 0.7, -2.1, 1.9]],
    'pow': [POS, [-1.5, 0.5, 2.2, 3.0]],
    'min': [DEFAULT, [-1.2, 0.1, 0.3, 2.0]], 'max': [DEFAULT, [-1.2, 0.1, 0.3, 2.0]],
    'atan2': [DEFAULT, [0.9, -1.4, 2.0, -0.3]],
}
FLOAT_TYPINGS = ('same', 'float', 'neg')
DIFF = sorted(n for n, o in optable.OPS.items() if o.typing in FLOAT_TYPINGS)
H = 1e-6


def _points(name):
    o = optable.OPS[name]
    cols = DOMAIN.get(name, [DEFAULT] * o.arity)
    assert len(cols) == o.arity
    return [np.array(c, dtype=np.float64) for c in cols]


def _fd(f, xs, k):
    hi = [x + H if j == k else x for j, x in enumerate(xs)]
    lo = [x - H if j == k else x for j, x in enumerate(xs)]
    return (f(*hi) - f(*lo)) / (2 * H)


def _num(v, like):
    """A rule's result (None is zero) as an array of `like`'s shape."""
    return np.zeros_like(like) if v is None else np.broadcast_to(np.asarray(v, np.float64), like.shape)


@pytest.mark.parametrize('name', DIFF)
def test_jvp_and_vjp_match_finite_differences(name):
    o = optable.OPS[name]
    b = optable.HostBuilder()
    xs = _points(name)
    y = o.host(*xs)
    g = np.ones_like(y)
    grads = o.vjp(b, xs, y, g)
    assert len(grads) == o.arity
    for k in range(o.arity):
        want = _fd(o.host, xs, k)
        dargs = [np.ones_like(x) if j == k else None for j, x in enumerate(xs)]
        got_jvp = _num(o.jvp(b, xs, y, dargs), y)
        got_vjp = _num(grads[k], y)
        np.testing.assert_allclose(got_jvp, want, rtol=1e-6, atol=1e-7, err_msg=f'{name} jvp d{k}')
        np.testing.assert_allclose(got_vjp, want, rtol=1e-6, atol=1e-7, err_msg=f'{name} vjp d{k}')


@pytest.mark.parametrize('name', DIFF)
def test_jvp_is_linear_in_the_tangents_and_agrees_with_vjp(name):
    """<JVP(u), w> = <u, VJP(w)> with all tangents at once (not one operand at a time)."""
    o = optable.OPS[name]
    b = optable.HostBuilder()
    xs = _points(name)
    y = o.host(*xs)
    rng = np.random.default_rng(1)
    u = [rng.normal(size=x.shape) for x in xs]
    w = rng.normal(size=y.shape)
    lhs = _num(o.jvp(b, xs, y, u), y) * w
    rhs = sum(_num(gk, y) * uk for gk, uk in zip(o.vjp(b, xs, y, w), u))
    np.testing.assert_allclose(lhs, rhs, rtol=1e-12, atol=1e-14)


def test_select_rules():
    b = optable.HostBuilder()
    c = np.array([True, False, True])
    a, d = np.array([1.0, 2.0, 3.0]), np.array([-1.0, -2.0, -3.0])
    y = np.where(c, a, d)
    assert np.array_equal(optable.jvp(b, 'select', [c, a, d], y, [None, np.ones(3), None]),
                          [1.0, 0.0, 1.0])
    gs = optable.vjp(b, 'select', [c, a, d], y, np.full(3, 2.0))
    assert gs[0] is None
    assert np.array_equal(gs[1], [2.0, 0.0, 2.0]) and np.array_equal(gs[2], [0.0, 2.0, 0.0])


def test_every_op_is_declared_completely():
    for name, o in optable.OPS.items():
        assert o.arity in (1, 2) and o.host is not None, name
        assert o.spirv is not None or o.lower is not None, name     # codegen, or lowered before
        assert (o.jvp is None) == (o.vjp is None), name
        if o.typing in FLOAT_TYPINGS:
            assert o.differentiable, name
    assert optable.UNARY | optable.BINARY == set(optable.OPS)
    assert optable.F64_LOWERED <= optable.FLOAT_UNARY | optable.BINARY


# ---------------------------------------------------------------- through the IR
def _evaluate(block, env):
    """A host IR evaluator for straight-line pure IR: numpy arrays per statement."""
    vals = {}
    for s in block.stmts:
        a = [vals[x] for x in s.args]
        if s.op == 'arg':
            v = env[s.attrs['index']]
        elif s.op == 'const':
            v = np.full_like(env[0], s.attrs['value'], dtype=s.dtype.np)
        elif s.op == 'cast':
            v = a[0].astype(s.dtype.np)
        elif s.op == 'select':
            v = np.where(a[0], a[1], a[2])
        else:
            with np.errstate(all='ignore'):
                v = optable.OPS[s.op].host(*a)
        vals[s] = np.asarray(v, dtype=s.dtype.np)
    return vals


@pytest.mark.parametrize('name', DIFF)
def test_rules_emitted_as_ir_evaluate_to_finite_differences(name):
    """The same rules built as f64 IR by irbuild.Builder (typing, constants, select, cast)
    and run by the host evaluator above."""
    from vkdiff import ir, types as T
    from vkdiff.irbuild import Builder, building
    o = optable.OPS[name]
    xs = _points(name)
    block = ir.Block()
    b = Builder(block, default_fp=T.f64)
    with building(b):
        args = [b.V(b.emit('arg', T.f64, attrs={'index': k})) for k in range(o.arity)]
        y = b.unary(name, args[0]) if o.arity == 1 else b.binary(name, *args)
        seed = b.V(b.emit('arg', T.f64, attrs={'index': o.arity}))
        grads = [None if g is None else b.cast(g, T.f64) for g in o.vjp(b, args, y, seed)]
        tangents = []
        for k in range(o.arity):
            d = o.jvp(b, args, y, [seed if j == k else None for j in range(o.arity)])
            tangents.append(None if d is None else b.cast(d, T.f64))
    vals = _evaluate(block, xs + [np.ones_like(xs[0])])
    for k in range(o.arity):
        want = _fd(o.host, xs, k)
        for what, v in (('vjp', grads[k]), ('jvp', tangents[k])):
            got = np.zeros_like(want) if v is None else vals[v.stmt]
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7, err_msg=f'{name} {what} d{k}')
