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
        self.grad = None
        self.dual = None
        self.is_grad_of = None
        self._storage = None
        self._generation = state.generation
        state.fields.append(self)

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
            raise VkdiffError(f'field {self.name} is already placed')
        self._shape = _norm_shape(shape)
        self._check_size()
        if self.grad is not None and self.grad._shape is None:
            self.grad._place(shape)
        if self.dual is not None and self.dual._shape is None:
            self.dual._place(shape)

    def _add_grad(self, kind='grad'):
        g = Field(self.dtype, self._shape, self.elem_shape, name=f'{self.name}.{kind}')
        g.is_grad_of = self
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
        if key is None or (isinstance(key, tuple) and not key):
            key = ()
        elif not isinstance(key, tuple):
            key = (key,)
        if len(key) != len(shape):
            raise IndexError(f'field {self.name} has {len(shape)} indices (shape {shape}), got {len(key)}'
                             + (' (use x[None] for a 0-D field)' if not shape else ''))
        out = []
        for k, n in zip(key, shape):
            if not isinstance(k, (int, np.integer)):
                raise IndexError(f'field index must be an integer, got {k!r}')
            if not -n <= k < n:
                raise IndexError(f'index {k} out of range for axis of size {n} in field {self.name}')
            out.append(int(k) % n)
        return tuple(out)

    def __getitem__(self, key):
        idx = self._index(key)
        h = self.storage.for_host_read()
        if not self.elem_shape:
            return h[idx].item()
        from .matrix import Matrix, Vector
        v = h[idx].tolist()
        return Vector(v) if len(self.elem_shape) == 1 else Matrix(v)

    def __setitem__(self, key, value):
        idx = self._index(key)
        if self.elem_shape:
            value = np.asarray(value.to_list() if hasattr(value, 'to_list') else value)
            if value.shape != self.elem_shape and value.size != self.ncomp and value.size != 1:
                raise ValueError(f'{self.name}[...] expects elements of shape {self.elem_shape}')
            self.storage.for_host_write()[idx] = value.reshape(self.elem_shape) if value.size > 1 else value
        else:
            self.storage.for_host_write()[idx] = value

    def to_numpy(self, dtype=None):
        a = self.storage.for_host_read().copy()
        return a.astype(dtype) if dtype is not None else a

    def from_numpy(self, arr):
        arr = np.asarray(arr)
        want = self.shape + self.elem_shape
        if arr.shape != want:
            raise ValueError(f'from_numpy: field {self.name} has shape {want}, got {arr.shape}')
        if arr.dtype.kind == 'f' and not self.dtype.is_float:
            raise ValueError(f'from_numpy: cannot store {arr.dtype} into the {self.dtype} field '
                             f'{self.name} without losing data; cast it first')
        self.storage.for_host_overwrite()[...] = arr

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

    def copy_from(self, other):
        self.from_numpy(other.to_numpy())

    def __repr__(self):
        return f'<vkdiff field {self.name}: {self.dtype} shape={self._shape} elem={self.elem_shape}>'

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
    if shape is None or (isinstance(shape, tuple) and not shape):
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


def make_field(dtype, shape, elem_shape, needs_grad=False, needs_dual=False, name=None):
    f = Field(dtype, shape, elem_shape, name or _caller_assignment_name())
    if needs_grad:
        if not f.dtype.is_float:
            raise VkdiffError('needs_grad=True requires a float field')
        f._add_grad('grad')
    if needs_dual:
        f._add_grad('dual')
    return f


def field(dtype, shape=None, needs_grad=False, needs_dual=False, name=None, offset=None, **kw):
    """`ti.field(dtype, shape=(), needs_grad=False)`."""
    if offset is not None:
        raise VkdiffError('field offsets are not supported')
    if hasattr(dtype, 'field'):  # ti.field(ti.math.vec3, n), ti.field(ti.types.matrix(2, 2, float), n)
        return dtype.field(shape=shape, needs_grad=needs_grad, needs_dual=needs_dual, name=name)
    return make_field(dtype, shape, (), needs_grad, needs_dual, name)


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
