"""Clear errors, not crashes, when the machine lacks what vkdiff needs."""
import os
import subprocess
import sys
import textwrap


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


def test_no_spirv_tools_is_a_clear_error(tmp_path):
    script = tmp_path / 'k.py'
    script.write_text(textwrap.dedent('''
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
        except ti.VkdiffError as e:
            print('ERROR:', e)
    '''))
    # a PATH without spirv-as (python itself is called by absolute path), and no disk cache
    env = dict(os.environ, PATH=str(tmp_path), VKDIFF_CACHE='0')
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert 'ERROR:' in out.stdout and 'spirv-tools' in out.stdout
