"""Launch floor: ndarray kernel arguments at launch. A parameter annotated `ti.types.ndarray(...)`
takes a vkdiff ndarray, a numpy array or a torch CPU tensor. `resolve` checks the value against
the annotation and gives the compile key (dtype, ndim, element shape: one compiled kernel serves
every array that shares them) and a `Bound` array: what the launcher binds to the parameter's
Buffer (role 'arg'), its run-time shape (passed as hidden push-constant arguments) and, for host
arrays, the copy in before the launch and the copy back after it.

numpy arrays and torch tensors have Taichi's semantics: the kernel sees their data and what it
writes is in them when the call returns. They are copied into a staging buffer reused by the
same parameter of the same compiled kernel (so the pipeline bound to it is reused too) and, when
the kernel writes the parameter, copied back after the launch (which then waits for the device).
Arrays that are neither C- nor Fortran-contiguous (a strided view), or whose dtype a scalar
annotation does not take, are a clear error, never a silent copy whose writes would be lost."""
import numpy as np

from .. import types as T
from ..errors import KernelArgumentError, VkdiffTypeError, VkdiffValueError
from ..lang import state
from ..lang.ndarray import Ndarray, NdarrayType
from ..lang.torch_io import check_cpu, is_tensor
from ..errors import TaichiRuntimeTypeError
from ..lang.field import rt_storage


class NdarrayArgError(KernelArgumentError, ValueError):
    """An array passed for an ndarray parameter that the annotation does not take."""


def _tensor_desc(dt, es):
    return f'[Tensor ({", ".join(map(str, es))}) {dt}]' if es else str(dt)


def _want_desc(ann):
    d = ann.dtype
    if d is None:
        return 'any'
    if T.is_tensor_type(d):
        kind = 'VectorType' if not hasattr(d, 'm') else 'MatrixType'
        dims = f'{d.n}' if not hasattr(d, 'm') else f'{d.n},{d.m}'
        return f'{kind}[{dims}, {T.resolve(d.dtype) if d.dtype is not None else "any"}]'
    return str(T.resolve(d))


class Bound:
    """One array bound to an ndarray parameter for one launch."""
    __slots__ = ('array', 'host', 'shape', 'dtype', 'elem_shape', 'grads')

    def __init__(self, array, host, shape, dtype, elem_shape, grads=None):
        self.array = array      # the Ndarray (device storage), or None for a host array
        self.host = host        # the numpy array (a torch tensor's numpy view), or None
        self.shape, self.dtype, self.elem_shape = shape, dtype, elem_shape
        self.grads = grads or {}  # a torch tensor's .grad as a numpy view: {'grad': array}

    @property
    def has_grad(self):
        if self.grads is False:
            return False
        if self.array is not None:
            return self.array.grad is not None
        return 'grad' in self.grads


def _elem_check(ann, dt, es, name):
    """Check a value's scalar dtype and element shape against the annotation."""
    want = ann.dtype
    if want is not None and T.is_tensor_type(want):
        n_ok = want.n is None or want.n == (es[0] if es else None)
        if hasattr(want, 'm'):
            shape_ok = len(es) == 2 and n_ok and (want.m is None or want.m == es[1])
        else:
            shape_ok = len(es) == 1 and n_ok
        dt_ok = want.dtype is None or T.resolve(want.dtype) is dt
        if not (shape_ok and dt_ok):
            raise NdarrayArgError(f'Invalid value for argument {name} - required element type: '
                                  f'{_want_desc(ann)}, but {_tensor_desc(dt, es)} is provided')
    elif want is not None:
        wdt = T.resolve(want)
        if es or wdt is not dt:
            raise KernelArgumentError(f'Expect element type {wdt} for argument {name}, but get '
                                      f'{_tensor_desc(dt, es)}')
    elif ann.elem_shape is not None and tuple(ann.elem_shape) != es:
        raise NdarrayArgError(f'Invalid value for argument {name} - required element shape '
                              f'{ann.elem_shape}, but {es} is provided')


def _host_layout(ann, arr, name):
    """(dtype, array shape, element shape) of a numpy array (or a torch tensor's numpy view) for
    this annotation, checked as Taichi checks external arrays: a vector / matrix annotation takes
    the last 1 / 2 axes as the element (of the array's own scalar type: the annotation's is not
    imposed), a scalar annotation's dtype must be the array's."""
    try:
        dt = T.resolve(arr.dtype)
    except TypeError:
        raise KernelArgumentError(f'argument {name}: arrays of {arr.dtype} are not supported '
                                  '(use float32/64, int8..64, uint8..64)') from None
    want, shape = ann.dtype, tuple(arr.shape)
    bad = f'Invalid value for argument {name} - required'
    if want is not None and T.is_tensor_type(want):
        k = 2 if hasattr(want, 'm') else 1
        if ann.ndim is not None and len(shape) != ann.ndim + k:
            raise NdarrayArgError(f'{bad} array has ndim={ann.ndim} element_dim={k}, array with '
                                  f'{len(shape)} dimensions is provided')
        if len(shape) < k:
            raise NdarrayArgError(f'{bad} element_dim={k}, array with {len(shape)} dimensions is '
                                  'provided')
        es = shape[len(shape) - k:]
        need = (want.n, want.m) if k == 2 else (want.n,)
        if None not in need and es != need:
            raise NdarrayArgError(f'{bad} element_shape={need}, array with element shape of {es} '
                                  'is provided')
        return dt, shape[:len(shape) - k], es
    if want is not None:
        if T.resolve(want) is not dt:
            raise NdarrayArgError(f'{bad} array has dtype={T.resolve(want)}, array with dtype={dt} '
                                  'is provided')
        if ann.ndim is not None and len(shape) != ann.ndim:
            raise NdarrayArgError(f'{bad} array has ndim={ann.ndim}, array with {len(shape)} '
                                  'dimensions is provided')
        return dt, shape, ()
    k = len(ann.elem_shape) if ann.elem_shape else (ann.element_dim or 0)
    if len(shape) < k:
        raise NdarrayArgError(f'{bad} element_dim={k}, array with {len(shape)} dimensions is '
                              'provided')
    return dt, shape[:len(shape) - k], shape[len(shape) - k:]


def resolve(ann, value, name):
    """(compile key, Bound) for `value` passed to a parameter annotated `ann` (NdarrayType).
    An ndarray's dtype, shape and gradient never change: its answer is remembered on it."""
    if isinstance(value, Ndarray):
        hit = value.__dict__.get('_as_arg')
        if hit is not None and hit[0] is ann:
            return hit[1], Bound(value, None, value._shape, value.dtype, value.elem_shape,
                                 hit[2])
        key, bound = _resolve(ann, value, name)
        value._as_arg = (ann, key, bound.grads)  # (not the Bound: it holds the array)
        return key, bound
    return _resolve(ann, value, name)


def _resolve(ann, value, name):
    if isinstance(value, Ndarray):
        dt, shape, es = value.dtype, value.shape, value.elem_shape
        bound = Bound(value, None, shape, dt, es)
    else:
        host = value
        if is_tensor(value):
            check_cpu(value, f'argument {name}')
            if not value.is_contiguous():
                raise NdarrayArgError(f'argument {name}: Non contiguous tensors are not '
                                      'supported; pass t.contiguous() (and copy the result back)')
            host = value.detach().numpy()
            grads = _tensor_grads(value, name)
        else:
            grads = None
        if not is_tensor(value) and not isinstance(value, np.ndarray):
            raise KernelArgumentError(f'Invalid type for argument {name}, got {value!r}: it is a '
                                      f'{ann!r}; pass a vkdiff ndarray, a numpy array or a '
                                      f'torch tensor, not a {type(value).__name__}')
        if not (host.flags.c_contiguous or host.flags.f_contiguous):
            # (a Fortran-ordered array, e.g. a transpose, is staged in C order and written back)
            raise NdarrayArgError(f'argument {name}: Non contiguous numpy arrays are not '
                                  'supported, please call np.ascontiguousarray(arr) before passing '
                                  'it into the kernel')
        dt, shape, es = _host_layout(ann, host, name)
        bound = Bound(None, host, shape, dt, es, grads)
    if ann.ndim is not None and ann.ndim != len(shape):
        raise NdarrayArgError(f'Invalid value for argument {name} - required ndim={ann.ndim}, but '
                              f'{len(shape)}d ndarray with shape {shape} is provided')
    if bound.array is not None:  # (host arrays were checked by _host_layout, as Taichi does)
        _elem_check(ann, dt, es, name)
    # the gradient's presence decides whether the adjoint accumulates into it (a Buffer with a
    # grad) or treats the array as a constant: part of the key, like the dtype
    if ann.needs_grad is False:  # `ti.types.ndarray(needs_grad=False)`: a constant for AD
        bound.grads, grad = {}, False
    else:
        grad = bound.has_grad
    return ('nd', dt.name, len(shape), es, grad), bound


def _tensor_grads(t, name):
    """A torch tensor's `.grad` (set by the caller, e.g. in an autograd.Function's backward) as
    the gradient the adjoint reads and accumulates into."""
    g = t.grad if t.is_leaf or t.retains_grad else None  # (non-leaf .grad warns)
    if g is None:
        return None
    if g.dtype != t.dtype or g.shape != t.shape or not g.is_contiguous() or g.device != t.device:
        raise NdarrayArgError(f'argument {name}: its .grad must be a contiguous tensor of the '
                              'same dtype, shape and device')
    return {'grad': g.detach().numpy()}


def check_not_template(value, name):
    if isinstance(value, Ndarray):
        raise TaichiRuntimeTypeError(f'argument {name}: Ndarray shouldn\'t be passed in via '
                                     '`ti.template()`, please annotate your kernel with '
                                     '`ti.types.ndarray(...)` instead')


# ---------------------------------------------------------------- staging of host arrays
class Staging:
    """Device storage for the host arrays one ndarray parameter of one compiled kernel takes:
    grown (doubling) as needed, reused otherwise."""

    def __init__(self):
        self.storage = None
        self.dtype = None

    def bind(self, host, dtype):
        """The Storage holding a copy of `host` (uploaded at the dispatch)."""
        n = host.size
        np_dt = dtype.np
        st = self.storage
        if st is None or self.dtype is not np_dt or st.host.size < n or st.rt is not state.runtime():
            cap = 1
            while cap < max(n, 1):
                cap *= 2
            st = self.storage = rt_storage(state.runtime(), (cap,), dtype, 'arg staging')
            self.dtype = np_dt
        if n:
            st.for_host_overwrite()[:n] = host.reshape(-1)
        else:
            st.for_host_overwrite()
        return st

    def copy_back(self, host):
        """After the launch: what the kernel wrote, into the caller's array (waits)."""
        n = host.size
        if n:  # (by shape: a Fortran-ordered array's reshape(-1) would be a copy)
            host[...] = self.storage.for_host_read()[:n].reshape(host.shape)

