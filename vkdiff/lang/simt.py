"""`taichi.lang.simt` (the module Taichi programs import `subgroup` from): see vkdiff/simt.py."""
from ..simt import subgroup  # noqa: F401
