"""Data floor: global fields (`ti.field`, `Vector.field`, `Matrix.field`, `ti.root`), their
gradients, and host access. A field's data lives on the device; the host sees it through a lazily
synchronised mirror (see runtime.program.Storage). Kernels see a field as its `buffer` (an
ir.Buffer, bound to the field's storage at launch: lang.binding)."""
import numpy as np

from .. import ir
from .. import types as T
from ..errors import (FieldIndexError, FieldOffsetError, FieldOrderError, IndexCountError,
                      IndexTypeError, TaichiRuntimeError, UnsupportedError, VkdiffError,
                      VkdiffTypeError, VkdiffValueError)
from . import binding, convert, hooks, layout, state
from .proxy import element
from . import blockpool, dynpool
from .sparse import guards_of, host_activate, host_active, host_past_length, sparse_zero
from ..frontend.context import current
from .matrix import Matrix
from .torch_io import as_numpy, to_torch
from .enums import SNodeGradType


class Field(ir.ElementShape):
    """A dense field of scalars, vectors (`elem_shape=(n,)`) or matrices (`(n, m)`)."""

    def __init__(self, dtype, shape, elem_shape=(), name=None, role='field'):
        self.dtype = T.resolve(dtype)
        self.elem_shape = tuple(elem_shape)
        self.name = name or f'field{len(state.fields)}'
        self.buffer = ir.Buffer(self.name, self.dtype, None, self.elem_shape, role)
        self._shape = None if shape is None else _norm_shape(shape)
        self._declared_shapeless = shape is None  # (placed by the user: see _unplaced)
        binding.register(self)
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
        self.buffer.grad = g.buffer if g is not None else None

    @property
    def dual(self):
        """The tangent field of forward mode (see `grad`)."""
        return self._dual if self._dual is not None else self._unplaced('dual')

    @dual.setter
    def dual(self, g):
        self._dual = g
        self.buffer.dual = g.buffer if g is not None else None

    def _unplaced(self, kind):
        if self.is_grad_of is not None or not self.dtype.is_float:
            return None
        if self._shape is None:
            return self._add_grad(kind)
        if self.__dict__.get('_declared_shapeless'):
            # placed already (`place(x)`, then `place(x.grad)` in another statement): a gradient
            # of its own, attached to x only once placed (_place); until then x has none
            pending = self.__dict__.setdefault('_pending', {})
            if kind not in pending:
                g = Field(self.dtype, None, self.elem_shape, name=f'{self.name}.{kind}', role=kind)
                g.is_grad_of = self
                g.buffer.primal = self.buffer
                g.offset = self.offset
                pending[kind] = g
            return pending[kind]
        return None

    # ---------------------------------------------------------------- layout
    @property
    def _shape(self):
        return self.buffer.shape  # None until placed (ti.root...place(x))

    @_shape.setter
    def _shape(self, shape):
        self.buffer.shape = shape

    @property
    def _name(self):
        """Taichi's `x._name`: the name given with `name=` (or the assigned variable's)."""
        return self.name

    @property
    def shape(self):
        shape = self.buffer.shape
        if shape is None and self.__dict__.get('_destroyed'):
            raise VkdiffError(f'field {self.name} is gone: its SNode tree was destroyed '
                              '(FieldsBuilder.finalize(...).destroy())')
        if shape is None:
            raise VkdiffError(f'field {self.name} has no shape yet: place it with '
                              'ti.root.dense(ti.i, n).place(x) or ti.root.place(x)')
        return shape

    def _check_size(self):
        """A field larger than one device buffer may be is an error at creation."""
        if _pool_api(self) is not None:
            return  # stored in chunks (lang/dynpool.py)
        n = int(np.prod(self._shape + self.elem_shape, dtype=np.int64)) * self.dtype.nbytes
        limit = state.limits()['max_storage_buffer_range']
        if n > limit:
            raise VkdiffError(f'field {self.name} needs {n} bytes, more than this device\'s '
                              f'maxStorageBufferRange ({limit} bytes); split it into several fields')

    def _place(self, shape):
        if self._shape is not None:
            if self.is_grad_of is not None and self._shape == _norm_shape(shape):
                return  # `place(x, x.grad)`: placing x placed its gradient already
            raise VkdiffError(f'field {self.name} is already placed')
        primal, kind = self.is_grad_of, self.buffer.role
        if primal is not None and primal.__dict__.get('_pending', {}).get(kind) is self:
            if primal._shape != _norm_shape(shape):
                raise VkdiffError(f'{self.name} placed with shape {_norm_shape(shape)}, but '
                                  f'{primal.name} has shape {primal._shape}: a gradient has its '
                                  "field's shape")
            del primal._pending[kind]
            setattr(primal, kind, self)
        self._shape = _norm_shape(shape)
        self._check_size()
        for g in (self._grad, self._dual):
            if g is not None and g._shape is None:
                g._place(shape)

    def _add_grad(self, kind='grad'):
        g = Field(self.dtype, self._shape, self.elem_shape, name=f'{self.name}.{kind}', role=kind)
        g.is_grad_of = self
        g.buffer.primal = self.buffer
        g.offset = self.offset
        setattr(self, kind, g)
        layout.follow(g, self)
        return g

    @property
    def storage(self):
        st = self._storage
        if st is None:
            if _pool_api(self) is not None:
                raise VkdiffError(f'field {self.name} is stored in its SNode\'s device pool '
                                  '(lang/dynpool.py, lang/blockpool.py), not densely')
            if self._generation != state.generation:
                raise VkdiffError(f'field {self.name} belongs to a previous ti.init() and is gone')
            rt = state.runtime()
            st = self._storage = rt_storage(rt, self.shape + self.elem_shape, self.dtype, self.name,
                                            layout.storage_strides(self))
        return st

    # ---------------------------------------------------------------- host access
    def _index(self, key):
        shape = self.shape
        if type(key) is int and len(shape) == 1 and 0 <= key < shape[0] and self.offset is None:
            return (key,)
        if key is None:
            key = ()
        elif isinstance(key, list):
            key = tuple(key)
        elif not isinstance(key, tuple):
            key = (key,)
        if len(key) != len(shape):
            raise IndexCountError(
                f'field {self.name} has {len(shape)} indices (shape {shape}), got {len(key)}'
                + (' (use x[None] for a 0-D field)' if not shape else '')
                + '; Slicing is not supported on ti.field')
        for k in key:
            if isinstance(k, (bool, np.bool_)) or not isinstance(k, (int, np.integer)):
                raise IndexTypeError(f'field {self.name}: an index must be an integer, got '
                                     f'{k!r}; Detected illegal element of type: {type(k)}. Please '
                                     'be aware that slicing a ti.field is not supported so far.')
        stored = self._unoffset(key) if self.offset is not None else key
        debug = state.bounds_checked()  # Taichi's bound checks: no negative indices either
        out = []
        for k, n in zip(stored, shape):
            if not (0 if debug or self.offset is not None else -n) <= k < n:
                break
            out.append(int(k) % n)
        else:
            return tuple(out)
        return self._out_of_range(key, stored, shape, debug)

    def _out_of_range(self, key, stored, shape, debug):
        """An index out of range on an axis: where Taichi's address puts it (lang/layout.py),
        or FieldIndexError."""
        low = [0 if debug or self.offset is not None else -n for n in shape]
        if not debug:  # where Taichi's address puts it: another element (lang/layout.py)
            stored = tuple(int(k) % n if lo <= k < 0 else int(k)
                           for k, lo, n in zip(stored, low, shape))
            target = layout.alias(self, stored)
            if target is not None:
                layout.warn_alias(self, key, target)
                return target
        k, lo, n, o = next((k, lo, n, o) for k, lo, n, o in zip(
            key, low, shape, self.offset or (0,) * len(shape)) if not lo <= k - o < n)
        if self.offset is not None:
            raise FieldIndexError(f'index {k} out of range [{o}, {o + n}) of an axis of field '
                                  f'{self.name}')
        raise FieldIndexError(f'index {k} out of range for axis of size {n} in field '
                              f'{self.name}' + (' (negative indices count from the end only '
                                                'without ti.init(debug=True) or '
                                                'check_out_of_bound=True)'
                                                if debug and -n <= k < 0 else ''))

    def _unoffset(self, key):
        """Indices of a field with `offset=`, counted from 0."""
        return tuple(k - o for k, o in zip(key, self.offset))

    @state.synchronized
    def __getitem__(self, key):
        """A number, or for a vector/matrix field a Vector/Matrix whose entries read and write
        the field (Taichi's host access: `v[i][0] -= 1` changes the field)."""
        idx = self._index(key)
        if guards_of(self) and host_past_length(self, idx):  # (as a kernel's read)
            return sparse_zero(self)
        if _pool_api(self) is not None:
            v = _pool_api(self).host_get(self, idx)
            if not self.elem_shape:
                return v.item()
            return Matrix(v.tolist())
        if not self.elem_shape:
            return self.storage.for_host_read()[idx].item()
        return element(self, idx)

    @state.synchronized
    def __setitem__(self, key, value):
        idx = self._index(key)
        t = type(value)
        if not self.elem_shape and (t is float and self.dtype.is_float or t is int and
                                    -2**31 <= value < 2**31 and self.dtype.kind in 'fi'):
            v = value  # the common cases, checked at once
        else:
            v = convert.element(value, self.dtype, self.elem_shape, f'{self.name}[...]')
        self._host_set(idx, v)

    def _host_set(self, idx, v):
        """Store the converted value v at element idx (activating its sparse ancestors)."""
        if _pool_api(self) is not None:
            _pool_api(self).host_set(self, idx, v)
        else:
            self.storage.for_host_write()[idx] = v
        if guards_of(self):
            host_activate(self, idx)

    def _host_written(self, idx):
        """A Python-scope write of element idx activates its sparse ancestors."""
        if guards_of(self):
            host_activate(self, idx)

    def __iter__(self):
        raise UnsupportedError(f'iterating over field {self.name} in Python scope: Struct for is '
                               'only available in Taichi scope (use x.to_numpy() or '
                               'ti.grouped(x))')

    @state.synchronized
    def to_numpy(self, dtype=None, keep_dims=False):
        """The field as a numpy array. As in Taichi, an n x 1 matrix field gives (..., n) unless
        `keep_dims=True`, and a vector field gives (..., n, 1) with `keep_dims=True`."""
        if _pool_api(self) is not None:
            a = _pool_api(self).host_gather(self)  # inactive cells are 0 already
        else:
            a = self.storage.for_host_read().copy()
            if guards_of(self):  # inactive cells read 0, as in Taichi
                a *= host_active(self).reshape(self.shape + (1,) * len(self.elem_shape))
        es = self.elem_shape
        if len(es) == 1 and keep_dims:
            a = a.reshape(self.shape + (es[0], 1))
        elif len(es) == 2 and es[1] == 1 and not keep_dims:
            a = a.reshape(self.shape + (es[0],))
        return a.astype(dtype) if dtype is not None else a

    @state.synchronized
    def from_numpy(self, arr):
        """Copy an array of shape `shape + elem_shape` (a vector field also takes
        `shape + (n, 1)`) into the field. The whole input is converted and checked first: a
        failed from_numpy leaves the field as it was. Float data into an integer field
        truncates toward zero, as in Taichi."""
        self._write_numpy(self._numpy_input(arr))

    def _write_numpy(self, a):
        """from_numpy's write of the converted array a (active cells only, as in Taichi)."""
        if _pool_api(self) is not None:
            return _pool_api(self).host_scatter(self, a)
        if guards_of(self):  # Taichi writes the active cells only
            a = np.where(host_active(self).reshape(self.shape + (1,) * len(self.elem_shape)),
                         a, self.storage.for_host_read())
        self.storage.for_host_overwrite()[...] = a

    def _numpy_input(self, arr):
        """`arr` converted for from_numpy (checked, not written)."""
        arr = as_numpy(arr, f'from_numpy into {self.name}')
        want = self.shape + self.elem_shape
        nd = len(self.shape)
        tails = {self.elem_shape}
        es2 = self.elem_shape + (1,) * (2 - len(self.elem_shape))
        if len(self.elem_shape) in (1, 2) and 1 in es2:
            # a vector (or n x 1 / 1 x n matrix) as (n,), (n, 1) or (1, n), as Taichi accepts
            tails |= {(self.ncomp,), (self.ncomp, 1), (1, self.ncomp)}
        shape = getattr(arr, 'shape', None)
        if shape is None and isinstance(arr, (list, tuple)):
            try:
                shape = np.shape(arr)
            except ValueError as e:
                raise VkdiffValueError(f'from_numpy: the input is not a regular array ({e})') \
                    from None
        if shape is not None and (tuple(shape[:nd]) != self.shape or
                                  tuple(shape[nd:]) not in tails):
            raise VkdiffValueError(f'from_numpy: field {self.name} has shape {want}, got '
                                   f'{tuple(shape)}')
        a = convert.array(arr, self.dtype, f'from_numpy into field {self.name}')
        if a.shape != want:
            if a.size != int(np.prod(want, dtype=np.int64)):
                raise VkdiffValueError(f'from_numpy: field {self.name} has shape {want}, got '
                                       f'{a.shape}')
            a = a.reshape(want)
        return a

    def to_torch(self, device=None, keep_dims=False):
        """The data as a new torch tensor (shaped as to_numpy gives it), on `device`."""
        return to_torch(self.to_numpy(keep_dims=keep_dims), device)

    def from_torch(self, tensor):
        """Copy a torch tensor (any device; shaped as from_numpy takes it) in."""
        self.from_numpy(tensor)

    @state.synchronized
    def fill(self, value):
        """Set every element (every component of a vector/matrix field) to `value`; a float
        into an integer field truncates, as in Taichi. Checked before anything is written.
        In a kernel it is a loop storing `value` (a kernel value too) into every element."""
        if current() is not None:  # the frontend compiles it (frontend/loops.py)
            return hooks.call('fill_in_kernel', self, value)
        self._fill_converted(self._fill_input(value))

    def _fill_input(self, value):
        return convert.element(value, self.dtype, self.elem_shape, f'fill of field {self.name}',
                               truncate=True)

    def _fill_converted(self, v):
        if not self.elem_shape or (v == v.flat[0]).all():
            # on the device: no host round trip, so a Tape inside a time loop never syncs
            hooks.call('fill_field', self, v if not self.elem_shape else v.flat[0].item())
            return
        if _pool_api(self) is not None:
            return _pool_api(self).host_scatter(self, np.broadcast_to(v, self.shape + self.elem_shape))
        if guards_of(self):  # (the fill kernel's struct-for visits active cells only)
            v = np.where(host_active(self).reshape(self.shape + (1,) * len(self.elem_shape)),
                         v, self.storage.for_host_read())
        self.storage.for_host_overwrite()[...] = v

    @state.synchronized
    def copy_from(self, other):
        if not isinstance(other, Field):
            raise VkdiffTypeError(f'copy_from: field {self.name} copies from another field, got '
                                  f'{type(other).__name__} (use from_numpy for arrays)')
        if self.shape != other.shape or self.elem_shape != other.elem_shape:
            raise VkdiffValueError(f'copy_from: field {self.name} has shape {self.shape} and element '
                                   f'shape {self.elem_shape}; the source {other.name} has '
                                   f'{other.shape} and {other.elem_shape}')
        if not hooks.call('copy_field', self, other):  # (one copy command on the device: no host sync)
            self.from_numpy(other.to_numpy())

    def __repr__(self):
        return f'<vkdiff field {self.name}: {self.dtype} shape={self._shape} elem={self.elem_shape}>'

    def _set_offset(self, offset):
        """`offset=(o0, o1, ...)`: axis a is indexed o_a .. o_a + shape[a] - 1 (host and kernels)."""
        if isinstance(offset, (int, np.integer)):
            offset = (int(offset),)
        offset = tuple(int(o) for o in offset)
        if len(offset) != len(self.shape):
            raise FieldOffsetError(f'The dimensionality of shape and offset must be the same: field '
                              f'{self.name} has shape {self.shape}, offset {offset}')
        self.offset = offset if any(offset) else None
        self.buffer.meta['offset'] = self.offset  # for kernel messages (passes/debug_checks.py)
        for g in (self._grad, self._dual):
            if g is not None:
                g.offset = self.offset

    def get_scalar_field(self, *indices):
        """Taichi's `v.get_scalar_field(i[, j])`: member (i, j) of a vector/matrix field as a
        scalar field, placeable on its own (lang/member_field.py)."""
        # cycle: member_field.py imports this module
        from .member_field import get_scalar_field
        return get_scalar_field(self, *indices)

    def _get_dynamic_index_stride(self):
        """Taichi's byte stride between a matrix field's members in its SNode layout, or None
        (lang/member_field.dynamic_index_stride)."""
        # cycle: member_field.py imports this module
        from .member_field import dynamic_index_stride
        return dynamic_index_stride(self)

    def parent(self, n=1):
        """Taichi's `x.parent(n)`: the SNode n levels above x's place (`ti.root`, then None). A
        struct-for over it visits one index per cell, at x's resolution."""
        return self.snode.parent(n)

    @property
    def snode(self):
        """The SNode x is placed as (Taichi's `x.snode`): `x.snode.parent()` is its container."""
        leaf = getattr(self, '_snode_leaf', None)
        if leaf is None:  # made with shape=: one dense level under ti.root
            node = root.dense(axes(*range(len(self.shape))), self.shape) if self.shape else root
            leaf = node._place_leaf()
            leaf._field = self
            self._snode_leaf = leaf
        return leaf


class _PlaceInfo:
    """What Taichi's C++ SNode of a field answers (see SNode.ptr)."""

    def __init__(self, field):
        self._f = field

    def name(self):
        return self._f.name

    def get_snode_grad_type(self):
        return {'grad': SNodeGradType.ADJOINT, 'dual': SNodeGradType.DUAL}.get(
            self._f.buffer.role, SNodeGradType.PRIMAL)

    def has_adjoint_checkbit(self):
        """Whether Tape(validation=True) checks this field element by element: a float primal
        with an adjoint (Taichi allocates a check bit for exactly those, in debug mode; vkdiff's
        check needs no extra storage and no debug mode)."""
        f = self._f
        return f.buffer.role == 'field' and f.dtype.is_float and f._grad is not None


def rt_storage(rt, shape, dtype, name=None, strides=None):
    if dtype is T.f64 and not rt.features.get('float64'):
        raise VkdiffError('this Vulkan device has no 64-bit float support (shaderFloat64)')
    if dtype in (T.i64, T.u64) and not rt.features.get('int64'):
        raise VkdiffError('this Vulkan device has no 64-bit integer support (shaderInt64)')
    # deferred: the runtime (and the native module) loads with the device
    from ..runtime.program import Storage
    return Storage(rt, shape, dtype.np, name, strides)


MAX_NUM_INDICES = 12  # Taichi's limit (taichi_max_num_indices)


def _norm_shape(shape):
    shape = convert.shape(shape, 'a field shape')
    if len(shape) > MAX_NUM_INDICES:
        raise VkdiffValueError(f'fields have at most {MAX_NUM_INDICES} dimensions (as Taichi)')
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
    if ';' in line:  # `a = ti.field(...); b = ti.field(...)`: the statement of this call
        try:
            col = list(frame.f_code.co_positions())[frame.f_lasti // 2][2]
        except (AttributeError, IndexError):  # (no column information)
            col = None
        if col is None:
            return None
        line = line[:col].rsplit(';', 1)[-1] + line[col:]
    m = re.match(r'\s*([A-Za-z_][\w.]*)\s*(?::[^=]*)?=[^=]', line)
    return m.group(1) if m else None


@hooks.provides('make_field')  # (Matrix.field, VectorType.field: lang/matrix.py)
def make_field(dtype, shape, elem_shape, needs_grad=False, needs_dual=False, name=None,
               offset=None, order=None):
    if order is not None:  # Taichi's order=: one dense level per axis, in that order
        f = make_field(dtype, None, elem_shape, needs_grad, needs_dual,
                       name or _caller_assignment_name())
        _place_in_order(f, shape, order, offset)
        return f
    dt = T.resolve(dtype)
    if dt is T.u1:  # stored as i32 0 / 1, as u1 ndarrays and arguments (no bool buffers)
        dt = T.i32
    if (needs_grad or needs_dual) and not dt.is_float:
        raise TaichiRuntimeError(f'{dt} is not supported for field with `needs_grad=True` or '
                                 '`needs_dual=True`: gradients need a float field')
    if offset is not None and shape is None:
        raise FieldOffsetError('shape cannot be None when offset is set')
    f = Field(dt, shape, elem_shape, name or _caller_assignment_name())
    if offset is not None:
        f._set_offset(offset)
    if needs_grad:
        f._add_grad('grad')
    if needs_dual:
        f._add_grad('dual')
    return f


def field(dtype, shape=None, needs_grad=False, needs_dual=False, name=None, offset=None, **kw):
    """`ti.field(dtype, shape=(), needs_grad=False, order='ji')`."""
    unknown = sorted(set(kw) - {'order'})
    if unknown:  # (Taichi's TypeError: a misspelt needs_grad= would else be dropped unseen)
        raise VkdiffTypeError(f'field() got an unexpected keyword argument {unknown[0]!r}')
    if getattr(dtype, 'kind', None) == 'quant':  # ti.types.quant.int(...): lang/quant.py
        return hooks.call('make_quant_field', dtype, shape, needs_grad, needs_dual,
                          name or _caller_assignment_name())
    if hasattr(dtype, 'field'):  # ti.field(ti.math.vec3, n), ti.field(ti.types.matrix(2, 2, float), n)
        extra = {'order': kw['order']} if kw.get('order') is not None else {}
        return dtype.field(shape=shape, needs_grad=needs_grad, needs_dual=needs_dual, name=name,
                           offset=offset, **extra)
    return make_field(dtype, shape, (), needs_grad, needs_dual, name, offset, kw.get('order'))


def _place_in_order(f, shape, order, offset):
    """`shape=..., order='ji'`: as Taichi's _create_snode, ti.root.dense(ti.j, shape[1])
    .dense(ti.i, shape[0]).place(f): the elements stored in that axis order (lang/layout.py)."""
    if shape is None:
        raise FieldOrderError('shape cannot be None when order is set')
    shape = _norm_shape(shape)
    if not isinstance(order, str):
        raise FieldOrderError(f'order={order!r}: a string of axes, e.g. "ji"')
    if len(order) != len(shape):  # (Taichi's messages)
        raise FieldOrderError(f'order={order!r}: The dimensionality of shape and order must be '
                              'the same')
    if len(set(order)) != len(order):
        raise FieldOrderError(f'order={order!r}: The axes in order must be different')
    for ch in order:
        if ch not in 'ijkl'[:len(shape)]:
            raise FieldOrderError(f'order={order!r}: Invalid axis {ch!r} for a '
                                  f'{len(shape)}-D field')
    node = root
    for ch in order:
        a = 'ijkl'.index(ch)
        node = node.dense(axes(a), shape[a])
    node.place(f, offset=offset)


class _FieldKind(type):
    """isinstance() by what a field holds: vkdiff has one Field class for all of them."""

    def __instancecheck__(cls, x):
        from .ndarray import Ndarray  # (ndarray.py imports this module)
        return isinstance(x, Field) and not isinstance(x, Ndarray) and cls._holds(x.elem_shape)


class ScalarField(metaclass=_FieldKind):
    """Taichi's `ti.ScalarField`, for isinstance(): a field of scalars (a gradient, a member of
    a vector field too); not an ndarray."""
    _holds = staticmethod(lambda elem_shape: len(elem_shape) == 0)


class MatrixField(metaclass=_FieldKind):
    """Taichi's `ti.MatrixField`, for isinstance(): a field of vectors or matrices."""
    _holds = staticmethod(lambda elem_shape: len(elem_shape) in (1, 2))


# ti.root and the SNode tree (lang/snode.py), re-exported here: `ti.i`, `SNode`, ...
from .snode import (AXES, SNode, _Axis, axes, i, ij, ijk, ijkl, ijl, ik, ikl, il, j, jk, jkl,  # noqa: E402,F401
                    jl, k, kl, l, root)


def _pool_api(field):
    """The module holding `field` in a device pool (lang/dynpool.py for a dynamic node's
    chunks, lang/blockpool.py for a pointer's blocks), or None when it is stored densely."""
    if dynpool.node_of(field) is not None:
        return dynpool
    if blockpool.node_of(field) is not None:
        return blockpool
    return None
