"""API stage: the read-only queries of Taichi's `ti.lang.impl` that Taichi programs make about the
program `ti.init()` set up: `impl.get_runtime().default_fp` / `.default_ip` and
`impl.current_cfg()` (arch, debug, default types). Nothing here changes state."""
from .. import types as T
from . import state


class _Config:
    """Taichi's CompileConfig, as far as vkdiff has its settings (read at each access)."""
    arch = 'vulkan'
    advanced_optimization = True
    fast_math = True

    @property
    def debug(self):
        return state.config['debug']

    @property
    def print_ir(self):
        return bool(state.config['print_ir'])

    @property
    def default_fp(self):
        return T.Defaults.fp

    @property
    def default_ip(self):
        return T.Defaults.ip


class _Runtime:
    """Taichi's PyTaichi runtime object: the default float and int types of the program."""

    @property
    def default_fp(self):
        return T.Defaults.fp

    @property
    def default_ip(self):
        return T.Defaults.ip


def current_cfg():
    """The settings of the current program (`ti.lang.impl.current_cfg().default_fp`)."""
    return _Config()


def get_runtime():
    """The current program (`ti.lang.impl.get_runtime().default_fp`)."""
    return _Runtime()
