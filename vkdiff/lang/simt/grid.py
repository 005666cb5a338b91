"""Face floor: `ti.simt.grid.memfence()`: a device-scope memory barrier (OpMemoryBarrier Device,
acquire-release on storage memory): the invocation's earlier writes to fields are visible
device-wide before its later ones (CUDA's __threadfence()). It waits for nobody."""
from ...frontend.context import emit
from ._common import in_kernel


def memfence():
    in_kernel('ti.simt.grid.memfence')
    emit('device_fence')


__all__ = ['memfence']
