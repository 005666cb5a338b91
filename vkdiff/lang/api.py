"""Face floor: the functions kernel code calls (`ti.static`, `ti.ndrange`, `ti.random`, atomics,
math), usable in Python scope too where that makes sense."""
from .. import optable
from .. import types as T
from ..errors import TaichiTypeError, VkdiffError
from ..frontend import ops, sparse as frontend_sparse
from ..frontend.compiletime import grouped, ndrange, static  # noqa: F401  (ti.static, ...)
from ..frontend.context import Value, emit, error, current
from . import sparse, state
from .matrix import Matrix, elementwise


def loop_config(*, serialize=False, block_dim=None, parallelize=None, block_dim_adaptive=True,
                bit_vectorize=False):
    """`ti.loop_config(serialize=True)`: the next for loop of the kernel runs serially (in order,
    on one invocation) instead of in parallel. `block_dim=B` sets the workgroup size of a loop
    that uses ti.simt.block shared arrays / sync (B consecutive iterations share them). The other
    options are accepted and ignored."""
    em = current()
    if em is not None:
        em.loop_config = {'serialize': bool(serialize), 'block_dim': block_dim}


def random(dtype=float):
    dtype = T.resolve(dtype)
    if current() is None:
        rng = _host_rng()
        return float(rng.random()) if dtype.is_float else int(rng.integers(0, 2 ** 31))
    return Value(emit('random', dtype))


_rng = None


def _host_rng():
    global _rng
    import numpy as np
    if _rng is None:
        _rng = np.random.default_rng(state.config['random_seed'])
    return _rng


def randn(dtype=float):
    """A standard normal sample (Box-Muller on two ti.random() draws)."""
    dtype = T.resolve(dtype)
    if current() is None:
        return float(_host_rng().standard_normal())
    u1 = ops.binary('sub', 1.0, random(dtype))  # in (0, 1]: log is finite
    u2 = random(dtype)
    r = ops.unary('sqrt', ops.binary('mul', -2.0, ops.unary('log', u1)))
    return ops.binary('mul', r, ops.unary('cos', ops.binary('mul', 6.283185307179586, u2)))


def static_assert(cond, msg=None):
    """A compile-time assertion."""
    if isinstance(cond, Value):  # Taichi's error and message
        raise error('Static assert with non-static condition (ti.static_assert needs a '
                    'compile-time condition)', TaichiTypeError)
    if not cond:
        raise error(f'static assertion failed{": " + str(msg) if msg else ""}')


static_assert._vkdiff_static_scope = True


def static_print(*args, **kwargs):
    """print() at compile time."""
    print(*args, **kwargs)


def _atomic(fn):
    def f(target, value):
        raise error(f'ti.atomic_{fn} must be called in a kernel with a field element or local as '
                    'its first argument')
    f.__name__ = f'atomic_{fn}'
    f._vkdiff_atomic = fn
    return f


atomic_add, atomic_sub = _atomic('add'), _atomic('sub')
atomic_min, atomic_max = _atomic('min'), _atomic('max')
atomic_and, atomic_or, atomic_xor = _atomic('band'), _atomic('bor'), _atomic('bxor')
atomic_mul = _atomic('mul')


def _table_function(o):
    if o.name in ('floor', 'ceil'):  # Taichi's ti.floor(x, dtype=None): the result cast
        def f(x, dtype=None):
            r = ops.unary(o.name, x)
            return ops.cast(r, dtype) if dtype is not None else r
    elif o.arity == 1:
        def f(x):
            return ops.unary(o.name, x)
    else:
        def f(a, b):
            return ops.binary(o.name, a, b)
    f.__name__ = f.__qualname__ = o.name
    f.__doc__ = (f'{o.name}, elementwise on vectors and matrices, in kernels and in Python scope '
                 '(declared in vkdiff/optable.py)')
    return f


# sin, cos, sqrt, abs, ...: one function per op the op table exports (its `api` column)
TABLE_FUNCTIONS = {o.name: _table_function(o) for o in optable.OPS.values() if o.api}
globals().update(TABLE_FUNCTIONS)


def table_functions(namespace):
    """{name: function} of the op table's exports in `namespace` ('ti' or 'ti.math')."""
    return {o.name: TABLE_FUNCTIONS[o.name] for o in optable.exported(namespace)}


def round(x, dtype=None):
    r = ops.unary('round', x)
    return ops.cast(r, dtype) if dtype is not None else r


def atan2(y, x):
    return ops.binary('atan2', y, x)


def pow(x, y):
    return ops.binary('pow', x, y)


def min(*args):
    return ops.reduce('min', args)


def max(*args):
    return ops.reduce('max', args)


def select(cond, a, b):
    return ops.select(cond, a, b)


def cast(x, dtype):
    return ops.cast(x, dtype)


def bit_cast(x, dtype):
    dtype = T.resolve(dtype)
    if not isinstance(x, Value):
        import numpy as np
        return np.array(x, dtype=ops.dtype_of(x).np).view(dtype.np)[()].item()
    if x.dtype.bits != dtype.bits:
        raise error('bit_cast needs types of the same width')
    return Value(emit('bitcast', dtype, [x]))


def exp2(x):
    return ops.unary('exp2', x)


def raw_div(a, b):
    """C-style division: truncates toward zero for integers (Python's // floors); entrywise on
    vectors and matrices (a scalar broadcasts)."""
    if isinstance(a, Matrix) or isinstance(b, Matrix):
        return elementwise(raw_div, a, b)
    if ops.dtype_of(a).is_float or ops.dtype_of(b).is_float:
        return ops.binary('div', a, b)
    q = ops.binary('floordiv', a, b)
    inexact = ops.binary('ne', ops.binary('mul', q, b), a)
    signs_differ = ops.binary('ne', ops.binary('lt', a, 0), ops.binary('lt', b, 0))
    return ops.select(ops.binary('land', inexact, signs_differ), ops.binary('add', q, 1), q)


def raw_mod(a, b):
    """C-style remainder: takes the sign of the dividend (Python's % takes the divisor's);
    entrywise on vectors and matrices."""
    if isinstance(a, Matrix) or isinstance(b, Matrix):
        return elementwise(raw_mod, a, b)
    if ops.dtype_of(a).is_float or ops.dtype_of(b).is_float:
        q = ops.binary('div', a, b)
        t = ops.select(ops.binary('lt', q, 0.0), ops.unary('ceil', q), ops.unary('floor', q))
        return ops.binary('sub', a, ops.binary('mul', t, b))
    return ops.binary('sub', a, ops.binary('mul', raw_div(a, b), b))


def isnan(x):
    return ops.binary('ne', x, x)


def isinf(x):
    return ops.binary('eq', ops.unary('abs', x), float('inf'))


def clamp(x, lo, hi):
    return min(hi, max(lo, x))  # Taichi's operand order (matters for NaN)


@state.synchronized
def sync():
    """Wait for every queued launch to finish."""
    if state.has_runtime():
        state.runtime().flush()


def device_name():
    return state.runtime().name


def device_features():
    return dict(state.runtime().features)


# ---- sparse SNodes, kernel only (the data is lang/sparse.py; the IR frontend/sparse.py) --------
def activate(node, indices):
    """`ti.activate(snode, I)`: activate the cell I of `snode` (and its ancestors)."""
    sparse._check_node(node, 'activate')
    if current() is None:
        _kernel_only('activate')
    frontend_sparse.activate(node, indices)


def deactivate(node, indices):
    """`ti.deactivate(snode, I)`: a pointer cell's data is zeroed (Taichi frees it), a
    bitmasked cell's mask bit cleared, a dynamic node's list at I emptied (its data zeroed)."""
    sparse._check_node(node, 'deactivate')
    if current() is None:
        _kernel_only('deactivate')
    frontend_sparse.deactivate(node, indices)


def is_active(node, indices):
    """`ti.is_active(snode, I)`: 1 if the cell I of `snode` is active, else 0."""
    sparse._check_node(node, 'is_active')
    if current() is None:
        _kernel_only('is_active')
    return frontend_sparse.is_active(node, indices)


def append(node, indices, value):
    """`ti.append(dyn, I, v)`: append v to the list at I of a dynamic node; the old length."""
    if current() is None:
        _kernel_only('append')
    if not sparse._is_node(node):
        node = node.parent()  # a field placed in the dynamic node (Taichi accepts it)
    return frontend_sparse.append(node, indices, value)


def length(node, indices):
    """`ti.length(dyn, I)`: the length of the list at I of a dynamic node."""
    if current() is None:
        _kernel_only('length')
    if not sparse._is_node(node):
        node = node.parent()
    return frontend_sparse.length(node, indices)


def _kernel_only(name):
    raise VkdiffError(f'ti.{name} can only be called in a kernel (Taichi scope)')
