"""Data floor: PyTorch interop on the host side. torch is optional: nothing here imports it
until a torch tensor is seen or asked for (`to_torch`).

- `is_tensor(x)`: a torch.Tensor, recognised without importing torch.
- `host_array(x, what)`: a numpy view of a CPU tensor's data (detached; no copy when the tensor
  is contiguous), for `from_numpy`/`from_torch`; a tensor on another device is copied to the
  host (`from_torch` is a copy anyway).
- `to_torch(array, device)`: a fresh tensor from a numpy array (a copy, never sharing memory
  with the field's host mirror)."""
import numpy as np

from ..errors import VkdiffTypeError, VkdiffValueError


def is_tensor(x):
    return any(c.__name__ == 'Tensor' and c.__module__ == 'torch' for c in type(x).__mro__)


def _torch():
    try:
        import torch
    except ImportError:
        raise VkdiffValueError('to_torch needs PyTorch (pip install torch, or vkdiff[torch])') \
            from None
    return torch


def host_array(x, what):
    """The data of `x` (a torch tensor) as a numpy array."""
    t = x.detach()
    if t.device.type != 'cpu':
        t = t.cpu()
    if t.dtype.is_complex:
        raise VkdiffTypeError(f'{what}: complex tensors are not supported ({t.dtype})')
    if str(t.dtype) == 'torch.bfloat16':
        t = t.float()
    return t.resolve_conj().resolve_neg().numpy()


def as_numpy(x, what):
    """A numpy array for an array-like input: torch tensors through host_array, others as
    they are (the caller converts and checks them)."""
    return host_array(x, what) if is_tensor(x) else x


def to_torch(a, device=None):
    torch = _torch()
    t = torch.from_numpy(np.ascontiguousarray(a))
    return t.to(device) if device is not None else t


def check_cpu(x, what):
    """A tensor a kernel reads and writes in place must be on the CPU (zero-copy from CUDA
    through Vulkan external memory is not built yet)."""
    if x.device.type != 'cpu':
        raise VkdiffValueError(f'{what}: the tensor is on {x.device}; vkdiff takes CPU tensors '
                               'as kernel arguments (move it with .cpu(), and back afterwards)')
