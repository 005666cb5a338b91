"""Tool (not a compiler stage; used by `python -m vkdiff doctor`): the Vulkan drivers on this
machine. A driver is an ICD manifest, a json file naming the driver's library; the Vulkan loader
finds them the way `icd_manifests` does (VK_DRIVER_FILES / VK_ICD_FILENAMES replace the search,
VK_ADD_DRIVER_FILES adds to it, else the XDG config and data folders' vulkan/icd.d). `probe`
lists one driver's devices in a child process that sees only that driver, so a driver that
hangs or crashes cannot take the caller with it. `project_swiftshader` is the SwiftShader that
tools/setup.sh puts in the checkout (.drivers/swiftshader/)."""
import json
import os
import subprocess
import sys

SWIFTSHADER_ICD = os.path.join('.drivers', 'swiftshader', 'vk_swiftshader_icd.json')


def _split(value):
    return [p for p in (value or '').split(os.pathsep) if p]


def _manifests_in(path):
    """The json files `path` names: itself when a file, its *.json (sorted) when a folder."""
    if os.path.isdir(path):
        return [os.path.join(path, f) for f in sorted(os.listdir(path)) if f.endswith('.json')]
    return [path]


def search_folders(env=None):
    """The folders the loader searches for ICD manifests on Linux and macOS, in its order."""
    env = os.environ if env is None else env
    home = os.path.expanduser('~')
    config_home = env.get('XDG_CONFIG_HOME') or os.path.join(home, '.config')
    config_dirs = _split(env.get('XDG_CONFIG_DIRS')) or ['/etc/xdg']
    data_home = env.get('XDG_DATA_HOME') or os.path.join(home, '.local', 'share')
    data_dirs = _split(env.get('XDG_DATA_DIRS')) or ['/usr/local/share', '/usr/share']
    roots = [config_home] + config_dirs + ['/etc', '/usr/local/etc'] + [data_home] + data_dirs
    if sys.platform == 'darwin':
        roots += ['/opt/homebrew/share', '/opt/homebrew/etc']
    seen, out = set(), []
    for r in roots:
        d = os.path.join(r, 'vulkan', 'icd.d')
        if d not in seen:
            seen.add(d)
            out.append(d)
    return out


def icd_manifests(env=None):
    """(the ICD manifest paths the loader would read, how it chose them)."""
    env = os.environ if env is None else env
    for var in ('VK_DRIVER_FILES', 'VK_ICD_FILENAMES'):
        if env.get(var):
            return [m for p in _split(env[var]) for m in _manifests_in(p)], f'{var} (only these)'
    found = [m for d in search_folders(env) if os.path.isdir(d) for m in _manifests_in(d)]
    added = [m for p in _split(env.get('VK_ADD_DRIVER_FILES')) for m in _manifests_in(p)]
    how = 'the loader\'s search folders' + (' and VK_ADD_DRIVER_FILES' if added else '')
    return added + found, how


def project_swiftshader(root=None):
    """The checkout's SwiftShader ICD manifest (tools/setup.sh puts it there), or None."""
    if root is None:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(root, SWIFTSHADER_ICD)
    return path if os.path.isfile(path) else None


def manifest_library(path):
    """(library_path, api_version) the manifest names; raises OSError/ValueError if unreadable."""
    with open(path) as f:
        icd = json.load(f).get('ICD', {})
    return icd.get('library_path', '?'), icd.get('api_version', '?')


_LIST = ('import json; from vkdiff.runtime import _vkrt; '
         'print(json.dumps(_vkrt.list_devices()))')


def probe(path, timeout=60):
    """Device names that the driver `path` alone shows, or a string saying why there are none."""
    env = {k: v for k, v in os.environ.items()
           if k not in ('VK_DRIVER_FILES', 'VK_ADD_DRIVER_FILES', 'VKDIFF_VALIDATION')}
    env['VK_ICD_FILENAMES'] = os.path.abspath(path)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env['PYTHONPATH'] = os.pathsep.join([root] + _split(env.get('PYTHONPATH')))
    try:
        r = subprocess.run([sys.executable, '-c', _LIST], env=env, capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return f'listing its devices did not finish in {timeout} s'
    if r.returncode != 0:
        lines = (r.stderr.strip() or r.stdout.strip() or f'exit {r.returncode}').splitlines()
        return f'listing its devices failed: {lines[-1]}'
    try:
        return json.loads(r.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return f'listing its devices printed {r.stdout.strip()!r}'
