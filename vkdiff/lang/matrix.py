"""`Vector` and `Matrix`: small fixed-size matrices of scalars, in both scopes. In a kernel the
entries are run-time Values and every operation unrolls into scalar IR (so autodiff and codegen
only ever see scalars); in Python scope they are numbers."""
import numpy as np

from ..frontend import ops
from ..frontend.context import Arithmetic, error


class Matrix(Arithmetic):
    """An n x m matrix; a Vector is a matrix with `ndim == 1` (n entries)."""

    def __init__(self, arr, dt=None, ndim=None):
        if isinstance(arr, Matrix):
            arr = arr.to_list()
        if isinstance(arr, np.ndarray):
            arr = arr.tolist()
        arr = list(arr)
        if ndim is None:
            ndim = 2 if arr and isinstance(arr[0], (list, tuple, Matrix, np.ndarray)) else 1
        if ndim == 2:
            rows = [list(r.to_list() if isinstance(r, Matrix) else r) for r in arr]
            self.n, self.m = len(rows), len(rows[0]) if rows else 0
            if any(len(r) != self.m for r in rows):
                raise error('matrix rows have different lengths')
            self.entries = [e for r in rows for e in r]
        else:
            self.n, self.m = len(arr), 1
            self.entries = list(arr)
        self.ndim = ndim
        if dt is not None:
            self.entries = [ops.cast(e, dt) for e in self.entries]

    # ------------------------------------------------------------ construction helpers
    @classmethod
    def _new(cls, entries, n, m, ndim):
        obj = Matrix.__new__(Vector if ndim == 1 else Matrix)
        obj.entries, obj.n, obj.m, obj.ndim = list(entries), n, m, ndim
        return obj

    def _map(self, f):
        return Matrix._new([f(e) for e in self.entries], self.n, self.m, self.ndim)

    @staticmethod
    def zero(dt, n, m=None):
        return Matrix([[ops.cast(0, dt)] * m for _ in range(n)]) if m else Vector([ops.cast(0, dt)] * n)

    @staticmethod
    def one(dt, n, m=None):
        return Matrix([[ops.cast(1, dt)] * m for _ in range(n)]) if m else Vector([ops.cast(1, dt)] * n)

    @staticmethod
    def identity(dt, n):
        return Matrix([[ops.cast(int(i == j), dt) for j in range(n)] for i in range(n)])

    @staticmethod
    def diag(dim, val):
        """The dim x dim diagonal matrix with `val` on the diagonal."""
        return Matrix([[val if i == j else ops.binary('mul', val, 0) for j in range(dim)]
                       for i in range(dim)])

    @staticmethod
    def rows(rows):
        """The matrix whose rows are the given vectors (or lists)."""
        return Matrix([list(r.entries if isinstance(r, Matrix) else r) for r in rows])

    @staticmethod
    def cols(cols):
        """The matrix whose columns are the given vectors (or lists)."""
        return Matrix.rows(cols).transpose()

    @staticmethod
    def unit(n, i, dt=float):
        return Vector([ops.cast(int(k == i), dt) for k in range(n)])

    @classmethod
    def field(cls, n, m, dtype, shape=None, needs_grad=False, needs_dual=False, name=None, **kw):
        from .field import make_field
        return make_field(dtype, shape, (n, m), needs_grad, needs_dual, name, kw.get('offset'))

    # ------------------------------------------------------------ access
    def _flat(self, key):
        if isinstance(key, tuple):
            if len(key) == 1:
                key = key[0]
            else:
                i, j = (int(_static_index(k)) for k in key)
                return i * self.m + j
        i = int(_static_index(key))
        if self.ndim == 2 and self.m > 1:
            raise error('index a matrix with two indices, m[i, j]')
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise IndexError(f'index {i} out of range for a {self.n}-vector')
        return i

    def __getitem__(self, key):
        if _is_runtime(key):
            return self._dynamic_get(key)
        if self.ndim == 2 and self.m > 1 and not isinstance(key, tuple):
            i = int(_static_index(key))
            return Vector(self.entries[i * self.m:(i + 1) * self.m])
        return self.entries[self._flat(key)]

    def _dynamic_get(self, key):
        """Indexing with run-time integers: a chain of selects over the entries."""
        if self.ndim == 2 and self.m > 1 and not isinstance(key, tuple):
            return Vector([self._dynamic_get((key, j)) for j in range(self.m)])
        flat = dynamic_flat_index(key, self.n, self.m, self.ndim)
        acc = self.entries[-1]
        for k in range(len(self.entries) - 2, -1, -1):
            acc = ops.select(ops.binary('eq', flat, k), self.entries[k], acc)
        return acc

    def __setitem__(self, key, value):
        self.entries[self._flat(key)] = value

    def _swizzle(i):
        def get(self):
            return self.entries[i]

        def set_(self, v):
            self.entries[i] = v
        return property(get, set_)

    x, y, z, w = _swizzle(0), _swizzle(1), _swizzle(2), _swizzle(3)
    r, g, b, a = x, y, z, w
    del _swizzle

    def __len__(self):
        return self.n

    def __iter__(self):
        if self.ndim == 1:
            return iter(self.entries)
        return iter(Vector(self.entries[i * self.m:(i + 1) * self.m]) for i in range(self.n))

    def get_shape(self):
        return (self.n,) if self.ndim == 1 else (self.n, self.m)

    shape = property(get_shape)

    def to_list(self):
        if self.ndim == 1:
            return list(self.entries)
        return [self.entries[i * self.m:(i + 1) * self.m] for i in range(self.n)]

    def to_numpy(self):
        return np.array(self.to_list())

    def __array__(self, dtype=None, copy=None):
        return np.array(self.to_list(), dtype=dtype)

    def __repr__(self):
        return f'{type(self).__name__}({self.to_list()})'

    # ------------------------------------------------------------ arithmetic: from Arithmetic
    def __neg__(self):
        return self._map(lambda e: ops.unary('neg', e))

    def __pos__(self):
        return self

    def __abs__(self):
        return self._map(lambda e: ops.unary('abs', e))

    def __matmul__(self, other):
        if not isinstance(other, Matrix):
            raise error('@ needs two matrices/vectors')
        a_n, a_m = (1, self.n) if self.ndim == 1 and other.ndim == 2 else (self.n, self.m)
        if self.ndim == 1 and other.ndim == 1:
            return self.dot(other)
        b_n, b_m = other.n, other.m
        if a_m != b_n:
            raise error(f'matrix shapes {self.get_shape()} and {other.get_shape()} do not match for @')
        out = []
        for i in range(a_n):
            for j in range(b_m):
                acc = None
                for k in range(a_m):
                    t = ops.binary('mul', self.entries[i * a_m + k], other.entries[k * b_m + j])
                    acc = t if acc is None else ops.binary('add', acc, t)
                out.append(acc)
        ndim = 1 if (other.ndim == 1 or self.ndim == 1) else 2
        return Matrix._new(out, a_n if ndim == 2 or other.ndim == 1 else b_m,
                           b_m if ndim == 2 else 1, ndim)

    def dot(self, other):
        return _sum(ops.binary('mul', a, b) for a, b in zip(self.entries, _entries(other, self)))

    def cross(self, other):
        a, b = self.entries, _entries(other, self)
        if self.n == 2:
            return ops.binary('sub', ops.binary('mul', a[0], b[1]), ops.binary('mul', a[1], b[0]))
        if self.n != 3:
            raise error('cross product needs 2- or 3-vectors')
        return Vector([ops.binary('sub', ops.binary('mul', a[(i + 1) % 3], b[(i + 2) % 3]),
                                  ops.binary('mul', a[(i + 2) % 3], b[(i + 1) % 3]))
                       for i in range(3)])

    def norm_sqr(self):
        return _sum(ops.binary('mul', e, e) for e in self.entries)

    def norm(self, eps=0):
        s = self.norm_sqr()
        if not (isinstance(eps, (int, float)) and eps == 0):
            s = ops.binary('add', s, eps)
        return ops.unary('sqrt', s)

    def norm_inv(self, eps=0):
        return ops.unary('rsqrt', ops.binary('add', self.norm_sqr(), eps))

    def normalized(self, eps=0):
        return self * self.norm_inv(eps)

    def sum(self):
        return _sum(self.entries)

    # comparisons are entrywise (as in Taichi): `(v == [1, 2]).all()`, `any(A != B)`
    def __eq__(self, other):
        return ops.binary('eq', self, _as_matrix(other))

    def __ne__(self, other):
        return ops.binary('ne', self, _as_matrix(other))

    __hash__ = object.__hash__

    def all(self):
        """1 if every entry is non-zero (a run-time u1 in kernels)."""
        return _reduce(lambda a, b: ops.binary('land', a, b), [_truth(e) for e in self.entries])

    def any(self):
        """1 if some entry is non-zero (a run-time u1 in kernels)."""
        return _reduce(lambda a, b: ops.binary('lor', a, b), [_truth(e) for e in self.entries])

    def max(self):
        return _reduce(lambda a, b: ops.binary('max', a, b), self.entries)

    def min(self):
        return _reduce(lambda a, b: ops.binary('min', a, b), self.entries)

    def trace(self):
        return _sum(self.entries[i * self.m + i] for i in range(min(self.n, self.m)))

    def transpose(self):
        if self.ndim == 1:
            return Matrix([self.entries])
        return Matrix([[self.entries[i * self.m + j] for i in range(self.n)] for j in range(self.m)])

    T = property(transpose)

    def outer_product(self, other):
        return Matrix([[ops.binary('mul', a, b) for b in _entries(other, None)] for a in self.entries])

    def determinant(self):
        e = self.entries
        if self.n == 1:
            return e[0]
        if self.n == 2:
            return ops.binary('sub', ops.binary('mul', e[0], e[3]), ops.binary('mul', e[1], e[2]))
        if self.n == 3:
            return _sum(ops.binary('mul', e[j], self._minor(0, j)) if j != 1 else
                        ops.unary('neg', ops.binary('mul', e[j], self._minor(0, j))) for j in range(3))
        raise error('determinant supports up to 3x3')

    def _minor(self, i, j):
        rows = [r for r in range(self.n) if r != i]
        cols = [c for c in range(self.m) if c != j]
        return Matrix([[self.entries[r * self.m + c] for c in cols] for r in rows]).determinant()

    def inverse(self):
        det = self.determinant()
        if self.n == 2:
            e = self.entries
            return Matrix([[e[3], ops.unary('neg', e[1])], [ops.unary('neg', e[2]), e[0]]]) / det
        if self.n == 3:
            cof = [[ops.binary('mul', (-1) ** (i + j), self._minor(i, j)) for j in range(3)]
                   for i in range(3)]
            return Matrix(cof).transpose() / det
        raise error('inverse supports up to 3x3')

    def cast(self, dt):
        return ops.cast(self, dt)

    def fill(self, v):
        self.entries = [v] * len(self.entries)


class Vector(Matrix):
    """`ti.Vector([...])`; `ti.Vector.field(n, dtype, shape)`."""

    def __init__(self, arr, dt=None):
        super().__init__(arr, dt, ndim=1)

    @classmethod
    def field(cls, n, dtype, shape=None, needs_grad=False, needs_dual=False, name=None, **kw):
        from .field import make_field
        return make_field(dtype, shape, (n,), needs_grad, needs_dual, name, kw.get('offset'))

    @staticmethod
    def zero(dt, n):
        return Vector([ops.cast(0, dt)] * n)

    @staticmethod
    def one(dt, n):
        return Vector([ops.cast(1, dt)] * n)


def _as_matrix(x):
    return Matrix(x) if isinstance(x, (list, tuple, np.ndarray)) else x


def _truth(e):
    return ops.binary('ne', e, 0) if hasattr(e, 'stmt') else bool(e)


def _is_runtime(key):
    from ..frontend.context import Value
    keys = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, Value) for k in keys)


def dynamic_flat_index(key, n, m, ndim):
    """The flat entry index of a (possibly run-time) vector or matrix index."""
    keys = key if isinstance(key, tuple) else (key,)
    if ndim == 2 and m > 1:
        if len(keys) != 2:
            raise error('index a matrix with two indices, m[i, j]')
        return ops.binary('add', ops.binary('mul', keys[0], m), keys[1])
    if len(keys) != 1:
        raise error('a vector takes one index')
    return keys[0]


def _static_index(k):
    if isinstance(k, (int, np.integer)):
        return k
    raise error('a local vector or matrix can only be indexed with compile-time integers '
                '(use ti.static(range(n)) to loop over components)')


def _entries(other, like):
    if isinstance(other, Matrix):
        return other.entries
    if isinstance(other, (list, tuple, np.ndarray)):
        return list(np.asarray(other).ravel()) if isinstance(other, np.ndarray) else list(other)
    return [other] * (len(like.entries) if like is not None else 1)


def _reduce(f, items):
    acc = None
    for x in items:
        acc = x if acc is None else f(acc, x)
    return acc


def _sum(items):
    return _reduce(lambda a, b: ops.binary('add', a, b), items)


def elementwise(f, a, b):
    """Apply a scalar binary function entry by entry; a scalar broadcasts."""
    like = a if isinstance(a, Matrix) else b
    if isinstance(a, Matrix) and isinstance(b, Matrix) and (a.n, a.m) != (b.n, b.m):
        raise error(f'shape mismatch: {a.get_shape()} and {b.get_shape()}')
    ea = a.entries if isinstance(a, Matrix) else [a] * len(like.entries)
    eb = b.entries if isinstance(b, Matrix) else [b] * len(like.entries)
    return Matrix._new([f(x, y) for x, y in zip(ea, eb)], like.n, like.m, like.ndim)
