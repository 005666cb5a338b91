"""Data floor: Taichi's `taichi.lang.enums` names (`Layout`, `AutodiffMode`, `SNodeGradType`), the
enumerations Taichi programs compare reflection results with (`x.snode.ptr.get_snode_grad_type()
== SNodeGradType.ADJOINT`)."""
import enum

class Layout:
    """`ti.Layout.AOS` / `ti.Layout.SOA`: the member layout of a struct field (accepted; vkdiff
    stores each member in its own buffer)."""
    AOS = 'aos'
    SOA = 'soa'


class AutodiffMode(enum.Enum):
    """How a kernel is being differentiated (Taichi's names)."""
    NONE = 0
    VALIDATION = 1
    FORWARD = 2
    REVERSE = 3


class SNodeGradType(enum.Enum):
    """What a field's node holds: the values, their adjoints (`x.grad`) or duals (`x.dual`)."""
    PRIMAL = 0
    ADJOINT = 1
    DUAL = 2
    ADJOINT_CHECKBIT = 3


__all__ = ['Layout', 'AutodiffMode', 'SNodeGradType']
