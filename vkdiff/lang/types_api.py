"""Face floor: the public `ti.types` namespace. vkdiff/types.py holds the dtypes only (the compiler
core imports it); this module is those same objects plus the constructors Taichi programs use to
declare and annotate: `vector`, `matrix`, `struct`, `argpack`, `template`, `ndarray`. vkdiff/__init__.py
exposes it as `vkdiff.types`, so `ti.types.vector(3, ti.f32)`, `ti.types.f32` and
`ti.types.is_integral(...)` all work from user code."""
from .. import types as _dtypes
from .matrix import MatrixType, VectorType
from ..launch.argpack import argpack  # noqa: F401  (ti.types.argpack)
from ..frontend.func import Template
from .ndarray import NdarrayType
from .texture import RWTextureType, TextureType
from ..frontend.struct import struct as _struct
from . import quant  # noqa: F401  (ti.types.quant.int/fixed/float: lang/quant.py)

# every name of vkdiff/types.py (f32, DataType, resolve, primitive_types, is_integral, ...): the
# same objects, so code holding this namespace as `types` sees exactly the dtypes module
globals().update({k: v for k, v in vars(_dtypes).items()
                  if not (k.startswith('__') and k.endswith('__'))})


# ---------------------------------------------------------------- compound types
def vector(n=None, dtype=None):
    """`ti.types.vector(3, ti.f32)`: constructs vectors, makes fields, annotates func arguments
    (not kernel arguments: pass scalars)."""
    return VectorType(n, dtype)


def matrix(n=None, m=None, dtype=None):
    """`ti.types.matrix(2, 3, ti.f32)`: an n x m matrix type (like vector)."""
    return MatrixType(n, m, dtype)


def struct(**members):
    """`ti.types.struct(pos=ti.math.vec2, mass=ti.f32)`: a struct type; call it to make struct
    values, `.field(shape=n)` for a struct field (one field per member)."""
    return _struct(**members)


# ---------------------------------------------------------------- kernel argument annotations
def template():
    """`ti.types.template()`: the same as `ti.template()`."""
    return Template()


def sparse_matrix_builder():
    """`ti.types.sparse_matrix_builder()`: the annotation of a ti.linalg.SparseMatrixBuilder
    kernel argument (compile-time, like template(): `A[i, j] += v` adds into it)."""
    return Template()


def ndarray(dtype=None, ndim=None, **kwargs):
    """`ti.types.ndarray(dtype=None, ndim=None)`: the annotation of an ndarray kernel parameter
    (lang/ndarray.py)."""
    return NdarrayType(dtype, ndim, **kwargs)


def texture(num_dimensions):
    """`ti.types.texture(num_dimensions)`: a sampled texture parameter (lang/texture.py)."""
    return TextureType(num_dimensions)


def rw_texture(num_dimensions, fmt=None, lod=0):
    """`ti.types.rw_texture(num_dimensions, fmt, lod=0)`: a storage texture parameter."""
    return RWTextureType(num_dimensions, lod=lod, fmt=fmt)
