"""ti.ui.Window in a real GLFW window under Xvfb: what the window shows is the frame that
get_image_buffer_as_numpy returns off-screen; closing the window ends `running`."""

import warnings

import numpy as np

import vkdiff as ti


def draw(window):
    canvas = window.get_canvas()
    canvas.set_background_color((0.2, 0.3, 0.4))
    rng = np.random.default_rng(3)
    canvas.circles(rng.random((50, 2)).astype(np.float32), radius=0.03,
                   per_vertex_color=rng.random((50, 3)).astype(np.float32))
    canvas.triangles(np.array([[0.1, 0.1], [0.5, 0.1], [0.1, 0.6]], np.float32), color=(1, 0, 0))


def test_window_shows_the_offscreen_frame(xvfb):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a failed window would only warn
        win = ti.ui.Window("ggui test", (96, 64))
    assert win.show_window and win.running
    off = ti.ui.Window("off", (96, 64), show_window=False)
    draw(off)
    expect = np.rint(off.get_image_buffer_as_numpy()[:, :, :3] * 255).astype(np.uint8)
    draw(win)
    win.show()
    shown = win._glfw.read_pixels()  # (h, w, 3), rows top-down
    np.testing.assert_array_equal(shown[::-1].transpose(1, 0, 2), expect)
    assert win.get_events() == []  # nobody typed anything
    win.destroy()
    assert not win.running
