"""Data floor: ndarrays (`ti.ndarray`, `ti.Vector.ndarray`, `ti.Matrix.ndarray`) and the
`ti.types.ndarray(dtype=None, ndim=None)` kernel-parameter annotation.

An ndarray is a dense array in device memory, like a field, but not part of the program's
global state: it is a value that kernels take as an argument (one compiled kernel serves every
ndarray of the same dtype, ndim and element shape), it lives as long as Python holds it, and it
has no place in `ti.root`. Its storage and host access are the field's (runtime.program.Storage
with a lazily synchronised host mirror): `a[i]`, `a[i][j]` on vector/matrix ndarrays,
`to_numpy`/`from_numpy`/`fill`/`copy_from`, `to_torch`/`from_torch`. `needs_grad=True` gives
`.grad`, an ndarray of the same shape."""
import copy as _copy
import itertools
import weakref

import numpy as np

from .. import types as T
from ..errors import (IndexCountError, TaichiIndexError, TaichiRuntimeError, VkdiffTypeError,
                      VkdiffValueError)
from . import hooks, state
from .field import Field, _caller_assignment_name
from .matrix import MatrixType, VectorType
from ..errors import TaichiTypeError

_live = weakref.WeakSet()   # ndarrays with storage: ti.init()/ti.reset() drop their storage
_count = itertools.count()


class NdarrayShapeError(TaichiRuntimeError, ValueError):
    """An ndarray shape that is not a tuple of positive integers below 2**31."""


class NdarrayIndexError(IndexCountError, TaichiIndexError):
    """Python-scope indexing with the wrong number of indices (Taichi's TaichiIndexError)."""


def _ndarray_shape(shape):
    s = shape if isinstance(shape, (tuple, list)) else (shape,)
    out = []
    for n in s:
        if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) \
                or not 0 < n < 2**31:
            raise NdarrayShapeError(f'{shape!r} is not a valid shape for ndarray: each axis is '
                                    'an integer in 1 .. 2**31 - 1')
        out.append(int(n))
    return tuple(out)


def _element_type(dtype):
    """(scalar DataType, element shape) of what `ti.ndarray(dtype, ...)` names: a scalar type,
    `ti.types.vector(n, dt)` / `ti.math.vec3`, or `ti.types.matrix(n, m, dt)`."""
    if T.is_tensor_type(dtype):
        es = (dtype.n,) if not hasattr(dtype, 'm') else (dtype.n, dtype.m)
        if None in es or dtype.dtype is None:  # `ti.types.vector()`: an annotation's wildcard
            return (None if dtype.dtype is None else T.resolve(dtype.dtype)), None
        return T.resolve(dtype.dtype), es
    return T.resolve(dtype), ()


def element_type_of(dt, es):
    """The Taichi element type of an ndarray: the scalar type, or a vector / matrix type."""
    if not es:
        return dt
    return VectorType(es[0], dt) if len(es) == 1 else MatrixType(es[0], es[1], dt)


class Ndarray(Field):
    """A dense array of scalars, vectors (`elem_shape=(n,)`) or matrices (`(n, m)`) in device
    memory. Not registered in the program's field list: it is freed when Python drops it."""

    _shape = None  # a plain attribute (a Field's lives in its ir.Buffer)

    def __init__(self, dtype, shape, elem_shape=(), needs_grad=False, name=None):
        # (Field.__init__ is not called: an ndarray is not a global field and has no Buffer of
        # its own; kernels see it through the Buffer of the parameter it is passed to)
        self.dtype = T.resolve(dtype)
        if self.dtype is T.u1:
            self.dtype = T.i32
        self._shape = _ndarray_shape(shape)
        self.elem_shape = tuple(int(e) for e in elem_shape)
        self.name = name or _caller_assignment_name() or f'ndarray{next(_count)}'
        # (its size is checked when its storage is made, at first use: an ndarray that is never
        # used costs nothing, as in Taichi)
        self._grad = None
        self._dual = None
        self.offset = None
        self.is_grad_of = None
        self._storage = None
        self._generation = state.generation
        if needs_grad:
            if not self.dtype.is_float:
                raise TaichiRuntimeError(f'{self.dtype} is not supported for ndarray with '
                                         '`needs_grad=True`: gradients need a float ndarray')
            g = type(self)(self.dtype, self._shape, self.elem_shape, name=f'{self.name}.grad')
            g.is_grad_of = self
            self._grad = g

    @property
    def shape(self):
        return self._shape

    @property
    def buffer(self):
        raise TaichiTypeError(f'Expected ndarray in the kernel argument for argument {self.name}: '
                              'a kernel takes an ndarray as an argument (annotate the parameter '
                              'ti.types.ndarray()); it cannot be used as a global or a template')

    # ---------------------------------------------------------------- storage
    def _unplaced(self, kind):
        return None

    def _place(self, shape):
        raise VkdiffTypeError(f'{self.name} is an ndarray: it has its shape already and is not '
                              'placed in ti.root')

    @property
    def storage(self):
        st = self._storage
        if st is None:
            st = Field.storage.fget(self)
            _live.add(self)
        return st

    # ---------------------------------------------------------------- Taichi's properties
    @property
    def element_shape(self):
        return self.elem_shape

    @property
    def element_type(self):
        return element_type_of(self.dtype, self.elem_shape)

    @property
    def arr(self):
        return self

    def total_shape(self):
        return self.shape + self.elem_shape

    def _get_element_size(self):
        return self.ncomp * self.dtype.nbytes

    def _get_nelement(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def get_type(self):
        return NdarrayType(self.element_type, len(self.shape))

    # ---------------------------------------------------------------- host access
    def _index(self, key):
        k = 0 if key is None else len(key) if isinstance(key, (tuple, list)) else 1
        if k != len(self._shape) and not (k == 0 and not self._shape):
            raise NdarrayIndexError(f'{len(self._shape)}d ndarray indexed with {k}d indices: '
                                    f'{self.name} has shape {self._shape}')
        return Field._index(self, key)

    @state.synchronized
    def fill(self, value):
        """Every element (component) set to `value`, on the host mirror (checked first)."""
        v = self._fill_input(value)
        rt = hooks.call('native_runtime', ())  # (an ndarray is dense)
        a = np.asarray(v)
        word = hooks.call('fill_word', self.dtype.np, a.flat[0]) if rt is not None and \
            (a == a.flat[0]).all() else None
        if word is not None:  # one fill command on the device: no wait for its users
            rt.fill(self.storage, word)
            return
        self.storage.for_host_overwrite()[...] = v

    @state.synchronized
    def copy_from(self, other):
        """Copy another ndarray of the same shape and dtype (or a field of that shape)."""
        if not isinstance(other, Field):
            raise VkdiffTypeError(f'copy_from: {self.name} copies from an ndarray, got '
                                  f'{type(other).__name__} (use from_numpy for arrays)')
        if other.shape + other.elem_shape != self.total_shape():
            raise VkdiffValueError(f'copy_from: {self.name} has shape {self.total_shape()}, '
                                   f'{other.name} has {other.shape + other.elem_shape}')
        rt = hooks.call('native_runtime', ()) if other.dtype == self.dtype and (
            isinstance(other, Ndarray) or hooks.call('native_runtime', (other,)) is not None) \
            else None
        if rt is not None and other.storage is not self.storage:
            rt.copy(other.storage, self.storage)  # one copy command on the device
            return
        src = other.storage.for_host_read()
        self.storage.for_host_overwrite()[...] = src.astype(self.dtype.np, copy=False)

    def __dlpack__(self, stream=None):
        """DLPack export of a host copy (`torch.from_dlpack(a)`, `np.from_dlpack(a)`): the
        data as it is now, not shared with the device array."""
        return np.ascontiguousarray(self.to_numpy()).__dlpack__()

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU: the copy lives in host memory

    def __deepcopy__(self, memo):
        c = type(self)(self.dtype, self.shape, self.elem_shape, name=f'{self.name}.copy')
        c.copy_from(self)
        if self._grad is not None:
            c._grad = _copy.deepcopy(self._grad, memo)
            c._grad.is_grad_of = c
        return c

    def __repr__(self):
        return (f'<vkdiff ndarray {self.name}: {self.dtype} shape={self._shape} '
                f'elem={self.elem_shape}>')

    def _reset(self):
        self._storage = None


class ScalarNdarray(Ndarray):
    """An ndarray of scalars."""


class VectorNdarray(Ndarray):
    """An ndarray of n-vectors (`ti.Vector.ndarray(n, dtype, shape)`)."""


class MatrixNdarray(Ndarray):
    """An ndarray of n x m matrices (`ti.Matrix.ndarray(n, m, dtype, shape)`)."""


def make_ndarray(dtype, shape, elem_shape=(), needs_grad=False, name=None):
    cls = ScalarNdarray if not elem_shape else VectorNdarray if len(elem_shape) == 1 \
        else MatrixNdarray
    return cls(dtype, shape, elem_shape, needs_grad=needs_grad, name=name)


def ndarray(dtype, shape, needs_grad=False, name=None):
    """`ti.ndarray(dtype, shape, needs_grad=False)`: dtype a scalar type or a vector / matrix
    type (`ti.math.vec3`, `ti.types.matrix(2, 2, ti.f32)`)."""
    dt, es = _element_type(dtype)
    return make_ndarray(dt, shape, es, needs_grad, name)


@hooks.provides('vector_ndarray')  # (Vector.ndarray: lang/matrix.py)
def vector_ndarray(n, dtype, shape, needs_grad=False, name=None, **kw):
    """`ti.Vector.ndarray(n, dtype, shape)`."""
    return make_ndarray(dtype, shape, (int(n),), needs_grad, name)


@hooks.provides('matrix_ndarray')  # (Matrix.ndarray: lang/matrix.py)
def matrix_ndarray(n, m, dtype, shape, needs_grad=False, name=None, **kw):
    """`ti.Matrix.ndarray(n, m, dtype, shape)`."""
    return make_ndarray(dtype, shape, (int(n), int(m)), needs_grad, name)


def reset_all():
    """ti.init()/ti.reset(): every ndarray's storage belonged to the closed device."""
    for a in list(_live):
        a._storage = None
    _live.clear()


state.reset_hooks.append(reset_all)


# ---------------------------------------------------------------- the kernel annotation
class NdarrayType:
    """`ti.types.ndarray(dtype=None, ndim=None)`: a kernel parameter taking an ndarray, a numpy
    array or a torch CPU tensor. `dtype` a scalar type, a vector / matrix type or None (any);
    `ndim` the number of array axes (element axes not counted), None for any."""

    def __init__(self, dtype=None, ndim=None, element_dim=None, element_shape=None,
                 field_dim=None, needs_grad=None, boundary='unsafe'):
        if field_dim is not None:
            if ndim is not None and ndim != field_dim:
                raise VkdiffValueError('ti.types.ndarray: field_dim and ndim disagree')
            ndim = field_dim
        self.dtype = dtype
        self.ndim = None if ndim is None else int(ndim)
        self.needs_grad = needs_grad
        self.boundary = boundary
        if dtype is None:
            self.scalar, self.elem_shape = None, element_shape and tuple(element_shape)
        else:
            self.scalar, self.elem_shape = _element_type(dtype)
        if element_dim is not None and self.elem_shape is not None \
                and len(self.elem_shape) != element_dim:
            raise VkdiffValueError(f'ti.types.ndarray: element_dim={element_dim} but the element '
                                   f'type has shape {self.elem_shape}')
        self.element_dim = element_dim

    def __repr__(self):
        parts = []
        if self.dtype is not None:
            parts.append(f'dtype={self.dtype!r}')
        if self.ndim is not None:
            parts.append(f'ndim={self.ndim}')
        return f'ndarray({", ".join(parts)})'
