"""Build stage: vkdiff's PEP 517 build backend, scikit-build-core with one change for editable
installs (`pip install -e .`).

Wheels and sdists are scikit-build-core's own. An editable install is scikit-build-core's build
(the native module compiles in build/<tag>/ and, for editable builds, CMakeLists.txt writes it
into vkdiff/runtime/ in the checkout), but the installed wheel is reduced to a plain `.pth` line
naming the checkout, like setuptools' editable installs: scikit-build-core's import redirector
sits at the front of sys.meta_path and so would override PYTHONPATH, which breaks working on
several checkouts (git worktrees) with one virtual environment. Run `pip install -e .` again (or
`bash tools/setup.sh`) after changing the C++ code.
"""
import base64
import hashlib
import os
import zipfile

from scikit_build_core import build as _skb
from scikit_build_core.build import (  # noqa: F401  (the rest of the PEP 517/660 interface)
    build_sdist,
    build_wheel,
    get_requires_for_build_editable,
    get_requires_for_build_sdist,
    get_requires_for_build_wheel,
    prepare_metadata_for_build_editable,
    prepare_metadata_for_build_wheel,
)

SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()
    return f'{name},sha256={digest},{len(data)}'


def path_only_editable(wheel_path, root):
    """Rewrites an editable wheel to hold its .dist-info and one `<name>.pth` naming `root`."""
    with zipfile.ZipFile(wheel_path) as z:
        entries = {i.filename: z.read(i) for i in z.infolist() if not i.is_dir()}
    dist_info = next(n.split('/')[0] for n in entries if n.split('/')[0].endswith('.dist-info'))
    record = f'{dist_info}/RECORD'
    kept = {n: d for n, d in entries.items() if n.startswith(dist_info + '/') and n != record}
    name = dist_info.split('-')[0]
    kept[f'_{name}_editable.pth'] = (root + '\n').encode()
    lines = [_record_line(n, d) for n, d in kept.items()] + [f'{record},,']
    kept[record] = ('\n'.join(lines) + '\n').encode()
    tmp = wheel_path + '.tmp'
    with zipfile.ZipFile(tmp, 'w', zipfile.ZIP_DEFLATED) as z:
        for n, d in kept.items():
            z.writestr(n, d)
    os.replace(tmp, wheel_path)


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    name = _skb.build_editable(wheel_directory, config_settings, metadata_directory)
    path_only_editable(os.path.join(wheel_directory, name), SOURCE_ROOT)
    return name
