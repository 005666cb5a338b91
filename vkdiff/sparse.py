"""Face floor: `ti.sparse`, Taichi 1.7.4's helpers for sparse grids: `grid(field_dict, shape)`
makes a struct field placed on a 2-D or 3-D bitmasked node, `usage(x)` is the fraction of
its node's cells that are active (a kernel, an f32 in [0, 1])."""
from . import types as T
from .errors import VkdiffValueError
from .frontend.struct import Struct
from .launch.kernel import kernel, template
from .lang.api import grouped, is_active, static
from .lang.snode import ij, ijk, root

__all__ = ['grid', 'usage']


def grid(field_dict, shape):
    """A struct field of `shape` (2 or 3 axes) with the members of `field_dict`
    (`name: type`), placed on `ti.root.bitmasked(ti.ij or ti.ijk, shape)`."""
    shape = tuple(shape)
    if len(shape) not in (2, 3):
        raise VkdiffValueError(f'ti.sparse.grid: only 2-D and 3-D sparse grids are supported, '
                               f'got shape {shape}')
    x = Struct.field(field_dict)
    root.bitmasked(ij if len(shape) == 2 else ijk, shape).place(x)
    return x


@kernel
def usage(x: template()) -> T.f32:
    """The fraction of the grid's cells that are active."""
    n = 0
    for I in grouped(x.parent()):
        if is_active(x.parent(), I):
            n += 1
    total = 1
    for d in static(x.shape):
        total *= d
    return n / total
