"""API stage: global fields (`ti.field`, `Vector.field`, `Matrix.field`, `ti.root`), their
gradients, and host access. A field's data lives on the device; the host sees it through a lazily
synchronised mirror (see runtime.program.Storage)."""
import numpy as np

from .. import types as T
from ..errors import VkdiffError
from . import state


class Field:
    """A dense field of scalars, vectors (`elem_shape=(n,)`) or matrices (`(n, m)`)."""

    def __init__(self, dtype, shape, elem_shape=(), name=None):
        self.dtype = T.resolve(dtype)
        self._shape = None if shape is None else _norm_shape(shape)
        self.elem_shape = tuple(elem_shape)
        self.name = name or f'field{len(state.fields)}'
        if self._shape is not None:
            self._check_size()
        self._grad = None
        self._dual = None
        self.offset = None  # per-axis index of the first element (`offset=`), None for zeros
        self.is_grad_of = None
        self._storage = None
        self._generation = state.generation
        state.fields.append(self)

    # ---------------------------------------------------------------- gradients
    @property
    def grad(self):
        """The adjoint field (None if there is none). As in Taichi, a float field declared without
        a shape and without needs_grad gets one when `x.grad` is named before it is placed, so
        `ti.root.dense(ti.i, n).place(x, x.grad)` places both."""
        return self._grad if self._grad is not None else self._unplaced('grad')

    @grad.setter
    def grad(self, g):
        self._grad = g

    @property
    def dual(self):
        """The tangent field of forward mode (see `grad`)."""
        return self._dual if self._dual is not None else self._unplaced('dual')

    @dual.setter
    def dual(self, g):
        self._dual = g

    def _unplaced(self, kind):
        if self._shape is None and self.is_grad_of is None and self.dtype.is_float:
            return self._add_grad(kind)
        return None

    # ---------------------------------------------------------------- layout
    @property
    def shape(self):
        if self._shape is None:
            raise VkdiffError(f'field {self.name} has no shape yet: place it with '
                              'ti.root.dense(ti.i, n).place(x) or ti.root.place(x)')
        return self._shape

    @property
    def n(self):
        return self.elem_shape[0] if self.elem_shape else 1

    @property
    def m(self):
        return self.elem_shape[1] if len(self.elem_shape) > 1 else 1

    @property
    def ncomp(self):
        return int(np.prod(self.elem_shape, dtype=np.int64)) if self.elem_shape else 1

    def _check_size(self):
        """A field larger than one device buffer may be is an error at creation."""
        n = int(np.prod(self._shape + self.elem_shape, dtype=np.int64)) * self.dtype.nbytes
        limit = state.runtime().limits['max_storage_buffer_range']
        if n > limit:
            raise VkdiffError(f'field {self.name} needs {n} bytes, more than this device\'s '
                              f'maxStorageBufferRange ({limit} bytes); split it into several fields')

    def _place(self, shape):
        if self._shape is not None:
            if self.is_grad_of is not None and self._shape == _norm_shape(shape):
                return  # `place(x, x.grad)`: placing x placed its gradient already
            raise VkdiffError(f'field {self.name} is already placed')
        self._shape = _norm_shape(shape)
        self._check_size()
        for g in (self._grad, self._dual):
            if g is not None and g._shape is None:
                g._place(shape)

    def _add_grad(self, kind='grad'):
        g = Field(self.dtype, self._shape, self.elem_shape, name=f'{self.name}.{kind}')
        g.is_grad_of = self
        g.offset = self.offset
        setattr(self, kind, g)
        return g

    @property
    def storage(self):
        st = self._storage
        if st is None:
            if self._generation != state.generation:
                raise VkdiffError(f'field {self.name} belongs to a previous ti.init() and is gone')
            rt = state.runtime()
            st = self._storage = rt_storage(rt, self.shape + self.elem_shape, self.dtype, self.name)
        return st

    # ---------------------------------------------------------------- host access
    def _index(self, key):
        shape = self.shape
        if key is None or key == ():
            key = ()
        elif not isinstance(key, tuple):
            key = (key,)
        if len(key) != len(shape):
            raise IndexError(f'field {self.name} has {len(shape)} indices (shape {shape}), got {len(key)}'
                             + (' (use x[None] for a 0-D field)' if not shape else ''))
        if self.offset is not None:
            key = self._unoffset(key)
        out = []
        for k, n in zip(key, shape):
            if not isinstance(k, (int, np.integer)):
                raise IndexError(f'field index must be an integer, got {k!r}')
            if not -n <= k < n:
                raise IndexError(f'index {k} out of range for axis of size {n} in field {self.name}')
            out.append(int(k) % n)
        return tuple(out)

    def _unoffset(self, key):
        """Indices of a field with `offset=`, counted from 0 (each within [o, o + n))."""
        out = []
        for k, n, o in zip(key, self.shape, self.offset):
            if isinstance(k, (int, np.integer)):
                if not o <= k < o + n:
                    raise IndexError(f'index {k} out of range [{o}, {o + n}) of an axis of field '
                                     f'{self.name}')
                k -= o
            out.append(k)
        return tuple(out)

    @state.synchronized
    def __getitem__(self, key):
        idx = self._index(key)
        h = self.storage.for_host_read()
        if not self.elem_shape:
            return h[idx].item()
        from .matrix import Matrix, Vector
        v = h[idx].tolist()
        return Vector(v) if len(self.elem_shape) == 1 else Matrix(v)

    @state.synchronized
    def __setitem__(self, key, value):
        idx = self._index(key)
        if self.elem_shape:
            value = np.asarray(value.to_list() if hasattr(value, 'to_list') else value)
            if value.shape != self.elem_shape and value.size != self.ncomp and value.size != 1:
                raise ValueError(f'{self.name}[...] expects elements of shape {self.elem_shape}')
            self.storage.for_host_write()[idx] = value.reshape(self.elem_shape) if value.size > 1 else value
        else:
            self.storage.for_host_write()[idx] = value

    @state.synchronized
    def to_numpy(self, dtype=None, keep_dims=False):
        """The field as a numpy array. As in Taichi, an n x 1 matrix field gives (..., n) unless
        `keep_dims=True`, and a vector field gives (..., n, 1) with `keep_dims=True`."""
        a = self.storage.for_host_read().copy()
        es = self.elem_shape
        if len(es) == 1 and keep_dims:
            a = a.reshape(self.shape + (es[0], 1))
        elif len(es) == 2 and es[1] == 1 and not keep_dims:
            a = a.reshape(self.shape + (es[0],))
        return a.astype(dtype) if dtype is not None else a

    @state.synchronized
    def from_numpy(self, arr):
        arr = np.asarray(arr)
        want = self.shape + self.elem_shape
        nd = len(self.shape)
        if len(self.elem_shape) in (1, 2) and arr.shape[:nd] == self.shape and \
                arr.shape[nd:] in ((self.ncomp,), (self.ncomp, 1), (1, self.ncomp)) and \
                1 in self.elem_shape + (1,) * (2 - len(self.elem_shape)):
            arr = arr.reshape(want)  # a vector as (n,), (n, 1) or (1, n), as Taichi accepts
        if arr.shape != want:
            raise ValueError(f'from_numpy: field {self.name} has shape {want}, got {arr.shape}')
        if arr.dtype.kind == 'f' and not self.dtype.is_float:
            raise ValueError(f'from_numpy: cannot store {arr.dtype} into the {self.dtype} field '
                             f'{self.name} without losing data; cast it first')
        self.storage.for_host_overwrite()[...] = arr

    @state.synchronized
    def fill(self, value):
        """Set every element (every component of a vector/matrix field) to `value`."""
        if hasattr(value, 'to_list'):
            value = value.to_list()
        value = np.asarray(value)
        if value.size != 1 and value.shape != self.elem_shape:
            raise ValueError(f'fill: field {self.name} has elements of shape {self.elem_shape}, '
                             f'got {value.shape}')
        if value.size == 1 and (self.dtype.is_float or value.dtype.kind in 'iub'):
            # on the device: no host round trip, so a Tape inside a time loop never syncs
            from .builtin_kernels import fill
            fill(self, value.item())
            return
        self.storage.for_host_overwrite()[...] = value

    @state.synchronized
    def copy_from(self, other):
        self.from_numpy(other.to_numpy())

    def __repr__(self):
        return f'<vkdiff field {self.name}: {self.dtype} shape={self._shape} elem={self.elem_shape}>'

    def _set_offset(self, offset):
        """`offset=(o0, o1, ...)`: axis a is indexed o_a .. o_a + shape[a] - 1 (host and kernels)."""
        if isinstance(offset, (int, np.integer)):
            offset = (int(offset),)
        offset = tuple(int(o) for o in offset)
        if len(offset) != len(self.shape):
            raise VkdiffError(f'The dimensionality of shape and offset must be the same: field '
                              f'{self.name} has shape {self.shape}, offset {offset}')
        self.offset = offset if any(offset) else None
        for g in (self._grad, self._dual):
            if g is not None:
                g.offset = self.offset

    def parent(self, n=1):
        from .. import root
        return root

    def snode(self):
        return self


def rt_storage(rt, shape, dtype, name=None):
    if dtype is T.f64 and not rt.features.get('float64'):
        raise VkdiffError('this Vulkan device has no 64-bit float support (shaderFloat64)')
    if dtype in (T.i64, T.u64) and not rt.features.get('int64'):
        raise VkdiffError('this Vulkan device has no 64-bit integer support (shaderInt64)')
    from ..runtime.program import Storage
    return Storage(rt, shape, dtype.np, name)


def _norm_shape(shape):
    if shape is None or shape == ():
        return ()
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    shape = tuple(int(s) for s in shape)
    if len(shape) > 4:
        raise VkdiffError('fields have at most 4 dimensions')
    if any(s <= 0 for s in shape):
        raise VkdiffError(f'field shape must be positive, got {shape}')
    return shape


def _caller_assignment_name():
    """`x` in the user's line `x = ti.field(...)` (for readable IR, errors and tape graphs)."""
    import linecache
    import os
    import re
    import sys
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(here):
        frame = frame.f_back
    if frame is None:
        return None
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
    m = re.match(r'\s*([A-Za-z_][\w.]*)\s*(?::[^=]*)?=[^=]', line)
    return m.group(1) if m else None


def make_field(dtype, shape, elem_shape, needs_grad=False, needs_dual=False, name=None,
               offset=None):
    if offset is not None and shape is None:
        raise VkdiffError('shape cannot be None when offset is set')
    f = Field(dtype, shape, elem_shape, name or _caller_assignment_name())
    if offset is not None:
        f._set_offset(offset)
    if needs_grad:
        if not f.dtype.is_float:
            raise VkdiffError('needs_grad=True requires a float field')
        f._add_grad('grad')
    if needs_dual:
        f._add_grad('dual')
    return f


def field(dtype, shape=None, needs_grad=False, needs_dual=False, name=None, offset=None, **kw):
    """`ti.field(dtype, shape=(), needs_grad=False)`."""
    if hasattr(dtype, 'field'):  # ti.field(ti.math.vec3, n), ti.field(ti.types.matrix(2, 2, float), n)
        return dtype.field(shape=shape, needs_grad=needs_grad, needs_dual=needs_dual, name=name,
                           offset=offset)
    return make_field(dtype, shape, (), needs_grad, needs_dual, name, offset)


# ---------------------------------------------------------------- ti.root
class _Axis:
    def __init__(self, k):
        self.k = k


i, j, k, l = _Axis(0), _Axis(1), _Axis(2), _Axis(3)
ij, ijk, ijkl = (i, j), (i, j, k), (i, j, k, l)


class SNode:
    """`ti.root.dense(ti.ij, (n, m)).place(x, y)`: dense layouts only."""

    def __init__(self, shape=()):
        self.shape = shape

    def dense(self, axes, dimensions):
        if isinstance(dimensions, (int, np.integer)):
            n = len(axes) if isinstance(axes, tuple) else 1
            dimensions = (int(dimensions),) * n
        return SNode(self.shape + tuple(dimensions))

    pointer = bitmasked = dynamic = None  # sparse layouts are not supported

    def place(self, *fields, offset=None):
        for f in fields:
            if isinstance(f, (list, tuple)):
                self.place(*f)
                continue
            f._place(self.shape)
            if offset is not None:
                f._set_offset(offset)
        return self

    def lazy_grad(self):
        for f in list(state.fields):
            if f.dtype.is_float and f.grad is None and f.is_grad_of is None and \
                    f._generation == state.generation:
                f._add_grad('grad')

    def lazy_dual(self):
        for f in list(state.fields):
            if f.dtype.is_float and f.dual is None and f.is_grad_of is None and \
                    f._generation == state.generation:
                f._add_grad('dual')
