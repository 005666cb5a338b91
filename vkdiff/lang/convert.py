"""Data floor: Python-scope values converted into a field's or a kernel argument's dtype, with
Taichi 1.7.4's conversions where Taichi defines them and a clear error for everything else.
Every check runs on the whole input before anything is written, so a failed assignment,
`fill` or `from_numpy` leaves the field's data intact.

- Float fields and arguments take ints, floats, bools and numpy numbers (`2**70` becomes
  1.18e21; beyond f32's range gives inf, as in numpy and Taichi).
- Integer fields and arguments take ints, bools and numpy integers that fit the type:
  `2**40 + 5` into i32 or `-1` into u32 is a VkdiffOverflowError (Taichi wraps them silently).
- A float into an integer field element (`x[i] = 1.5`) or integer kernel argument is a
  TypeError, as in Taichi; `from_numpy` and `fill` truncate toward zero, as Taichi's copy and
  fill kernels do (NaN, inf or out of range: VkdiffOverflowError).
- None, str, bytes, complex, or a sequence where a number is expected: a TypeError."""
import math

import numpy as np

from ..errors import (FieldShapeError, KernelArgumentError, VkdiffOverflowError, VkdiffTypeError,
                      VkdiffValueError)
from .matrix import Matrix


def _int_range(dtype):
    info = np.iinfo(dtype.np)
    return int(info.min), int(info.max)


def _check_int(v, dtype, what, shown):
    lo, hi = _int_range(dtype)
    if not lo <= v <= hi:
        raise VkdiffOverflowError(f'{what}: {shown} does not fit in {dtype} (range {lo}..{hi})')
    return v


def scalar(value, dtype, what, truncate=False, type_error=VkdiffTypeError):
    """`value` as a Python number of `dtype` (float or int), or a clear error. `truncate`: a
    float into an integer type truncates toward zero instead of raising `type_error`."""
    v = value
    if isinstance(v, np.ndarray) and v.ndim == 0:
        v = v[()]
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bool):
        v = int(v)
    if isinstance(v, int):
        if dtype.is_float:
            try:
                return float(v)
            except OverflowError:
                raise VkdiffOverflowError(f'{what}: the integer {value!r} is too large for '
                                          f'{dtype}') from None
        return _check_int(v, dtype, what, repr(value))
    if isinstance(v, float):
        if dtype.is_float:
            return v
        if not truncate:
            raise type_error(f'{what}: cannot store the float {value!r} into {dtype} (Taichi '
                             'does not convert it implicitly; use int(...) to truncate)')
        if not math.isfinite(v):
            raise VkdiffOverflowError(f'{what}: {value!r} has no {dtype} value')
        return _check_int(int(v), dtype, what, repr(value))
    raise type_error(f'{what}: expected a number for {dtype}, got {type(value).__name__} '
                     f'{_short(value)}')


def _short(value):
    r = repr(value)
    return r if len(r) <= 60 else r[:57] + '...'


def array(arr, dtype, what):
    """`arr` (array-like) as a numpy array of `dtype`, every element checked; float data into
    an integer dtype truncates toward zero (Taichi's from_numpy)."""
    if isinstance(arr, Matrix):
        arr = arr.to_list()
    try:
        a = np.asarray(arr)
    except (ValueError, TypeError) as e:
        raise VkdiffValueError(f'{what}: the input is not a regular array ({e})') from None
    kind = a.dtype.kind
    if kind == 'O':  # Python objects: numbers only, each converted and checked
        flat = [scalar(x, dtype, what, truncate=True) for x in a.ravel()]
        return np.array(flat, dtype=dtype.np).reshape(a.shape)
    if kind == 'c':
        raise VkdiffTypeError(f'{what}: complex data ({a.dtype}) cannot be stored in a {dtype} '
                              'field; take .real or abs() first')
    if kind not in 'biuf':
        raise VkdiffTypeError(f'{what}: {a.dtype} data cannot be stored in a {dtype} field')
    if kind == 'b' or dtype.is_float:
        return a.astype(dtype.np)
    if kind == 'f':
        if a.size and not np.isfinite(a).all():
            bad = a[~np.isfinite(a)].ravel()[0]
            raise VkdiffOverflowError(f'{what}: {bad!r} has no {dtype} value')
        a = np.trunc(a)
    if a.size:
        lo, hi = _int_range(dtype)
        amin, amax = a.min(), a.max()
        if amin < lo or amax > hi:
            bad = amin if amin < lo else amax
            raise VkdiffOverflowError(f'{what}: {bad!r} does not fit in {dtype} '
                                      f'(range {lo}..{hi})')
    return a.astype(dtype.np)


def element(value, dtype, elem_shape, what, truncate=False):
    """One field element: a number for a scalar field; for a vector/matrix field a numpy array
    of `elem_shape` (from a Vector/Matrix, a sequence, an array, or one number for all)."""
    if not elem_shape:
        return scalar(value, dtype, what, truncate)
    if isinstance(value, Matrix):
        value = value.to_list()
    if isinstance(value, (list, tuple, np.ndarray)):
        try:
            a = np.asarray(value, dtype=object)
        except (ValueError, TypeError) as e:
            raise VkdiffValueError(f'{what}: the value is not a regular array ({e})') from None
        n = int(np.prod(elem_shape))
        if a.shape != tuple(elem_shape) and a.size != n:
            raise VkdiffValueError(f'{what}: expects elements of shape {tuple(elem_shape)}, got '
                                   f'{a.shape}')
        entries = [scalar(x, dtype, what, truncate) for x in a.ravel()]
        return np.array(entries, dtype=dtype.np).reshape(elem_shape)
    v = scalar(value, dtype, what, truncate)
    return np.full(elem_shape, v, dtype=dtype.np)


def shape(s, what='shape'):
    """A field shape: an int or a tuple of positive ints."""
    if s is None or (isinstance(s, tuple) and not s):
        return ()
    if isinstance(s, (bool, np.bool_)):
        raise VkdiffTypeError(f'{what} must be an int or a tuple of ints, got {s!r}')
    if isinstance(s, (int, np.integer)):
        s = (int(s),)
    if not isinstance(s, (tuple, list)):
        raise VkdiffTypeError(f'{what} must be an int or a tuple of ints, got '
                              f'{type(s).__name__} {_short(s)}')
    out = []
    for d in s:
        if isinstance(d, (bool, np.bool_)) or not isinstance(d, (int, np.integer)):
            raise VkdiffTypeError(f'{what} must be an int or a tuple of ints, got {_short(s)}')
        if d <= 0:
            raise FieldShapeError(f'Every dimension of a Taichi field should be positive, got '
                                  f'{tuple(s)}')
        out.append(int(d))
    return tuple(out)


def arg_converter(dtype, what):
    """The push-constant value of a scalar kernel argument of `dtype` (a float for an integer
    parameter is a KernelArgumentError, as Taichi's TaichiRuntimeTypeError); the common cases
    take one type test."""
    if dtype.is_float:
        def conv(a):
            if type(a) is float:
                return a
            return scalar(a, dtype, what, type_error=KernelArgumentError)
    else:
        lo, hi = _int_range(dtype)

        def conv(a):
            if type(a) is int and lo <= a <= hi:
                return a
            return scalar(a, dtype, what, type_error=KernelArgumentError)
    conv.__name__ = dtype.name
    return conv
