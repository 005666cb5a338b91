"""vkdiff.GUI in a real GLFW/OpenGL window under Xvfb.

The fixture starts its own ``Xvfb :N -noreset`` on a free display number and
kills it afterwards; the tests read the window's framebuffer back and compare
it with the off-screen rendering of the same frame."""

import os
import shutil
import subprocess
import time
import warnings

import numpy as np
import pytest

from vkdiff.gui import GUI
from vkdiff.gui import window as gui_window
from vkdiff.gui.png import read_image as load_rgb

BG = 0x112F41


def rgb(color):
    return np.array([(color >> 16) & 255, (color >> 8) & 255, color & 255], dtype=np.uint8)


def _free_display():
    for n in range(91, 200):
        if not os.path.exists(f"/tmp/.X11-unix/X{n}") and not os.path.exists(f"/tmp/.X{n}-lock"):
            return n
    raise RuntimeError("no free X display number in 91..199")


@pytest.fixture(scope="module")
def xvfb():
    exe = shutil.which("Xvfb")
    if exe is None:
        pytest.skip("Xvfb is not installed (Debian package 'xvfb'): no X server for window tests")
    try:
        import glfw  # noqa: F401
        import OpenGL.GL  # noqa: F401
    except Exception as e:
        pytest.skip(f"glfw / PyOpenGL not usable: {e}")
    n = _free_display()
    proc = subprocess.Popen([exe, f":{n}", "-screen", "0", "1024x768x24", "-noreset", "-nolisten", "tcp"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 15
    while not os.path.exists(f"/tmp/.X11-unix/X{n}"):
        if proc.poll() is not None or time.time() > deadline:
            proc.kill()
            pytest.skip(f"Xvfb :{n} did not start")
        time.sleep(0.05)
    saved = {k: os.environ.get(k) for k in ("DISPLAY", "WAYLAND_DISPLAY")}
    os.environ["DISPLAY"] = f":{n}"
    os.environ.pop("WAYLAND_DISPLAY", None)
    gui_window.reset()  # let GLFW (re)initialise against this display
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


@pytest.fixture
def window_gui(xvfb):
    guis = []

    def make(res=(160, 120), **kw):
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # a failed window would only warn
            gui = GUI("vkdiff window test", res=res, background_color=BG, **kw)
        assert gui.show_gui, "expected a real window under Xvfb"
        guis.append(gui)
        return gui

    yield make
    for g in guis:
        g.close()


def draw_scene(gui, seed):
    rng = np.random.default_rng(seed)
    w, h = gui.res
    img = np.zeros((w, h, 3), np.float32)
    img[: w // 3] = (0.2, 0.0, 0.1)
    img[:, : h // 4] += (0.0, 0.3, 0.0)
    gui.set_image(img)
    gui.circles(rng.random((300, 2)), radius=rng.uniform(1, 6, 300),
                color=rng.integers(0, 0xFFFFFF, 300))
    gui.circle((0.25, 0.75), color=0xFF0000, radius=9)
    gui.lines(rng.random((20, 2)), rng.random((20, 2)), radius=1.5, color=0xFFFF00)
    gui.triangle((0.6, 0.1), (0.9, 0.2), (0.7, 0.4), color=0x00FFFF)
    gui.rect((0.05, 0.3), (0.3, 0.05), radius=1, color=0xFFFFFF)
    gui.text("vkdiff 42", (0.05, 0.95), font_size=16, color=0xFFFFFF)


def test_window_pixels_equal_headless_png(window_gui, tmp_path):
    gui = window_gui()
    draw_scene(gui, 7)
    gui.show()
    shown = gui._read_window_pixels()

    off = GUI("headless twin", res=gui.res, background_color=BG, show_gui=False)
    draw_scene(off, 7)
    off.show(str(tmp_path / "frame.png"))
    expect = load_rgb(tmp_path / "frame.png")

    assert shown.shape == expect.shape == (120, 160, 3)
    assert (shown == expect).all(), f"{(shown != expect).any(-1).sum()} pixels differ"
    # bottom-left origin in the window too: the red circle is upper-left
    assert (shown[120 - 1 - 90, 40] == rgb(0xFF0000)).all()


def test_window_next_frame_after_clear(window_gui):
    gui = window_gui(res=(64, 48))
    gui.circle((0.5, 0.5), color=0xFF0000, radius=10)
    gui.show()
    gui.circle((0.1, 0.1), color=0x00FF00, radius=2)
    expect = gui.canvas.rgb_top_down()
    gui.show()
    shown = gui._read_window_pixels()
    assert (shown == expect).all()
    assert (shown[24, 32] == rgb(BG)).all() and (shown[47 - 5, 6] == rgb(0x00FF00)).all()
    assert gui.frame == 2


def test_escape_stops_running(window_gui):
    import glfw
    gui = window_gui(res=64)
    gui.show()
    assert gui.running
    gui._window._key(gui._window._win, glfw.KEY_A, 0, glfw.PRESS, 0)
    assert gui.is_pressed("a") and gui.running
    gui._window._key(gui._window._win, glfw.KEY_ESCAPE, 0, glfw.PRESS, 0)
    assert not gui.running
    keys = [(e.type, e.key) for e in gui.get_events()]
    assert (GUI.PRESS, "a") in keys and (GUI.PRESS, GUI.ESCAPE) in keys


def test_window_close_stops_running(window_gui):
    import glfw
    gui = window_gui(res=64)
    gui.show()
    glfw.set_window_should_close(gui._window._win, True)  # as the close button does
    assert not gui.running
    assert gui.get_event(GUI.PRESS) and gui.event.key == GUI.EXIT
    gui.show()  # presenting after close is harmless

    gui2 = window_gui(res=64)
    gui2._window._closing(gui2._window._win)  # the GLFW close callback
    assert not gui2.running and gui2.get_event(GUI.EXIT)


def test_mouse_events_and_cursor(window_gui):
    import glfw
    gui = window_gui(res=(200, 100))
    gui.show()
    win = gui._window._win
    gui._window._motion(win, 50.0, 25.0)
    assert gui.get_event(GUI.MOTION) and np.allclose(gui.event.pos, (0.25, 0.75))
    gui._window._button(win, glfw.MOUSE_BUTTON_LEFT, glfw.PRESS, 0)
    assert gui.is_pressed(GUI.LMB)
    gui._window._button(win, glfw.MOUSE_BUTTON_RIGHT, glfw.RELEASE, 0)
    gui._window._scroll(win, 0.0, 1.0)
    got = [(e.type, e.key) for e in gui.get_events()]
    assert got == [(GUI.PRESS, GUI.LMB), (GUI.RELEASE, GUI.RMB), (GUI.MOTION, GUI.WHEEL)]
    glfw.set_cursor_pos(win, 150.0, 20.0)  # warp the X pointer into the window
    assert np.allclose(gui.get_cursor_pos(), (0.75, 0.8))


def test_fps_limit_paces_frames(window_gui):
    gui = window_gui(res=64, fps_limit=30)
    gui.show()
    t = time.perf_counter()
    for _ in range(9):
        gui.show()
    assert time.perf_counter() - t >= 9 / 30 * 0.9
    gui.fps_limit = None
    t = time.perf_counter()
    for _ in range(9):
        gui.show()
    assert time.perf_counter() - t < 9 / 30 * 0.9


def test_two_windows_at_once(window_gui):
    a, b = window_gui(res=(40, 30)), window_gui(res=(50, 20))
    a.circle((0.5, 0.5), color=0xFF0000, radius=5)
    b.circle((0.5, 0.5), color=0x0000FF, radius=5)
    ea, eb = a.canvas.rgb_top_down(), b.canvas.rgb_top_down()
    a.show()
    b.show()
    assert (a._read_window_pixels() == ea).all() and (b._read_window_pixels() == eb).all()


def test_dropping_the_gui_closes_its_window(xvfb):
    import gc
    gui = GUI("dropped", res=32)
    assert gui.show_gui
    live = gui_window.Window.live
    del gui
    gc.collect()
    assert gui_window.Window.live == live - 1


def test_frame_is_on_the_x_screen(window_gui):
    """What the X server displays (screen grab) contains the frame exactly."""
    try:
        from PIL import ImageGrab, features
        if not features.check("xcb"):
            raise ImportError("pillow built without XCB")
    except ImportError as e:
        pytest.skip(f"no X screen grab: {e}")
    gui = window_gui(res=(120, 90))
    draw_scene(gui, 11)
    expect = gui.canvas.rgb_top_down()
    gui.show()
    deadline = time.time() + 5
    while True:
        gui._window.poll()
        screen = np.asarray(ImageGrab.grab(xdisplay=os.environ["DISPLAY"]).convert("RGB"))
        x, y = gui._window.position()
        on_screen = screen[y:y + 90, x:x + 120]
        if on_screen.shape == expect.shape and (on_screen == expect).all():
            break
        assert time.time() < deadline, "the window never showed the frame"
        time.sleep(0.05)
