"""Face floor: the calls of Taichi's `ti.lang.impl` that Taichi programs make about the program
`ti.init()` set up: `impl.get_runtime().default_fp` / `.default_ip` (and their setters, as
`ti.init(default_fp=...)` without the reset), `get_num_compiled_functions()` (kernel instances
compiled since ti.init) and `impl.current_cfg()` (arch, debug, check_out_of_bound, default types, and
Taichi's other CompileConfig fields)."""
from .. import types as T
from ..errors import VkdiffTypeError
from . import init_config, state


class _DefaultTypes:
    """The program's default float and int types (Taichi's config and runtime both have them)."""

    @property
    def default_fp(self):
        return T.Defaults.fp

    @property
    def default_ip(self):
        return T.Defaults.ip


class _Config(_DefaultTypes):
    """Taichi's CompileConfig, as far as vkdiff has its settings (read at each access)."""
    arch = 'vulkan'

    def __getattr__(self, name):
        """Taichi's other CompileConfig fields, as ti.init / TI_<NAME> set them
        (lang/init_config.py; most change nothing in vkdiff)."""
        cfg = state.config.get('taichi') or init_config.TAICHI_DEFAULTS
        if name in cfg:
            return cfg[name]
        raise AttributeError(f'CompileConfig has no field {name!r}')

    @property
    def fast_math(self):
        return state.config.get('fast_math', True)

    @property
    def debug(self):
        return state.config['debug']

    @property
    def check_out_of_bound(self):
        return state.config['check_out_of_bound']

    @property
    def print_ir(self):
        return bool(state.config['print_ir'])


class _Runtime(_DefaultTypes):
    """Taichi's PyTaichi runtime object: the default float and int types of the program."""

    def set_default_fp(self, dtype):
        """The float type of `float` annotations and literals from now on."""
        dt = T.resolve(dtype)
        if not dt.is_float:
            raise VkdiffTypeError(f'set_default_fp takes a float type, got {dt}')
        T.Defaults.fp = dt

    def set_default_ip(self, dtype):
        """The integer type of `int` annotations and literals from now on."""
        dt = T.resolve(dtype)
        if dt.is_float or dt.bits < 32:
            raise VkdiffTypeError(f'set_default_ip takes i32/i64/u32/u64, got {dt}')
        T.Defaults.ip = dt

    def materialize_root_fb(self, is_first_call):
        """Taichi finalizes ti.root's SNode tree here; vkdiff allocates each field's storage on
        first use, so there is nothing to do."""

    def materialize(self):
        """Taichi finalizes the SNode tree here and checks the placements (fields not placed,
        matrix-field members of different shapes); vkdiff allocates each field's storage on first
        use and checks a placement when it is made (lang/snode.py, lang/member_field.py), so
        there is nothing left to do."""

    def get_num_compiled_functions(self):
        """How many kernel instances (one per kernel and template/argument-type combination,
        Python-scope fills and copies included) were compiled since ti.init()."""
        return state.compiled_kernels


def current_cfg():
    """The settings of the current program (`ti.lang.impl.current_cfg().default_fp`)."""
    return _Config()


def get_runtime():
    """The current program (`ti.lang.impl.get_runtime().default_fp`)."""
    return _Runtime()
