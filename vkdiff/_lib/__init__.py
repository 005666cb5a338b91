"""API stage: the few queries of Taichi's native module (`ti._lib.core`) that Taichi programs make,
answered for vkdiff (e.g. `ti._lib.core.get_max_num_indices()`, the most indices of a field).
Submodule `utils`: `taichi._lib.utils.get_os_name`."""
import types as _types

from ..errors import TaichiRuntimeError
from ..lang.field import MAX_NUM_INDICES


def get_max_num_indices():
    """The most dimensions a field may have (12, as in Taichi)."""
    return MAX_NUM_INDICES


def with_vulkan():
    """vkdiff always runs on Vulkan (ggui examples: `ti.vulkan if ti._lib.core.with_vulkan()`)."""
    return True


# `except ti._lib.core.TaichiRuntimeError`: the class Taichi's native module raises;
# GGUI_AVAILABLE: ti.ui is vkdiff's CPU-rasterised GGUI (vkdiff/ui), always there
core = _types.SimpleNamespace(get_max_num_indices=get_max_num_indices,
                              TaichiRuntimeError=TaichiRuntimeError, with_vulkan=with_vulkan,
                              GGUI_AVAILABLE=True)
