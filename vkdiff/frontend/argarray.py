"""Frontend floor: an ndarray kernel parameter as kernel code sees it. `a[i, j]`, `a[i][k]` on
vector/matrix elements, `a.shape[0]`, `for i, j in a`, `ti.grouped(a)` work as on fields; the
array itself is an ir.Buffer with role 'arg' bound at each launch, and its shape is read at run
time from hidden scalar arguments (push constants), so one compiled kernel serves every array
with the same dtype, ndim and element shape."""
import copy

from .. import ir
from .. import types as T
from . import ops
from .context import Value, emit, error


class ArgArray(ir.ElementShape):
    """The kernel-scope value of an ndarray parameter. Quacks like a Field for the frontend's
    element lvalues (buffer, dtype, elem_shape, n, m, ncomp, name); `shape` is a tuple of run-time
    i32 Values."""

    offset = None
    is_grad_of = None

    def __init__(self, name, dtype, ndim, elem_shape, dim_args, boundary='unsafe'):
        self.name = name
        self.dtype = dtype
        self.elem_shape = tuple(elem_shape)
        # the Buffer's shape is a placeholder: strides come from the run-time dims (meta['dims'],
        # the push-constant argument indices of the shape), bound per launch
        self.buffer = ir.Buffer(name, dtype, (0,) * ndim, self.elem_shape, role='arg',
                                meta={'dims': tuple(dim_args)})
        self.shape = tuple(Value(emit('arg', T.i32, attrs={'index': k})) for k in dim_args)
        self.clamp = boundary == 'clamp'

    def element_shape(self):
        """Taichi's AnyArray.element_shape(): the element's shape as a list ([] for scalars),
        known at compile time."""
        return list(self.elem_shape)

    def index(self, k, n):
        """The i32 IR index for `k` on an axis of run-time size `n` (clamped into [0, n) with
        boundary='clamp')."""
        if ops.is_number(k):
            if int(k) != k:
                raise error(f'ndarray index must be an integer, got {k!r}')
            k = int(k)
        elif not isinstance(k, Value) or not (k.dtype.is_int or k.dtype is T.u1):
            what = f'a {k.dtype} value' if isinstance(k, Value) else repr(k)
            raise error(f'ndarray index must be an integer, got {what}')
        if self.clamp:
            k = ops.binary('max', ops.binary('min', k, ops.binary('sub', n, 1)), 0)
        return ops.as_value(k, T.i32).stmt

    @property
    def grad(self):
        """`x.grad[i]` in a kernel: the gradient array passed with x (an ndarray with
        needs_grad=True); the adjoint of a kernel that reads it is an AutodiffError."""
        g = self.buffer.grad
        if g is None:
            raise error(f'{self.name}.grad: the array passed for {self.name} has no gradient '
                        '(create it with needs_grad=True)')
        view = copy.copy(self)
        view.buffer, view.name = g, f'{self.name}.grad'
        return view

    def __repr__(self):
        return f'<ndarray argument {self.name}: {self.dtype} ndim={len(self.shape)}>'



class SharedBuffer(ArgArray):
    """`ti.simt.block.SharedArray(shape, dtype)`: an array in workgroup memory, indexed like a
    field of constant shape (an ir.Buffer with role 'shared'; codegen declares it Workgroup)."""

    def __init__(self, shape, dtype):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        if not shape or not all(isinstance(n, int) and n > 0 for n in shape):
            raise error(f'SharedArray shape must be positive integers, got {shape!r}')
        elem_shape = ()
        if T.is_tensor_type(dtype):
            elem_shape = (dtype.n, dtype.m) if hasattr(dtype, 'm') else (dtype.n,)
            dtype = dtype.dtype
        dtype = T.resolve(dtype)
        if dtype.is_narrow or dtype is T.u1:
            raise error(f'SharedArray of {dtype} is not supported (use a 32- or 64-bit type)')
        self.name, self.dtype, self.elem_shape = 'shared', dtype, elem_shape
        self.buffer = ir.Buffer('shared', dtype, shape, elem_shape, role='shared')
        self.shape = shape
        self.clamp = False

    def index(self, k, n):
        if ops.is_number(k):
            if int(k) != k or not 0 <= int(k) < n:
                raise error(f'SharedArray index {k!r} out of range [0, {n})')
            k = int(k)
        elif not isinstance(k, Value) or not (k.dtype.is_int or k.dtype is T.u1):
            raise error(f'SharedArray index must be an integer, got {k!r}')
        return ops.as_value(k, T.i32).stmt

    @property
    def grad(self):
        raise error('a SharedArray has no gradient')

    def __repr__(self):
        return f'<SharedArray {self.dtype} {self.shape}>'
