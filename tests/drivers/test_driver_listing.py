"""Drivers: `python -m vkdiff doctor` lists every Vulkan driver (the ICD manifests the loader
reads, and the checkout's SwiftShader from tools/setup.sh) with the devices each one shows
(vkdiff/drivers.py); and the `requires` marker (tests/conftest.py, tests/device_requires.py)
skips a test only on a device without the feature it names."""
import json
import os
import subprocess
import sys

import pytest
from device_requires import missing_features

import vkdiff as ti
from vkdiff import doctor, drivers

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _icd(folder, name, lib):
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(json.dumps({'file_format_version': '1.0.0',
                                'ICD': {'library_path': lib, 'api_version': '1.3.0'}}))
    return str(path)


def test_manifests_come_from_the_xdg_folders_in_the_loaders_order(tmp_path):
    env = {'XDG_CONFIG_HOME': str(tmp_path / 'cfg'), 'XDG_CONFIG_DIRS': str(tmp_path / 'xdg'),
           'XDG_DATA_HOME': str(tmp_path / 'home'),
           'XDG_DATA_DIRS': os.pathsep.join([str(tmp_path / 'a'), str(tmp_path / 'b')])}
    b = _icd(tmp_path / 'b' / 'vulkan' / 'icd.d', 'z.json', 'libz.so')
    a2 = _icd(tmp_path / 'a' / 'vulkan' / 'icd.d', 'y.json', 'liby.so')
    a1 = _icd(tmp_path / 'a' / 'vulkan' / 'icd.d', 'x.json', 'libx.so')
    c = _icd(tmp_path / 'cfg' / 'vulkan' / 'icd.d', 'c.json', 'libc.so')
    (tmp_path / 'a' / 'vulkan' / 'icd.d' / 'notes.txt').write_text('not a manifest')
    found, how = drivers.icd_manifests(env)
    mine = [m for m in found if m.startswith(str(tmp_path))]
    assert mine == [c, a1, a2, b]
    assert how == "the loader's search folders"
    extra = _icd(tmp_path / 'extra', 'e.json', 'libe.so')
    found, how = drivers.icd_manifests(dict(env, VK_ADD_DRIVER_FILES=extra))
    assert found[0] == extra and 'VK_ADD_DRIVER_FILES' in how
    assert drivers.manifest_library(extra) == ('libe.so', '1.3.0')


@pytest.mark.parametrize('var', ['VK_ICD_FILENAMES', 'VK_DRIVER_FILES'])
def test_vk_icd_filenames_replaces_the_search(tmp_path, var):
    one = _icd(tmp_path / 'd', 'one.json', 'libone.so')
    two = _icd(tmp_path / 'folder', 'two.json', 'libtwo.so')
    env = {var: os.pathsep.join([one, str(tmp_path / 'folder')]),
           'XDG_DATA_DIRS': str(tmp_path / 'd')}
    assert drivers.icd_manifests(env) == ([one, two], f'{var} (only these)')


def test_a_driver_that_does_not_load_is_reported_not_raised(tmp_path):
    bad = _icd(tmp_path, 'bad.json', str(tmp_path / 'libmissing.so'))
    assert drivers.probe(bad) == []  # the loader skips a library it cannot open: no device


def test_doctor_lists_each_driver_with_its_devices(monkeypatch):
    lines = []
    doctor.check_drivers(lines.append)
    text = '\n'.join(lines)
    assert lines[0].startswith('  Vulkan drivers (')
    # the device in use is listed under the driver that shows it
    assert f': {ti.device_name()}' in text
    sws = drivers.project_swiftshader()
    if sws is not None:  # tools/setup.sh installed it (CI does)
        at = next(i for i, l in enumerate(lines) if l.strip().startswith(sws))
        assert "the project's SwiftShader" in lines[at]
        assert lines[at + 1].strip().startswith('device 0: SwiftShader Device')
    else:
        assert 'no project SwiftShader: tools/setup.sh installs it' in text


def test_doctor_says_a_missing_manifest_is_missing(tmp_path, monkeypatch):
    monkeypatch.setenv('VK_ICD_FILENAMES', str(tmp_path / 'none.json'))
    lines = []
    doctor.check_drivers(lines.append)
    assert f'    {tmp_path / "none.json"}: NOT found' in lines
    assert lines[0].startswith('  Vulkan drivers (1 ICD manifests from VK_ICD_FILENAMES')


class _Node:
    def __init__(self, *marks):
        self.marks = marks

    def iter_markers(self, name):
        return [m for m in self.marks if m.name == name]


def test_missing_features_names_what_the_device_lacks():
    feats = {'float64': False, 'int64': True, 'subgroup_basic': True}
    node = _Node(pytest.mark.requires('int64').mark, pytest.mark.requires('float64').mark)
    assert missing_features(node, feats) == ['float64']
    assert missing_features(node, dict(feats, float64=True)) == []
    assert missing_features(_Node(), feats) == []
    with pytest.raises(ValueError, match=r"requires\('float46'\): not a device feature"):
        missing_features(_Node(pytest.mark.requires('float46').mark), feats)


@pytest.mark.requires('float64')
def test_a_marked_test_runs_only_where_the_feature_is():
    assert ti.device_features()['float64']
    x = ti.field(ti.f64, shape=())
    x[None] = 1 / 3
    assert x[None] == 1 / 3


def test_the_marker_skips_naming_the_feature_and_the_device():
    """The test above, run with float64 turned off: it skips, saying why."""
    env = dict(os.environ, VKDIFF_DISABLE_FEATURES='float64')
    env.pop('PYTEST_ADDOPTS', None)
    here = os.path.relpath(__file__, ROOT)
    r = subprocess.run([sys.executable, '-m', 'pytest', '-rs', '-vv', '-p', 'no:cacheprovider',
                        f'{here}::test_a_marked_test_runs_only_where_the_feature_is'],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout[-2000:]
    assert '1 skipped' in r.stdout
    assert f'needs float64, which this Vulkan device ({ti.device_name()}) lacks' in r.stdout
