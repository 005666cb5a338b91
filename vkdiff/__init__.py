"""vkdiff: differentiable Taichi-style kernels on any Vulkan device.

The compiler core (ir, optable, passes/, autodiff/, codegen/, runtime/, compiler.py) sits below
the API layer's floors, each importing only downward (tests/compiler/test_import_layers.py):
values (frontend/context.py, ops.py, checks.py, lang/matrix.py) -> data (lang/: fields, SNodes,
ndarrays, state) -> frontend (frontend/: Python AST -> IR, @func, structs) -> launch (launch/:
kernel call and launch) -> face (this file, lang/api.py, math.py, ad/, linalg/, ui/, gui/, ...)."""
from .types import (f32, f64, i32, u32, i64, u64, float32, float64, int32, uint32, int64, uint64,
                    u1, uint1, i8, u8, i16, u16, f16, int8, uint8, int16, uint16, float16,
                    half)
from .errors import (VkdiffError, CompileError, AutodiffError, OutOfMemoryError, LoopLimitError,
                     DynamicPoolError, FieldAliasWarning, WarpWidthWarning, WatchdogTimeout,
                     FieldIndexError, KernelIndexError, KernelZeroDivisionError,
                     KernelValueError)
from .errors import (TaichiCompilationError, TaichiSyntaxError, TaichiNameError, TaichiIndexError,
                     TaichiTypeError, TaichiRuntimeError, TaichiRuntimeTypeError, TaichiAssertionError)
from .lang.state import init, reset
from .lang.field import (field, Field, ScalarField, MatrixField, SNode, axes, i, j, k, l, ij, ik,
                         il, jk, jl, kl, ijk, ijl, ikl, jkl, ijkl)
from .lang.matrix import Matrix, Vector
from .lang.ndarray import ndarray, Ndarray, ScalarNdarray, VectorNdarray, MatrixNdarray
from .lang.texture import Format, Texture
from .frontend.struct import Struct, dataclass
from .frontend.struct_field import StructField
from .launch.argpack import ArgPack
from .launch.kernel import kernel, func, template, Kernel, data_oriented
from .launch import builtin_kernels as _builtin_kernels  # noqa: F401  (registers fill / copy hooks)
from .lang.api import (static, ndrange, grouped, random, loop_config, atomic_add, atomic_sub, atomic_min,
                       atomic_max, atomic_and, atomic_or, atomic_xor, round, atan2, pow, min,
                       max, select, cast, bit_cast, exp2, clamp, sync, device_name, device_features,
                       randn, static_assert, static_print, raw_div, raw_mod, isnan, isinf)
from .lang.api import table_functions as _table_functions
globals().update(_table_functions('ti'))  # ti.sin, ti.sqrt, ti.abs, ...: the op table's exports
from .lang.linalg import polar_decompose, svd, sym_eig
from .lang.api import activate, deactivate, is_active, append, length  # (kernel only)
from .lang.sparse import (rescale_index,
                          no_activate, deactivate_all_snodes)
from .lang.snode_addr import get_addr  # ti.get_addr: addresses in Taichi's SNode layout

vulkan = 'vulkan'
# accepted for Taichi compatibility (ti.init(arch=ti.cuda)): vkdiff has one backend
gpu = cpu = cuda = metal = opengl = gles = dx11 = dx12 = x64 = arm64 = cc = vulkan
from .lang.snode import root


from . import ad
from .lang import simt  # ti.simt: subgroup, warp, block, grid (vkdiff/lang/simt/)
from . import _lib  # ti._lib.core.get_max_num_indices()
from . import examples  # ti.examples.patterns.taichi_logo
from .lang import util as _lang_util  # noqa: F401  taichi.lang.util.to_numpy_type
from . import _logging  # ti._logging: Taichi's logger module (set_logging_level, info, warn, ...)
from .lang import ops as _lang_ops  # noqa: F401  ti.lang.ops
from .lang import impl as _lang_impl  # noqa: F401  ti.lang.impl.get_runtime().default_fp
from . import math
# `ti.types`: the dtypes plus vector/matrix/struct/ndarray/template (replaces the vkdiff.types
# module as the package attribute; CORE modules reading it get the same dtype objects)
from .lang import types_api as types
from .lang.quant import BitpackedFields  # ti.BitpackedFields: quantized members in one word
from .ad import Tape

from .gui import GUI
from . import ui  # ti.ui: GGUI (Window, Canvas, Scene, Camera) on a CPU rasteriser
from . import algorithms  # ti.algorithms: PrefixSumExecutor, parallel_sort (multi-pass kernels)
from . import linalg  # ti.linalg: matrix-free solvers, SparseMatrixBuilder (assembled in kernels), SparseSolver (host)
from . import graph  # ti.graph: GraphBuilder, Graph.run (kernels launched in order)
from . import profiler  # ti.profiler: kernel launch times (host-measured)
from . import sparse  # ti.sparse: grid(), usage() (Taichi's helpers for sparse grids)
from . import tools  # ti.tools: imwrite/imread/imresize/imshow, PLYWriter, VideoManager
from . import precision as _precision  # ti.init() warns where the device's f32 math is loose
from .lang import state as _state
_state.after_init.append(_precision.check_at_init)

__version__ = '0.1.0'

from .lang.compat import *  # noqa: F401,F403  Taichi names listed in vkdiff/lang/compat.py
