"""ti.ui.Window off-screen: events API, frame cap, widgets' values, constants, and the
`ti._lib.core` queries GGUI examples make."""

import subprocess
import sys

import numpy as np
import pytest

import vkdiff as ti


def test_constants_are_taichis():
    assert (ti.ui.PRESS, ti.ui.RELEASE) == ("Press", "Release")
    assert (ti.ui.LMB, ti.ui.RMB, ti.ui.SPACE, ti.ui.SHIFT, ti.ui.ESCAPE) == \
        ("LMB", "RMB", " ", "Shift", "Escape")


def test_events_headless(window):
    assert window.running
    assert window.get_events() == [] and window.get_events(ti.ui.PRESS) == []
    assert window.get_event(ti.ui.PRESS) is False and window.event is None
    assert window.is_pressed(ti.ui.LMB, "w") is False
    assert window.get_cursor_pos() == (0.0, 1.0)
    with pytest.raises(ValueError):
        window.get_events("Motion")


def test_events_queue_and_filters(window):
    # what a GLFW window delivers (vkdiff.gui.window's callbacks)
    window._on_event("Press", "Shift_L", (0.25, 0.5), (0, 0))
    window._on_event("Press", "a", (0.25, 0.5), (0, 0))
    window._on_event("Release", "a", (0.3, 0.5), (0, 0))
    window._on_event("Motion", "Motion", (0.4, 0.6), (0, 0))
    assert window.is_pressed(ti.ui.SHIFT) and not window.is_pressed("a")
    assert window.get_cursor_pos() == (0.4, 0.6)
    assert [e.key for e in window.get_events(ti.ui.RELEASE)] == ["a"]
    assert window.get_event(ti.ui.PRESS) and window.event.key == ti.ui.SHIFT
    assert window.get_event() and window.event.key == "a" and window.event.type == ti.ui.PRESS
    assert not window.get_event()
    window.running = False
    assert not window.running


def test_gui_widgets_return_current_values(window):
    # Taichi 1.7.4 off-screen (uirev misc.py case_gui_widgets): sliders return old_value
    # unclamped, color_edit_3 the float32 values as Python floats
    gui = window.get_gui()
    with gui.sub_window("Options", 0.05, 0.05, 0.5, 0.5) as w:
        w.text("hello")
        assert w.slider_float("x", 0.25, 0.0, 1.0) == 0.25
        assert w.slider_float("x", 2.0, 0.0, 1.0) == 2.0
        assert w.slider_int("n", 3, 0, 10) == 3
        assert w.slider_int("n", 12, 0, 10) == 12
        assert w.checkbox("on", True) is True
        assert w.color_edit_3("c", (0.1, 0.2, 0.3)) == (0.10000000149011612, 0.20000000298023224,
                                                         0.30000001192092896)
        assert w.button("go") is False
    gui.begin("b", 0.6, 0.6, 0.3, 0.3)
    gui.text("x", color=(1, 0, 0))
    gui.end()
    window.get_canvas().set_background_color((0, 0, 0))
    # Taichi's off-screen image holds no ImGui at all: the frame stays black
    assert window.get_image_buffer_as_numpy()[:, :, :3].max() == 0


def test_max_frames_ends_loops(tmp_path):
    prog = tmp_path / "loop.py"
    prog.write_text(
        "import vkdiff as ti\n"
        "w = ti.ui.Window('x', (16, 16), show_window=False)\n"
        "n = 0\n"
        "while w.running:\n"
        "    w.show(); n += 1\n"
        "print('frames', n)\n"
        "while True:\n"
        "    w.show()\n")
    out = subprocess.run([sys.executable, str(prog)], capture_output=True, text=True,
                         env={**__import__("os").environ, "VKDIFF_GUI_MAX_FRAMES": "3"},
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "frames 3" in out.stdout


def test_lib_core_queries_of_ggui_examples():
    # ggui_examples/*.py: `arch = ti.vulkan if ti._lib.core.with_vulkan() else ti.cuda`
    assert ti._lib.core.with_vulkan() is True
    assert ti._lib.core.GGUI_AVAILABLE is True


def test_bad_window_res():
    with pytest.raises(ValueError):
        ti.ui.Window("x", (0, 10), show_window=False)


def test_depth_into_field(window):
    d = ti.field(ti.f32, (64, 48))
    window.get_depth_buffer(d)
    assert np.all(d.to_numpy() == 0.0)
