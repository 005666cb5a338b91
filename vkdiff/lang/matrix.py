"""Values floor: `Vector` and `Matrix`: small fixed-size matrices of scalars, in both scopes. In a kernel the
entries are run-time Values and every operation unrolls into scalar IR (so autodiff and codegen
only ever see scalars); in Python scope they are numbers. `VectorType` / `MatrixType`
(`ti.types.vector(3, ti.f32)`, `ti.math.vec3`) are their types. Values floor: `.field()` and
`.ndarray()` reach the data floor through lang/hooks.py (field.py and ndarray.py register them)."""
import itertools

import numpy as np

from .. import types as _T
from ..frontend import ops
from ..errors import (TaichiIndexError, TaichiRuntimeError, TaichiSyntaxError, TaichiTypeError,
                      VkdiffIndexError)
from ..frontend.checks import check_components  # (ti.init(debug=True) checks)
from ..frontend.context import Arithmetic, current, error, Value
from . import hooks


class Matrix(Arithmetic):
    """An n x m matrix; a Vector is a matrix with `ndim == 1` (n entries)."""

    __array_priority__ = 1000  # numpy scalars defer to our operators: np.cos(0) + v is a Vector

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
    def unit(n, i, dt=None):
        """The i-th unit vector of length n; integer unless dt says otherwise (Taichi's default:
        `x[I + ti.Vector.unit(3, 0)]` indexes a field)."""
        return Vector([ops.cast(int(k == i), int if dt is None else dt) for k in range(n)])

    @classmethod
    def field(cls, n, m, dtype, shape=None, needs_grad=False, needs_dual=False, name=None, **kw):
        return hooks.call('make_field', dtype, shape, (n, m), needs_grad, needs_dual, name, kw.get('offset'),
                          kw.get('order'))

    @classmethod
    def ndarray(cls, n, m, dtype, shape, needs_grad=False, **kw):
        """`ti.Matrix.ndarray(n, m, dtype, shape)`."""
        return hooks.call('matrix_ndarray', n, m, dtype, shape, needs_grad, **kw)

    # ------------------------------------------------------------ access
    def _flat(self, key):
        if isinstance(key, tuple):
            if len(key) == 1:
                key = key[0]
            else:
                if len(key) != 2 or self.ndim != 2:
                    raise error(f'Expected {self.ndim} indices, got {len(key)} (indexing a '
                                f'{"vector" if self.ndim == 1 else "matrix"})', TaichiIndexError)
                i, j = (int(_static_index(k)) for k in key)
                i, j = i + self.n if i < 0 else i, j + self.m if j < 0 else j
                if not (0 <= i < self.n and 0 <= j < self.m):
                    raise _index_error(f'index {key} out of range for a {self.n}x{self.m} matrix')
                return i * self.m + j
        i = int(_static_index(key))
        if self.ndim == 2 and self.m > 1:
            raise error('index a matrix with two indices, m[i, j]')
        if i < 0:
            i += self.n
        if not 0 <= i < self.n:
            raise _index_error(f'index {i} out of range for a {self.n}-vector')
        return i

    def _check_index_count(self, key):
        """Taichi's rule in a kernel: a matrix takes two indices, a vector one (a located
        TaichiIndexError, a TaichiCompilationError). Python scope also takes m[i] as row i."""
        count = len(key) if isinstance(key, tuple) else 1
        if current() is not None:
            check_nonnegative(key)
        if count != self.ndim and current() is not None:
            raise error(f'Expected {self.ndim} indices, got {count} (indexing a '
                        f'{"vector" if self.ndim == 1 else "matrix"})', TaichiIndexError)

    def __getitem__(self, key):
        key = flatten_key(key)
        self._check_index_count(key)
        sliced = slice_positions(key, self.n, self.m, self.ndim)
        if sliced is not None:  # v[1:3], m[:, j], m[i, 1:], m[:2, :]
            shape, positions = sliced
            vals = [self[p] if not _is_runtime(p) else self._dynamic_get(p) for p in positions]
            return Vector(vals) if len(shape) == 1 else \
                Matrix([vals[r * shape[1]:(r + 1) * shape[1]] for r in range(shape[0])])
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
        if getattr(self, '_clamp', False):  # an element of an ndarray with boundary='clamp'
            flat = clamp_flat(flat, len(self.entries))
        else:
            check_components(*component_sizes(key, self))
        acc = self.entries[-1]
        for k in range(len(self.entries) - 2, -1, -1):
            acc = ops.select(ops.binary('eq', flat, k), self.entries[k], acc)
        return acc

    def __setitem__(self, key, value):
        key = flatten_key(key)
        self._check_index_count(key)
        self.entries[self._flat(key)] = value


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
        """As Taichi prints a Python-scope matrix: numpy's text (`[1. 2. 3.]`); one holding
        kernel values shows them."""
        entries = self.entries
        if any(not ops.is_number(e) for e in entries):
            return f'{"Vector" if self.ndim == 1 else "Matrix"}({self.to_list()})'
        return str(np.array(self.to_list()))

    # ------------------------------------------------------------ arithmetic: from Arithmetic
    def __neg__(self):
        return self._map(lambda e: ops.unary('neg', e))

    def __pos__(self):
        return self

    def __abs__(self):
        return self._map(lambda e: ops.unary('abs', e))

    def __invert__(self):
        return self._map(lambda e: ops.unary('bnot', e))

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
        """Taichi's `v * (1 / (|v| + eps))` (matrix_ops.normalized), not a rsqrt."""
        invlen = ops.binary('div', 1, ops.binary('add', self.norm(), eps))
        return invlen * self

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

    def _square(self, what, limit=5):
        if self.ndim != 2 or self.n != self.m:
            raise error(f'{what}: expected a square matrix, got shape {self.get_shape()}',
                        TaichiTypeError)
        if self.n >= limit:
            raise error(f'{what}: only dimension < {limit} is supported, got shape '
                        f'{self.get_shape()}', TaichiTypeError)

    def trace(self):
        self._square('trace', limit=1 << 30)
        return _sum(self.entries[i * self.m + i] for i in range(self.n))

    def transpose(self):
        if self.ndim == 1:
            raise error('`transpose()` cannot apply to a vector. If you want something like '
                        '`a @ b.transpose()`, write `a.outer_product(b)` instead.', TaichiTypeError)
        return Matrix([[self.entries[i * self.m + j] for i in range(self.n)] for j in range(self.m)])

    T = property(transpose)

    def outer_product(self, other):
        return Matrix([[ops.binary('mul', a, b) for b in _entries(other, None)] for a in self.entries])

    def _e(self, i, j):
        """Entry (i mod n, j mod n): Taichi's `E` in matrix_ops."""
        return self.entries[(i % self.n) * self.m + j % self.n]

    def determinant(self):
        """Taichi's formulas (matrix_ops.determinant), sizes 1 to 4."""
        self._square('determinant')
        E = self._e
        if self.n == 1:
            return E(0, 0)
        if self.n == 2:
            return E(0, 0) * E(1, 1) - E(0, 1) * E(1, 0)
        if self.n == 3:
            return (E(0, 0) * (E(1, 1) * E(2, 2) - E(2, 1) * E(1, 2))
                    - E(1, 0) * (E(0, 1) * E(2, 2) - E(2, 1) * E(0, 2))
                    + E(2, 0) * (E(0, 1) * E(1, 2) - E(1, 1) * E(0, 2)))
        det = E(0, 0) * 0
        for i in range(4):
            det = det + (-1) ** i * (E(i, 0) * self._cof4(i, 0))
        return det

    def _cof4(self, i, j):
        E = self._e
        return (E(i + 1, j + 1) * (E(i + 2, j + 2) * E(i + 3, j + 3) - E(i + 3, j + 2) * E(i + 2, j + 3))
                - E(i + 2, j + 1) * (E(i + 1, j + 2) * E(i + 3, j + 3) - E(i + 3, j + 2) * E(i + 1, j + 3))
                + E(i + 3, j + 1) * (E(i + 1, j + 2) * E(i + 2, j + 3) - E(i + 2, j + 2) * E(i + 1, j + 3)))

    def inverse(self):
        """Taichi's formulas (matrix_ops.inverse): `(1 / det) * adjugate`, sizes 1 to 4."""
        self._square('inverse')
        E = self._e
        if self.n == 1:
            return Matrix([[ops.binary('div', 1.0, E(0, 0))]])
        inv_det = ops.binary('div', 1.0, self.determinant())
        if self.n == 2:
            return inv_det * Matrix([[E(1, 1), -E(0, 1)], [-E(1, 0), E(0, 0)]])
        if self.n == 3:
            return inv_det * Matrix([[E(i + 1, j + 1) * E(i + 2, j + 2) - E(i + 2, j + 1) * E(i + 1, j + 2)
                                      for i in range(3)] for j in range(3)])
        return inv_det * Matrix([[(-1) ** (i + j) * self._cof4(i, j) for i in range(4)]
                                 for j in range(4)])

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
        return hooks.call('make_field', dtype, shape, (n,), needs_grad, needs_dual, name, kw.get('offset'),
                          kw.get('order'))

    @classmethod
    def ndarray(cls, n, dtype, shape, needs_grad=False, **kw):
        """`ti.Vector.ndarray(n, dtype, shape)`."""
        return hooks.call('vector_ndarray', n, dtype, shape, needs_grad, **kw)

    @staticmethod
    def zero(dt, n):
        return Vector([ops.cast(0, dt)] * n)

    @staticmethod
    def one(dt, n):
        return Vector([ops.cast(1, dt)] * n)


# ---------------------------------------------------------------- swizzles (GLSL, as Taichi)
SWIZZLE_GROUPS = ('xyzw', 'rgba', 'stpq')


def swizzle_indices(pattern, n):
    """The entry indices of a swizzle like `xy`, `bgr`, `stp` (1 to 4 letters of one group), or
    None when `pattern` is no swizzle. A letter past the vector's length is a TaichiSyntaxError."""
    if not 1 <= len(pattern) <= 4:
        return None
    for group in SWIZZLE_GROUPS:
        if set(pattern) <= set(group):
            bad = set(pattern) - set(group[:n])
            if bad:
                raise error(f'vec{n} only has attributes={tuple(sorted(group[:n]))}, '
                            f'got={tuple(pattern)}', TaichiSyntaxError)
            return [group.index(c) for c in pattern]
    return None


def _swizzle_property(pattern):
    def get(self):
        idx = swizzle_indices(pattern, self.n)
        return self[idx[0]] if len(idx) == 1 else Vector([self[i] for i in idx])

    def set_(self, value):
        if len(pattern) > 1 and len(pattern) != len(value):
            raise TaichiRuntimeError(f'value len does not match the swizzle pattern={pattern}')
        idx = swizzle_indices(pattern, self.n)
        if len(idx) == 1:
            self[idx[0]] = value  # through __setitem__: a field element's entries write through
        else:
            for i, v in zip(idx, value):
                self[i] = v
    return property(get, set_)


for _group in SWIZZLE_GROUPS:
    for _k in range(1, 5):
        for _pat in itertools.product(_group, repeat=_k):
            setattr(Matrix, ''.join(_pat), _swizzle_property(''.join(_pat)))
del _group, _k, _pat


def _as_matrix(x):
    return Matrix(x) if isinstance(x, (list, tuple, np.ndarray)) else x


def host_broadcast(fn, a, b):
    """Python scope, two matrices of different shapes: Taichi applies the operator to their
    numpy arrays (numpy's broadcasting rules and errors) and makes a Matrix of the result
    (ops._binary_operation)."""
    return Matrix(fn(a.to_numpy(), b.to_numpy()))


def _truth(e):
    return ops.binary('ne', e, 0) if hasattr(e, 'stmt') else bool(e)


def flatten_key(key):
    """An index vector counts as its entries: `m[I]` with I = ti.Vector([i, j]) is m[i, j]."""
    keys = key if isinstance(key, tuple) else (key,)
    if not any(isinstance(k, Matrix) for k in keys):
        return key
    flat = tuple(e for k in keys for e in (k.entries if isinstance(k, Matrix) else (k,)))
    return flat[0] if len(flat) == 1 else flat


def check_nonnegative(key):
    """Taichi's rule in kernels: no negative (compile-time) index into a vector or matrix, slice
    bounds included (Python scope allows them)."""
    for k in key if isinstance(key, tuple) else (key,):
        bounds = (k.start, k.stop) if isinstance(k, slice) else (k,)
        if any(isinstance(b, (int, np.integer)) and b < 0 for b in bounds):
            raise error('Negative indices are not supported in Taichi kernels.', TaichiSyntaxError)


def slice_positions(key, n, m, ndim):
    """For an index with slices (`v[::2]`, `m[:, j]`, `m[1:, :2]`): the shape of the result,
    (k,) or (k1, k2), and the index of each entry it takes, in order (a run-time index stays a
    Value); None for an index without slices. Slice bounds must be compile-time (Taichi)."""
    keys = key if isinstance(key, tuple) else (key,)
    if not any(isinstance(k, slice) for k in keys):
        return None
    axes = []
    for k, size in zip(keys, (n, m) if ndim == 2 else (n,)):
        if isinstance(k, slice):
            if any(isinstance(b, Value) for b in (k.start, k.stop, k.step)):
                raise error('Taichi does not support variables in slice now', TaichiTypeError)
            axes.append(list(range(*k.indices(size))))
        else:
            axes.append(k)
    if ndim == 1:
        return (len(axes[0]),), [i for i in axes[0]]
    rows, cols = axes
    if isinstance(rows, list) and isinstance(cols, list):
        return (len(rows), len(cols)), [(r, c) for r in rows for c in cols]
    if isinstance(rows, list):
        return (len(rows),), [(r, cols) for r in rows]
    return (len(cols),), [(rows, c) for c in cols]


def _is_runtime(key):
    keys = key if isinstance(key, tuple) else (key,)
    return any(isinstance(k, Value) for k in keys)


def clamp_flat(flat, count):
    """A run-time flat entry index clamped into [0, count) (Taichi's boundary='clamp' ndarrays
    clamp the flat component index of their vector/matrix elements too)."""
    return ops.binary('max', ops.binary('min', flat, count - 1), 0)


def component_sizes(key, mat):
    """(indices, the sizes they index) of a vector/matrix index (for debug checks)."""
    keys = key if isinstance(key, tuple) else (key,)
    if mat.ndim == 2 and mat.m > 1:
        return keys, (mat.n, mat.m)
    return keys[:1], (len(mat.entries),)


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


def _index_error(message):
    """In a kernel a located TaichiIndexError (a CompileError); in Python scope an IndexError."""
    return error(message, TaichiIndexError) if current() is not None else VkdiffIndexError(message)


def _static_index(k):
    if isinstance(k, (int, np.integer)):
        return k
    raise error('a local vector or matrix can only be indexed with compile-time integers '
                '(use ti.static(range(n)) to loop over components)', TaichiTypeError)


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


def elementwise(f, *args):
    """Apply a scalar function entry by entry (`ti.select(cond_vec, a, b)` too); a scalar
    broadcasts."""
    mats = [x for x in args if isinstance(x, Matrix)]
    like = mats[0]
    for x in mats[1:]:
        if (x.n, x.m) != (like.n, like.m):
            raise error(f'Cannot broadcast tensor to tensor (shape mismatch: '
                        f'{like.get_shape()} and {x.get_shape()})')
    n = len(like.entries)
    cols = [x.entries if isinstance(x, Matrix) else [x] * n for x in args]
    return Matrix._new([f(*xs) for xs in zip(*cols)], like.n, like.m, like.ndim)


# ---- the types of vectors and matrices (ti.types.vector / matrix, ti.math.vec3) ----------
class _CompoundType(_T.TensorType):
    """What vector and matrix types share: construction from entries, and `.field(...)`."""
    elem_shape = ()

    def _entries(self, args, nested):
        """The flat entries of `T(args...)`: numbers, vectors/matrices, (nested) lists, numpy
        arrays; a single scalar fills every entry."""
        count = 1
        for d in self.elem_shape:
            count *= d
        flat = []
        for a in args:
            if hasattr(a, 'ravel') and hasattr(a, 'tolist'):  # numpy arrays
                a = a.ravel().tolist()
            if isinstance(a, Matrix):
                flat.extend(a.entries)
            elif isinstance(a, (list, tuple)):
                flat.extend([x for r in a for x in (r if isinstance(r, (list, tuple)) else [r])]
                            if nested else a)
            else:
                flat.append(a)
        if len(flat) == 1:
            flat = flat * count
        if len(flat) != count:
            raise TypeError(f'{self!r} takes {count} entries, got {len(flat)}')
        return flat

    def element_type(self):
        """Taichi's `TensorType.element_type()`: the dtype of the entries."""
        return _T.resolve(self.dtype)

    def shape(self):
        """Taichi's `TensorType.shape()`: [n] for a vector, [n, m] for a matrix."""
        return list(self.elem_shape)

    def field(self, shape=None, needs_grad=False, needs_dual=False, name=None, **kw):
        return hooks.call('make_field', self.dtype, shape, self.elem_shape, needs_grad,
                          needs_dual, name, kw.get('offset'), kw.get('order'))


class VectorType(_CompoundType):
    """`ti.math.vec3`, `ti.types.vector(3, ti.f32)`: a vector type of n entries."""

    def __init__(self, n, dtype):
        self.n, self.dtype = n, dtype
        self.elem_shape = (n,)

    def __call__(self, *args):
        return Vector(self._entries(args, nested=False), dt=_T.resolve(self.dtype))

    def __repr__(self):
        return f'vector({self.n}, {_T.resolve(self.dtype).name if self.dtype is not None else None})'


class MatrixType(_CompoundType):
    """`ti.math.mat3`: an n x m matrix type."""

    def __init__(self, n, m, dtype):
        self.n, self.m, self.dtype = n, m, dtype
        self.elem_shape = (n, m)

    def __call__(self, *args):
        flat = self._entries(args, nested=True)
        return Matrix([flat[i * self.m:(i + 1) * self.m] for i in range(self.n)],
                       dt=_T.resolve(self.dtype))

    def __repr__(self):
        return f'matrix({self.n}, {self.m}, {_T.resolve(self.dtype).name if self.dtype is not None else None})'
