"""Face floor: Taichi public names that the rest of the API layer has no other home for
(`ti.atomic_mul`, `ti.zero`/`one`, `ti.solve`, `ti.eig`, `ti.stop_grad`, ...). `vkdiff/__init__.py`
star-imports `__all__` from here, so each name is listed once. Definitions follow Taichi 1.7.4
(python/taichi/_funcs.py, lang/impl.py), written branch-free with select so they work in both
scopes."""
from .. import types as T
from ..errors import CompileError, TaichiSyntaxError
from ..frontend import ops
from ..frontend.context import current, error
from . import api as _api
from .fields_builder import FieldsBuilder, SNodeTree
from ..frontend.func import Func, func
from .matrix import Matrix, Vector
from .enums import Layout
from . import init_config as _init_config
from .simt import block as _simt_block
from .field import Field

atomic_mul = _api.atomic_mul
from .ops import bit_shr  # noqa: E402  (lang/ops.py: ti.lang.ops.bit_shr)


def zero(x):
    """A zero of the same shape and type as x (`x * 0`)."""
    return x * 0


def one(x):
    """A one of the same shape and type as x."""
    return zero(x) + 1


def _sel(c, a, b):
    return ops.select(c, a, b)


def _rows(M):
    return [[M.entries[i * M.m + j] for j in range(M.m)] for i in range(M.n)]


def solve(A, b, dt=None):
    """x with A x = b for a 2x2 or 3x3 A: Gaussian elimination with partial pivoting (the pivot
    is the first largest |entry| of the column, as in Taichi)."""
    if not isinstance(A, Matrix) or not isinstance(b, Matrix) or A.n != A.m:
        raise error('ti.solve(A, b) takes a square matrix A and a vector b', TypeError)
    if A.n not in (2, 3) or b.n != A.n:
        raise error('ti.solve supports 2x2 and 3x3 systems, with b of the same size', ValueError)
    dt = T.resolve(dt if dt is not None else float)
    n = A.n
    R = [[ops.cast(e, dt) for e in row] + [ops.cast(b.entries[i], dt)]
         for i, row in enumerate(_rows(A))]
    for i in range(n):
        best, best_v = i, _api.abs(R[i][i])
        for j in range(i + 1, n):
            c = ops.binary('gt', _api.abs(R[j][i]), best_v)
            best = _sel(c, j, best)
            best_v = _sel(c, _api.abs(R[j][i]), best_v)
        old_i = R[i]
        for j in range(i + 1, n):  # swap row i with the pivot row
            c = ops.binary('eq', best, j)
            R[i] = [_sel(c, y, x) for x, y in zip(R[i], R[j])]
            R[j] = [_sel(c, x, y) for x, y in zip(old_i, R[j])]
        for j in range(i + 1, n):
            scale = R[j][i] / R[i][i]
            R[j] = [R[j][k] if k < i else (R[j][k] * 0 if k == i else R[j][k] - R[i][k] * scale)
                    for k in range(n + 1)]
    x = [None] * n
    for i in range(n - 1, -1, -1):
        v = R[i][n]
        for k in range(i + 1, n):
            v = v - R[i][k] * x[k]
        x[i] = v / R[i][i]
    return Vector(x)


def eig(A, dt=None):
    """Eigenvalues and right eigenvectors of a real 2x2 matrix, in complex form (Taichi's layout):
    eigenvalues as a 2x2 matrix, one (re, im) row per eigenvalue; eigenvectors as a 4x2 matrix,
    one column per eigenvector, entries (re, im) interleaved."""
    if not isinstance(A, Matrix) or A.n != A.m:
        raise error('ti.eig takes a square matrix', TypeError)
    if A.n != 2:
        raise error('ti.eig supports 2x2 matrices only (ti.sym_eig handles symmetric 3x3)',
                    ValueError)
    dt = T.resolve(dt if dt is not None else float)
    a, b, c, d = (ops.cast(e, dt) for e in A.entries)
    tr, det = a + d, a * d - b * c
    gap = tr * tr - 4 * det
    real = ops.binary('gt', gap, 0)
    s = _api.sqrt(_api.abs(gap))
    # real case: lambda = (tr +- s) / 2; complex case: (tr/2, +-s/2)
    l1r, l2r = _sel(real, (tr + s) * 0.5, tr * 0.5), _sel(real, (tr - s) * 0.5, tr * 0.5)
    l1i, l2i = _sel(real, 0.0 * s, s * 0.5), _sel(real, 0.0 * s, -s * 0.5)
    # eigenvector of lambda1 = first column of (A - lambda2 I), and vice versa
    v1 = [a - l2r, -l2i, c, 0.0 * s]
    v2 = [a - l1r, -l1i, c, 0.0 * s]
    # A == lambda I (a real double eigenvalue with a full eigenspace): the unit vectors
    scalar = ops.binary('land', ops.binary('land', ops.binary('eq', a - l1r, 0),
                                           ops.binary('eq', b, 0)),
                        ops.binary('land', ops.binary('eq', c, 0), ops.binary('eq', d - l1r, 0)))
    full = ops.binary('land', real, scalar)
    v1 = [_sel(full, u, x) for u, x in zip((0.0, 0.0, 1.0, 0.0), _unit(v1))]
    v2 = [_sel(full, u, x) for u, x in zip((1.0, 0.0, 0.0, 0.0), _unit(v2))]
    vals = Matrix([[l1r, l1i], [l2r, l2i]])
    vecs = Matrix([[v1[k], v2[k]] for k in range(4)])
    return vals, vecs


def _unit(v):
    n = _api.sqrt(sum(x * x for x in v[1:]) + v[0] * v[0])
    if isinstance(n, (int, float)) and n == 0:  # Python scope: NaN, as a kernel gives
        return [float('nan')] * len(v)
    return [x / n for x in v]


_FREXP = {32: (T.i32, 23, 0xff, 126), 64: (T.i64, 52, 0x7ff, 1022)}


def frexp(x):
    """`m, e = ti.frexp(x)`: x = m * 2**e with 0.5 <= |m| < 1 (numpy's frexp: (x, 0) for 0,
    inf and NaN), from the float's bits by integer operations only: a device may flush subnormal
    operands of float operations to zero (SwiftShader does; Vulkan allows it without
    DenormPreserve), so a subnormal's significand is converted to a float (exact, and normal) and
    its leading bit read from that float's exponent."""
    if current() is None or not hasattr(x, 'dtype') or isinstance(x, Matrix):
        if isinstance(x, Matrix):
            raise error('ti.frexp takes a scalar', TypeError)
        import numpy as np
        m, e = np.frexp(x)
        return (float(m), int(e)) if np.ndim(m) == 0 else (m, e)
    dt = x.dtype if x.dtype.is_float and x.dtype.bits >= 32 else T.f32
    x = ops.cast(x, dt)
    it, mbits, emax, bias = _FREXP[dt.bits]
    band, eq = (lambda a, b: ops.binary('band', a, b)), (lambda a, b: ops.binary('eq', a, b))
    ef = lambda b: band(ops.binary('shr', b, mbits), emax)  # noqa: E731
    frac_mask, sign_mask = (1 << mbits) - 1, -(1 << (dt.bits - 1))
    b = _api.bit_cast(x, it)
    eb, frac = ef(b), band(b, frac_mask)
    # a subnormal (exponent bits 0, fraction f != 0) is f * 2**(-bias - mbits); f as a float is
    # 1.g * 2**p (exponent bits p + bias + 1): x = 0.1g * 2**(p + 1 - bias - mbits)
    fb = _api.bit_cast(ops.cast(frac, dt), it)
    sub = ops.binary('land', eq(eb, 0), ops.binary('ne', frac, 0))
    e = _sel(sub, ef(fb) - 2 * bias - mbits, eb - bias)
    g = _sel(sub, band(fb, frac_mask), frac)
    m = _api.bit_cast(ops.binary('bor', ops.binary('bor', band(b, sign_mask), g), bias << mbits), dt)
    special = ops.binary('lor', ops.binary('land', eq(eb, 0), eq(frac, 0)), eq(eb, emax))
    return _sel(special, x, m), ops.cast(_sel(special, 0, e), T.i32)


def stop_grad(x):
    """`ti.stop_grad(x)` in a kernel: in the rest of the enclosing block (the loop body it is
    called in), reads of field x carry no gradient (nor tangent) back into x."""
    em = current()
    if em is None:
        raise error('ti.stop_grad(x) is called inside a kernel', TypeError)
    fields = list(x._leaves()) if hasattr(type(x), '_leaves') else [x]  # a struct: each member
    em.__dict__.setdefault('stop_grad', {}).setdefault(id(em.blocks[-1]), set()).update(
        f for f in fields)


def block_local(*fields):
    """`ti.block_local(x, ...)`: in Taichi, a hint to cache x in shared memory for the next
    struct-for. vkdiff reads fields directly, with the same results; the fields are checked."""
    if current() is None:
        raise error('ti.block_local(...) is called inside a kernel', TypeError)
    for f in fields:
        if not isinstance(f, Field):
            raise error(f'ti.block_local takes fields, got {type(f).__name__}')


def cache_read_only(*fields):
    """`ti.cache_read_only(x, ...)`: in Taichi, a hint that x is only read in this kernel (a
    read-only cache on CUDA). vkdiff reads fields directly, with the same results; the fields are
    checked."""
    if current() is None:
        raise error('ti.cache_read_only(...) is called inside a kernel', TypeError)
    for f in fields:
        if not isinstance(f, Field):
            raise error(f'ti.cache_read_only takes fields, got {type(f).__name__}')


class PyFunc(Func):
    """`@ti.pyfunc`: a ti.func that can also be called from Python scope (it then runs as plain
    Python on the arguments given)."""

    def __call__(self, *args, **kwargs):
        if current() is None:
            return self.fn(*args, **kwargs)
        return super().__call__(*args, **kwargs)


def pyfunc(fn):
    return PyFunc(fn)


def real_func(fn):
    """`@ti.real_func`: in Taichi a function compiled once and called (not inlined); vkdiff
    inlines it like ti.func, with the same results (recursion must stop on compile-time values).
    As Taichi, every parameter needs a type annotation (TaichiSyntaxError) and a function that
    returns a value a return annotation (TaichiCompilationError)."""
    import inspect
    parts = fn.__qualname__.split('.')
    method = len(parts) > 1 and parts[-2] != '<locals>'  # (self is not annotated)
    for k, p in enumerate(inspect.signature(fn).parameters.values()):
        if p.annotation is inspect.Parameter.empty and not (method and k == 0):
            raise TaichiSyntaxError(f'Taichi function `{fn.__name__}` parameter `{p.name}` must '
                                    f'be type annotated')
    if inspect.signature(fn).return_annotation is inspect.Signature.empty and _returns_value(fn):
        raise CompileError(f'Taichi function `{fn.__name__}`: its return value must be '
                           f'annotated (-> type)')
    return func(fn)


def _returns_value(fn):
    """Does `fn`'s source hold a `return <value>` of its own (not of a nested function)?"""
    import ast
    import inspect
    import textwrap
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    except (OSError, TypeError, SyntaxError):
        return False
    body = tree.body[0]
    stack = list(getattr(body, 'body', []))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Return) and node.value is not None:
            return True
        stack.extend(ast.iter_child_nodes(node))
    return False


def rgb_to_hex(c):
    """(r, g, b) in [0, 1] (scalars or arrays) -> 0xRRGGBB."""
    import numpy as np

    def to255(x):
        return np.clip(np.int32(np.asarray(x) * 255), 0, 255)
    return (to255(c[0]) << 16) + (to255(c[1]) << 8) + to255(c[2])


def hex_to_rgb(color):
    """0xRRGGBB -> (r, g, b) in [0, 1]."""
    r, g, b = (color >> 16) & 0xFF, (color >> 8) & 0xFF, color & 0xFF
    return r / 255, g / 255, b / 255


def global_thread_idx():
    """The invocation's global index in a parallel loop (Taichi's CUDA-only
    ti.global_thread_idx(); the loop runs one iteration per invocation, lang/simt/block.py)."""
    return _simt_block.global_thread_idx()


def assume_in_range(val, base, low, high):
    """`val`, unchanged: Taichi's hint that base + low <= val < base + high (its CPU/CUDA
    backends use it to size block-local scratchpads; vkdiff has none, and checks nothing)."""
    return val


# log levels (`ti.init(log_level=ti.WARN)`, `ti.set_logging_level(ti.INFO)`; lang/init_config.py)
TRACE, DEBUG, INFO, WARN, ERROR, CRITICAL = 'trace', 'debug', 'info', 'warn', 'error', 'critical'


def set_logging_level(level):
    """Sets the level of vkdiff's log messages (one of ti.TRACE ... ti.CRITICAL)."""
    _init_config.set_log_level(level)


def is_logging_effective(level):
    """Whether messages of `level` are shown at the current logging level."""
    return _init_config.log_effective(level)


__all__ = ['assume_in_range', 'global_thread_idx', 'block_local', 'cache_read_only', 'Layout', 'pyfunc', 'real_func', 'rgb_to_hex', 'hex_to_rgb', 'TRACE', 'DEBUG', 'INFO', 'WARN',
           'ERROR', 'CRITICAL', 'set_logging_level', 'is_logging_effective',
           'atomic_mul', 'bit_shr', 'frexp', 'zero', 'one', 'solve', 'eig', 'stop_grad', 'FieldsBuilder', 'SNodeTree']
