"""Data floor: the program state that `ti.init()` resets (runtime, fields, config, tape), and the
one lock that serialises every entry into it from Python threads (launches, host access to
fields, compilation: the batch and the compiler's caches are not thread-safe on their own)."""
import functools
import os
import threading

from .. import types as T
from . import init_config
from ..errors import RuntimeError_
from ..errors import VkdiffValueError

generation = 0
fields = []
temps = {}   # ir.Buffer -> Storage of the compiler's temporaries (lang.binding)
_runtime = None
config = {'random_seed': 0, 'device': 0, 'debug': False, 'check_out_of_bound': False,
          'disable_features': (), 'print_ir': frozenset(), 'ad_stack_size': 32}
offline = None  # the compiler.CompileOptions of a program set up without a device (init_offline)
tape = None  # the active Tape, if any
# called as launch_watch(kernel, instance, runtime args) before every kernel launch, even where
# `tape` is None (inside grad_replaced functions): a checkpointed block (ad/checkpoint.py) saves
# what the launch is about to overwrite
launch_watch = None
compiled_kernels = 0  # kernel instances compiled since ti.init() (Taichi's get_num_compiled_functions)
kernel_epoch = 0  # bumped when compiled kernels must be rebuilt (a destroyed SNode tree)
fwd = None   # the active FwdMode, if any
# called by reset() (ti.init, ti.reset) and by init() after the new config is set: floors above
# register them (ndarray.py: forget storages of the closed device; profiler.py: forget records)
reset_hooks = []
init_hooks = []
after_init = []  # run at the end of ti.init(), the device open (precision.py's one warning)


lock = threading.RLock()


def synchronized(fn):
    """Run `fn` holding the program lock (re-entrant: a locked call may make others)."""
    acquire, release = lock.acquire, lock.release  # (cheaper than `with lock:`)

    @functools.wraps(fn)
    def locked(*args, **kwargs):
        acquire()
        try:
            return fn(*args, **kwargs)
        finally:
            release()
    return locked


class Root:
    pass


def runtime():
    global _runtime
    if _runtime is None:
        if offline is not None:
            raise RuntimeError_('this program was set up without a device (init_offline): '
                                'kernels compile, but nothing runs on a device')
        # deferred: the runtime (and the native module) loads with the device
        from ..runtime.program import Runtime
        _runtime = Runtime(config['device'], config['disable_features'],
                           config['watchdog'] if 'watchdog' in config else _watchdog({}))
    return _runtime


def bounds_checked():
    """Are indices checked (ti.init(check_out_of_bound=True), which debug=True implies, as
    Taichi's CompileConfig::fit)? Field and ndarray indices in kernels, run-time vector/matrix
    component indices, pow(int, int) exponents; Python-scope negative indices are out of range."""
    return config['check_out_of_bound']


def has_runtime():
    return _runtime is not None


def limits():
    """The device's limits (those of the fixed options without a device)."""
    return offline.limits if offline is not None else runtime().limits


@synchronized
def init(arch=None, device=None, default_fp=None, default_ip=None, random_seed=None, debug=None,
         disable_features=(), print_ir=None, _test_mode=False, **kwargs):
    """Reset everything: fields die, kernels recompile. `arch` is accepted for Taichi
    compatibility; vkdiff has one backend, Vulkan. `print_ir`: pass names (vkdiff.compiler.PASSES,
    a comma-separated string or a list, or 'all') whose output IR is printed to stderr. The other
    options are Taichi's (lang/init_config.py: each also from TI_<NAME>; an unknown one is a
    KeyError). `_test_mode=True` (Taichi's) returns the log_level / gdb_trigger settings and
    opens no device."""
    spec = _configure(device, default_fp, default_ip, random_seed, debug, disable_features,
                      print_ir, _test_mode=_test_mode, **kwargs)
    if _test_mode:
        return spec
    runtime()
    for fn in after_init:
        fn()


@synchronized
def init_offline(options, default_fp=None, default_ip=None, random_seed=None, debug=None,
                 print_ir=None, **kwargs):
    """ti.init without a device: kernels compile against `options` (a compiler.CompileOptions,
    e.g. compiler.lavapipe_like()) and cannot launch; opening the device is an error. The
    device-free compiler tests (tests/compiler) run on it."""
    global offline
    _configure(None, default_fp, default_ip, random_seed, debug, (), print_ir, **kwargs)
    offline = options


def _ad_stack_size(kwargs):
    """Per-iteration storage of loops with run-time trip counts that carry values (the adjoint's
    stack). As Taichi: ad_stack_size=0 (unset) falls back to default_ad_stack_size=32; more
    iterations than that is an AutodiffError after the launch, never a wrong gradient."""
    n = int(kwargs.get('ad_stack_size') or kwargs.get('default_ad_stack_size') or 32)
    if n < 1:
        raise VkdiffValueError(f'ad_stack_size must be a positive number of iterations, got {n}')
    return n


DEFAULT_WATCHDOG = 60.0  # seconds a sync may wait for the device (runtime/program.py)


def _watchdog(kwargs):
    """ti.init(watchdog=seconds), else VKDIFF_WATCHDOG, else DEFAULT_WATCHDOG; 0: no limit."""
    v = kwargs.get('watchdog')
    if v is None:
        v = os.environ.get('VKDIFF_WATCHDOG', '').strip() or DEFAULT_WATCHDOG
    try:
        v = float(v)
    except (TypeError, ValueError):
        v = -1.0
    if not v >= 0:
        raise VkdiffValueError(f'the watchdog is a number of seconds >= 0 (0: no limit), got '
                               f'{kwargs.get("watchdog", os.environ.get("VKDIFF_WATCHDOG"))!r}')
    return v


def _configure(device, default_fp, default_ip, random_seed, debug, disable_features, print_ir,
               _test_mode=False, **kwargs):
    # deferred: the compiler loads on the first compile (or print_ir=)
    from ..compiler import parse_print_ir
    explicit = {k: v for k, v in (('debug', debug), ('random_seed', random_seed)) if v is not None}
    if isinstance(print_ir, bool):
        explicit['print_ir'] = print_ir
    cfg, spec = init_config.resolve(kwargs, explicit)  # (an unknown option fails first)
    printed = parse_print_ir(cfg['print_ir'] if print_ir is None else print_ir)
    stack = _ad_stack_size({**kwargs, 'ad_stack_size': cfg['ad_stack_size']})
    if not _test_mode:
        init_config.set_log_level(spec['log_level'])
    debug = bool(cfg['debug'])
    reset()
    T.Defaults.fp = T.resolve(default_fp) if default_fp is not None else T.f32
    T.Defaults.ip = T.resolve(default_ip) if default_ip is not None else T.i32
    config.update(random_seed=int(cfg['random_seed']), debug=debug,
                  check_out_of_bound=bool(debug or cfg['check_out_of_bound']),
                  disable_features=tuple(disable_features),
                  ad_stack_size=stack, print_ir=printed,
                  kernel_profiler=bool(cfg['kernel_profiler']),
                  fast_math=bool(cfg['fast_math']),
                  device_memory_GB=kwargs.get('device_memory_GB'),
                  watchdog=_watchdog(kwargs), taichi=cfg)
    for hook in init_hooks:  # (profiler: records belong to the program init() replaces)
        hook()
    if device is not None:  # an index or a deviceUUID (runtime/devices.py resolves it)
        if isinstance(device, bool) or not isinstance(device, (int, str)):
            raise VkdiffValueError(f'ti.init(device=...) takes a device index or a device UUID '
                                   f'string, got {device!r}')
        config['device'] = device
    else:  # (not the device of an earlier init: its VKDIFF_DEVICE may be gone)
        config['device'] = os.environ.get('VKDIFF_DEVICE') or 0
    return init_config.SpecialConfig(spec)


@synchronized
def reset():
    global generation, _runtime, tape, fwd, offline, compiled_kernels, launch_watch
    generation += 1
    compiled_kernels = 0
    offline = None
    for f in fields:
        f._storage = None
    fields.clear()
    temps.clear()
    for hook in reset_hooks:  # (ndarray: storages of the device being closed)
        hook()
    tape = fwd = launch_watch = None
    if _runtime is not None:
        rt, _runtime = _runtime, None
        rt.close()
