"""API layer (face floor): `ti.algorithms`, as Taichi 1.7.4's package of the same name:
PrefixSumExecutor (scan.py: an inclusive, in-place, device-wide prefix sum) and parallel_sort
(sort.py: Batcher's odd-even merge sort of keys, with optional values). Both are plain vkdiff
kernels launched one pass after another: no pass waits on another workgroup, so they are correct
on devices without forward progress between workgroups (SwiftShader, every real GPU)."""
from .scan import PrefixSumExecutor  # noqa: F401
from .sort import parallel_sort  # noqa: F401

__all__ = ['parallel_sort', 'PrefixSumExecutor']
