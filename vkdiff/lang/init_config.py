"""Data floor: the options `ti.init()` accepts and what `ti.lang.impl.current_cfg()` reads back,
as Taichi 1.7.4 takes them (python/taichi/lang/misc.py): each of Taichi's CompileConfig fields
comes from the ti.init argument, else the environment variable TI_<NAME> ('0'/'1' for a bool),
else Taichi's default; an unknown argument is a KeyError. vkdiff acts on debug,
check_out_of_bound, fast_math, kernel_profiler, print_ir, random_seed, ad_stack_size,
device_memory_GB and log_level; the others (Taichi's LLVM and IR-pass switches: verbose,
flatten_if, print_kernel_llvm_ir, offline_cache, ...) are accepted and read back, and change
nothing here. Also the log level of `ti.set_logging_level` / `ti._logging`."""
import os

# Taichi 1.7.4's CompileConfig fields and their defaults (arch and the default types aside;
# cpu_max_num_threads, offline_cache_file_path and num_compile_threads are Taichi's host-derived
# values, here fixed)
TAICHI_DEFAULTS = {
    'ad_stack_size': 0, 'advanced_optimization': True, 'allow_nv_shader_extension': True,
    'auto_mesh_local_default_occupacy': 4, 'cache_loop_invariant_global_vars': True,
    'cfg_optimization': True, 'check_out_of_bound': False, 'cpu_block_dim_adaptive': True,
    'cpu_max_num_threads': os.cpu_count() or 1, 'cuda_stack_limit': 0, 'debug': False,
    'default_cpu_block_dim': 32, 'default_gpu_block_dim': 128, 'demote_dense_struct_fors': True,
    'demote_no_access_mesh_fors': True, 'detect_read_only': True, 'device_memory_GB': 1.0,
    'device_memory_fraction': 0.0, 'experimental_auto_mesh_local': False, 'fast_math': True,
    'flatten_if': False, 'force_scalarize_matrix': False, 'gpu_max_reg': 0,
    'half2_vectorization': False, 'kernel_profiler': False, 'lower_access': True,
    'make_block_local': True, 'make_cpu_multithreading_loop': True,
    'make_mesh_block_local': True, 'make_thread_local': True, 'max_block_dim': 1024,
    'mesh_localize_all_attr_mappings': False, 'mesh_localize_from_end_mapping': False,
    'mesh_localize_to_end_mapping': True, 'move_loop_invariant_outside_if': False,
    'num_compile_threads': 4, 'offline_cache': True, 'offline_cache_cleaning_factor': 0.25,
    'offline_cache_cleaning_policy': 'lru', 'offline_cache_file_path': '',
    'offline_cache_max_size_of_files': 104857600, 'opt_level': 1,
    'optimize_mesh_reordered_mapping': True, 'print_accessor_ir': False, 'print_ir': False,
    'print_ir_dbg_info': True, 'print_kernel_amdgcn': False, 'print_kernel_asm': False,
    'print_kernel_llvm_ir': False, 'print_kernel_llvm_ir_optimized': False,
    'print_preprocessed_ir': False, 'print_struct_llvm_ir': False,
    'quant_opt_atomic_demotion': True, 'quant_opt_store_fusion': True, 'random_seed': 0,
    'real_matrix_scalarize': True, 'saturating_grid_dim': 0,
    'simplify_after_lower_access': True, 'simplify_before_lower_access': True,
    'timeline': False, 'use_llvm': True, 'verbose': True, 'verbose_kernel_launches': False,
    'vk_api_version': ''}
# Taichi's _SpecialConfig: what `ti.init(_test_mode=True)` returns
SPECIAL_DEFAULTS = {'log_level': 'info', 'gdb_trigger': False, 'short_circuit_operators': True,
                    'print_full_traceback': False, 'unrolling_limit': 32}
# ti.init's own parameters (Taichi's and vkdiff's) beside the two tables
OWN = frozenset(('arch', 'device', 'default_fp', 'default_ip', 'disable_features', 'watchdog',
                 'default_ad_stack_size', 'require_version', 'enable_fallback', '_test_mode'))


class SpecialConfig:
    """Taichi's _SpecialConfig: log_level, gdb_trigger, ... (returned by ti.init(_test_mode=True))."""

    def __init__(self, values):
        self.__dict__.update(values)

    def __repr__(self):
        return f'SpecialConfig({self.__dict__})'


def _from_env(key, default):
    raw = os.environ.get('TI_' + key.upper(), '')
    if not raw:
        return default
    if isinstance(default, bool):
        return bool(int(raw))
    return type(default)(raw)


def resolve(kwargs, explicit):
    """(Taichi config values, special values) of a ti.init call: `kwargs` the keyword arguments
    beside ti.init's named parameters, `explicit` those named parameters the caller gave (debug,
    print_ir, random_seed) -- each overrides TI_<NAME>. An unknown name is a KeyError, as in
    Taichi."""
    unknown = sorted(k for k in kwargs if k not in TAICHI_DEFAULTS and k not in SPECIAL_DEFAULTS
                     and k not in OWN)
    if unknown:
        raise KeyError(f'Unrecognized keyword argument(s) for ti.init: {", ".join(unknown)}')
    given = {**kwargs, **explicit}
    cfg = {k: given[k] if k in given else _from_env(k, d) for k, d in TAICHI_DEFAULTS.items()}
    spec = {k: given[k] if k in given else _from_env(k, d) for k, d in SPECIAL_DEFAULTS.items()}
    if isinstance(spec['log_level'], str):
        spec['log_level'] = spec['log_level'].lower()
    return cfg, spec


# ---------------------------------------------------------------- the log level
LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'critical']
log_level = ['info']  # (a list: set in place by set_log_level)


def set_log_level(level):
    if level not in LEVELS:
        raise ValueError(f'unknown log level {level!r}; use one of {", ".join(LEVELS)}')
    log_level[0] = level


def log_effective(level):
    """Whether messages of `level` are shown at the current level."""
    return LEVELS.index(level) >= LEVELS.index(log_level[0])
