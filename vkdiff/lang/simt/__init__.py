"""Face floor: `ti.simt`, Taichi 1.7.4's SIMT intrinsics, as modules (`taichi.lang.simt.warp`
imports as one): `subgroup` (Vulkan subgroup operations), `warp` (Taichi's CUDA warp intrinsics
on the device's subgroups), `block` (workgroup shared arrays and barriers), `grid` (a device
memory fence). All compile to SPIR-V group non-uniform instructions (codegen/subgroup.py); each
checks the device's subgroup feature bits where it is used (_common.require)."""
from . import block, grid, subgroup, warp

__all__ = ['warp', 'subgroup', 'block', 'grid']
