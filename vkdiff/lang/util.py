"""Face floor: `taichi.lang.util`'s public helpers that Taichi programs call: `to_numpy_type` and
`to_pytorch_type` (a vkdiff data type's numpy / torch dtype) and `has_pytorch`."""
import importlib.util

import numpy as np

from .. import types as T
from ..errors import VkdiffTypeError


def to_numpy_type(dt):
    """The numpy dtype of a data type (ti.f32 -> np.float32, ti.u1 -> np.bool_, ...)."""
    t = T.resolve(dt)
    if t is T.u1:
        return np.bool_
    if not isinstance(t, T.DataType) or t.np is None:
        raise VkdiffTypeError(f'{dt!r} has no numpy counterpart')
    return t.np.type


def to_pytorch_type(dt):
    """The torch dtype of a data type (ti.f32 -> torch.float32, ...); u16/u32/u64 need torch 2.3."""
    import torch  # deferred: torch is optional
    t = T.resolve(dt)
    if t is T.u1:
        return torch.bool
    name = {'f16': 'float16', 'f32': 'float32', 'f64': 'float64', 'i8': 'int8', 'i16': 'int16',
            'i32': 'int32', 'i64': 'int64', 'u8': 'uint8', 'u16': 'uint16', 'u32': 'uint32',
            'u64': 'uint64'}.get(getattr(t, 'name', None))
    if name is None:
        raise VkdiffTypeError(f'{dt!r} has no torch counterpart')
    if not hasattr(torch, name):
        raise VkdiffTypeError(f"PyTorch doesn't support {t.name} data type before version 2.3.0.")
    return getattr(torch, name)


def has_pytorch():
    """Whether torch can be imported."""
    return importlib.util.find_spec('torch') is not None


__all__ = ['to_numpy_type', 'to_pytorch_type', 'has_pytorch']
