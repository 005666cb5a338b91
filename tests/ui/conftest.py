"""Fixtures for the ti.ui (GGUI) tests: an off-screen window and a private Xvfb."""

import pytest

import vkdiff as ti


@pytest.fixture
def window():
    """An off-screen 64 x 48 window (width x height)."""
    w = ti.ui.Window("test", (64, 48), show_window=False)
    yield w
    w.destroy()


@pytest.fixture(scope="module")
def xvfb():
    """A private `Xvfb :N` for real GLFW windows (skips where Xvfb/glfw/PyOpenGL are missing);
    the same set-up as tests/gui/test_gui_window.py's."""
    import os
    import shutil
    import subprocess
    import time
    from vkdiff.gui import window as gui_window
    exe = shutil.which("Xvfb")
    if exe is None:
        pytest.skip("Xvfb is not installed (Debian package 'xvfb')")
    try:
        import glfw  # noqa: F401
        import OpenGL.GL  # noqa: F401
    except Exception as e:  # noqa: BLE001
        pytest.skip(f"glfw / PyOpenGL not usable: {e}")
    n = next(k for k in range(120, 250) if not os.path.exists(f"/tmp/.X11-unix/X{k}")
             and not os.path.exists(f"/tmp/.X{k}-lock"))
    proc = subprocess.Popen([exe, f":{n}", "-screen", "0", "640x480x24", "-noreset", "-nolisten",
                             "tcp"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 15
    while not os.path.exists(f"/tmp/.X11-unix/X{n}"):
        if proc.poll() is not None or time.time() > deadline:
            proc.kill()
            pytest.skip(f"Xvfb :{n} did not start")
        time.sleep(0.05)
    saved = {k: os.environ.get(k) for k in ("DISPLAY", "WAYLAND_DISPLAY", "TI_GUI_SHOW")}
    os.environ["DISPLAY"] = f":{n}"
    os.environ.pop("WAYLAND_DISPLAY", None)
    os.environ.pop("TI_GUI_SHOW", None)
    gui_window.reset()
    try:
        yield n
    finally:
        gui_window.reset()
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
