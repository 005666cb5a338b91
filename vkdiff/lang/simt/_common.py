"""Face floor: what the ti.simt modules share: the in-kernel check and the device feature check
(VkPhysicalDeviceSubgroupProperties::supportedOperations, as the runtime reports them)."""
from ...errors import UnsupportedError
from ...frontend import ops
from ...frontend.context import current, error
from .. import state

# Vulkan's names of the subgroup feature bits the runtime reports
_BITS = {'subgroup_basic': 'BASIC', 'subgroup_vote': 'VOTE', 'subgroup_arithmetic': 'ARITHMETIC',
         'subgroup_ballot': 'BALLOT', 'subgroup_shuffle': 'SHUFFLE'}


def in_kernel(what):
    if current() is None:
        raise error(f'{what}() is called inside a kernel', TypeError)


def device():
    """(features, limits, subgroup size) of the device kernels compile for."""
    if state.offline is not None:
        off = state.offline
        return off.features, off.limits, getattr(off, 'subgroup_size', 0) or 0
    rt = state.runtime()
    return rt.features, rt.limits, rt.subgroup_size


def require(what, *features):
    """Raise a clear UnsupportedError when the device lacks a subgroup feature `what` needs."""
    feats = device()[0]
    missing = [f for f in ('subgroup_basic',) + features if not feats.get(f)]
    if missing:
        bits = ', '.join(f'VK_SUBGROUP_FEATURE_{_BITS[f]}_BIT' for f in missing)
        raise error(f'{what} needs subgroup operations this Vulkan device does not offer in '
                    f'compute shaders ({bits} missing from supportedOperations)',
                    UnsupportedError)


def max_subgroup_size():
    """The largest subgroup a shader may run with (maxSubgroupSize, else subgroupSize, else 128,
    SPIR-V's ballot width)."""
    _, limits, size = device()
    return int(limits.get('max_subgroup_size') or size or 128)


def pred(cond):
    """A u1 Value of a predicate (a nonzero number or value is true)."""
    return ops.to_bool(ops.as_value(cond))
