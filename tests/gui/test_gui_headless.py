"""vkdiff.GUI rendered off-screen: PNG output checked pixel by pixel.

File rows are top-down, so frame pixel (x, y) (y up, Taichi's convention)
is file pixel [h - 1 - y, x]."""

import sys
import time
import warnings

import numpy as np
import pytest

from vkdiff.gui import GUI, font, write_image
from vkdiff.gui import widgets
from vkdiff.gui import window as gui_window
from vkdiff.gui.png import read_image as load_rgb

BG = 0x112F41


def rgb(color):
    return np.array([(color >> 16) & 255, (color >> 8) & 255, color & 255], dtype=np.uint8)


def make(res=(128, 96), **kw):
    kw.setdefault("show_gui", False)
    return GUI("test", res=res, background_color=kw.pop("background_color", BG), **kw)


def at(img, x, y):
    """File pixel of frame pixel (x, y), y counted from the bottom."""
    return img[img.shape[0] - 1 - y, x]


def frame_dist(shape, cx, cy):
    """Distance of every frame pixel (i, j) to (cx, cy), in file layout."""
    h, w = shape[:2]
    j, i = np.mgrid[h - 1:-1:-1, 0:w]
    return np.hypot(i - cx, j - cy)


def check_coverage(img, dist, radius, color, bg=BG):
    """Full colour where dist <= r - 1, background where dist >= r, and a
    blend of the two in between (Taichi's anti-aliased coverage)."""
    full, none = dist <= radius - 1, dist >= radius
    assert none.any() and (full.any() or radius < 1.5)
    assert (img[full] == rgb(color)).all()
    assert (img[none] == rgb(bg)).all()
    ring = ~full & ~none
    lo = np.minimum(rgb(color), rgb(bg)).astype(int)
    hi = np.maximum(rgb(color), rgb(bg)).astype(int)
    assert ((img[ring] >= lo) & (img[ring] <= hi)).all()


def test_background_and_size(png):
    img = png(make(res=(64, 48)))
    assert img.shape == (48, 64, 3)
    assert (img == rgb(BG)).all()
    img = png(make(res=32, background_color=0xABCDEF))
    assert img.shape == (32, 32, 3) and (img == rgb(0xABCDEF)).all()


def test_circle_position_bottom_left_origin(png):
    gui = make()
    gui.circle((0.25, 0.75), color=0xFF0000, radius=6)
    img = png(gui)
    # Centre (0.25 * 128, 0.75 * 96) = (32, 72): file row 95 - 72 = 23.
    assert (img[23, 32] == rgb(0xFF0000)).all()
    assert (at(img, 32, 72) == rgb(0xFF0000)).all()
    rows, cols = np.nonzero((img != rgb(BG)).any(-1))
    assert rows.max() < 48 and cols.max() < 64, "circle must be in the upper-left quadrant"
    assert rows.min() == 23 - 5 and rows.max() == 23 + 5 and cols.min() == 32 - 5


def test_circle_radius_exact_coverage(png):
    gui = make()
    cx, cy, r = 0.5 * 128 + 0.3, 0.5 * 96 - 0.2, 10.0
    gui.circles(np.array([[cx / 128, cy / 96]]), radius=r, color=0xFFFF00)
    img = png(gui)
    d = frame_dist(img.shape, cx, cy)
    check_coverage(img, d, r, 0xFFFF00)
    # pixel at distance r-1 coloured, r+1 background, along both axes
    gui.circle((0.5, 0.5), color=0xFFFFFF, radius=r)
    img = png(gui)
    for dx, dy in ((9, 0), (-9, 0), (0, 9), (0, -9)):
        assert (at(img, 64 + dx, 48 + dy) == 255).all()
    for dx, dy in ((11, 0), (-11, 0), (0, 11), (0, -11), (8, 8)):
        assert (at(img, 64 + dx, 48 + dy) == rgb(BG)).all()


def naive_circles(w, h, centres, radii, colors, bg):
    """Taichi's per-pixel circle loop, one circle after another."""
    img = np.empty((h, w, 3), np.float64)
    img[:] = rgb(bg)
    for (cx, cy), r, c in zip(centres, radii, colors):
        for i in range(max(0, int(np.ceil(cx - r))), min(w - 1, int(np.floor(cx + r))) + 1):
            for j in range(max(0, int(np.ceil(cy - r))), min(h - 1, int(np.floor(cy + r))) + 1):
                a = np.clip(r - np.hypot(i - cx, j - cy), 0, 1)
                img[j, i] = img[j, i] * (1 - a) + rgb(c) * a
    return np.round(img[::-1]).astype(int)


def test_circles_match_sequential_reference(png):
    rng = np.random.default_rng(3)
    centres = np.array([(x, y) for x in range(8, 128, 20) for y in range(8, 96, 20)], float)
    centres += rng.uniform(-2, 2, centres.shape)
    radii = rng.uniform(0.5, 7.5, len(centres))
    colors = rng.integers(0, 0xFFFFFF, len(centres))
    gui = make()
    gui.circles(centres / (128, 96), radius=radii, color=colors)
    img = png(gui).astype(int)
    ref = naive_circles(128, 96, centres, radii, colors, BG)
    assert np.abs(img - ref).max() <= 1


def test_overlapping_rims_combine_like_sequential_drawing(png):
    # One colour, heavily overlapping small circles: blending rims one after
    # another equals blending once with coverage 1 - prod(1 - alpha).
    rng = np.random.default_rng(5)
    centres = rng.uniform(30, 60, (300, 2))
    radii = rng.uniform(0.7, 2.5, 300)
    gui = make()
    gui.circles(centres / (128, 96), radius=radii, color=0xFFFFFF)
    img = png(gui).astype(int)
    ref = naive_circles(128, 96, centres, radii, [0xFFFFFF] * 300, BG)
    assert np.abs(img - ref).max() <= 3  # rounding only (alpha is quantised to 1/256)


def test_palette_and_per_circle_arrays(png):
    gui = make()
    pos = np.array([[0.2, 0.5], [0.5, 0.5], [0.8, 0.5]])
    gui.circles(pos, radius=5, palette=[0xFF0000, 0x00FF00, 0x0000FF], palette_indices=[2, 0, 1])
    img = png(gui)
    for (x, y), c in zip(pos, (0x0000FF, 0xFF0000, 0x00FF00)):
        assert (at(img, int(x * 128), int(y * 96)) == rgb(c)).all()
    gui.circles(pos, radius=np.array([2.0, 4.0, 8.0]), color=np.array([0x102030, 0x405060, 0x708090]))
    img = png(gui)
    for (x, y), r, c in zip(pos, (2, 4, 8), (0x102030, 0x405060, 0x708090)):
        px, py = int(x * 128), int(y * 96)
        assert (at(img, px + r - 1, py) == rgb(c)).all()
        assert (at(img, px + r + 1, py) == rgb(BG)).all()
    with pytest.raises(ValueError):
        gui.circles(pos, palette=[0xFF0000], palette_indices=[0, 1, 0])


def test_draw_order_across_radius_classes(png):
    gui = make()
    gui.circles(np.array([[0.3, 0.5], [0.3, 0.5]]), radius=np.array([10.0, 3.0]),
                color=np.array([0xFF0000, 0x00FF00]))
    gui.circles(np.array([[0.7, 0.5], [0.7, 0.5]]), radius=np.array([3.0, 10.0]),
                color=np.array([0xFF0000, 0x00FF00]))
    img = png(gui)
    assert (at(img, int(0.3 * 128), 48) == rgb(0x00FF00)).all()   # small drawn last
    assert (at(img, int(0.3 * 128) + 6, 48) == rgb(0xFF0000)).all()
    assert (at(img, int(0.7 * 128), 48) == rgb(0x00FF00)).all()   # big drawn last


def test_big_and_offscreen_circles(png):
    gui = make()
    gui.circle((0.5, 0.5), color=0x808080, radius=1e5)
    gui.circle((0.5, 0.5), color=0xFF0000, radius=3)
    gui.circles(np.array([[np.nan, 0.5], [5.0, 5.0], [-0.01, 0.5]]), radius=2, color=0x00FF00)
    img = png(gui)
    assert (at(img, 0, 0) == rgb(0x808080)).all() and (at(img, 127, 95) == rgb(0x808080)).all()
    assert (at(img, 64, 48) == rgb(0xFF0000)).all()
    assert (img == rgb(0x00FF00)).all(-1).sum() == 0
    assert (at(img, 0, 48) != rgb(0x808080)).any()  # the circle just off the left edge shows


def segment_dist(shape, a, b):
    """Distance of every pixel centre to segment a-b (pixel space), file layout."""
    h, w = shape[:2]
    j, i = np.mgrid[h - 1:-1:-1, 0:w]
    p = np.stack([i + 0.5, j + 0.5], -1) - a
    d = np.asarray(b, float) - a
    t = np.clip((p @ d) / (d @ d), 0, 1) if d @ d > 0 else np.zeros(p.shape[:2])
    return np.linalg.norm(p - t[..., None] * d, axis=-1)


def test_lines(png):
    gui = make(res=100)
    gui.line((0.1, 0.5), (0.9, 0.5), radius=2, color=0xFFFFFF)
    img = png(gui)
    # Row centres y+0.5 at distance 0.5 (rows 49, 50): full; 1.5: half; 2.5: none.
    for y in (49, 50):
        assert (at(img, 50, y) == 255).all()
    for y in (48, 51):
        assert (at(img, 50, y) != 255).any() and (at(img, 50, y) != rgb(BG)).any()
    for y in (47, 52):
        assert (at(img, 50, y) == rgb(BG)).all()
    assert (at(img, 5, 50) == rgb(BG)).all() and (at(img, 95, 50) == rgb(BG)).all()
    begin = np.array([[0.1, 0.1], [0.2, 0.9], [0.5, 0.5]])
    end = np.array([[0.9, 0.3], [0.25, 0.1], [0.5, 0.5]])
    for radius in (1.0, 2.5, 4.0):
        gui.lines(begin, end, radius=radius, color=0xFF8000)
        img = png(gui)
        d = np.min([segment_dist(img.shape, a * 100, b * 100) for a, b in zip(begin, end)], 0)
        check_coverage(img, d, radius, 0xFF8000)


def test_single_shapes_take_any_two_element_point(png):
    """Taichi's line/circle/rect/triangle/arrow read a point as p[0], p[1]: a (2, 1) column (as
    DiffTaichi's rigid_body.py passes, rot_matrix @ [[dx], [dy]]) or a (1, 2) row draws the same
    as a tuple."""
    ref = make(res=100)
    ref.line((0.1, 0.5), (0.9, 0.5), radius=2, color=0xFFFFFF)
    ref.circle((0.3, 0.7), color=0xFF0000, radius=5)
    ref.rect((0.2, 0.9), (0.4, 0.8), radius=1, color=0x00FF00)
    ref.triangle((0.7, 0.1), (0.95, 0.1), (0.7, 0.4), color=0xFF00FF)
    ref.arrow((0.5, 0.2), (0.2, 0.0), radius=1, color=0x0000FF)
    want = png(ref)
    col = lambda x, y: np.array([[x], [y]])
    row = lambda x, y: np.array([[x, y]])
    gui = make(res=100)
    gui.line(col(0.1, 0.5), row(0.9, 0.5), radius=2, color=0xFFFFFF)
    gui.circle(col(0.3, 0.7), color=0xFF0000, radius=5)
    gui.rect(col(0.2, 0.9), col(0.4, 0.8), radius=1, color=0x00FF00)
    gui.triangle(col(0.7, 0.1), row(0.95, 0.1), col(0.7, 0.4), color=0xFF00FF)
    gui.arrow(col(0.5, 0.2), col(0.2, 0.0), radius=1, color=0x0000FF)
    got = png(gui)
    assert (want != rgb(BG)).any(-1).sum() > 500
    np.testing.assert_array_equal(got, want)
    with pytest.raises(ValueError, match="position"):
        gui.line(np.zeros(3), (0.5, 0.5))


def test_lines_per_line_colors_and_offscreen(png):
    gui = make(res=100)
    gui.lines(np.array([[0.0, 0.2], [0.0, 0.8], [-1e30, 0.5], [np.nan, 0]]),
              np.array([[1.0, 0.2], [1.0, 0.8], [1e30, 0.5], [0, 0]]),
              radius=np.array([2.0, 2.0, 1.5, 1.0]), color=np.array([0xFF0000, 0x00FF00, 0x0000FF, 0]))
    img = png(gui)
    assert (at(img, 50, 20) == rgb(0xFF0000)).all()
    assert (at(img, 50, 80) == rgb(0x00FF00)).all()
    assert (at(img, 3, 50) != rgb(BG)).any()


def test_rect_and_triangle(png):
    gui = make(res=100)
    gui.rect((0.2, 0.8), (0.6, 0.3), radius=1.5, color=0x00FF00)
    gui.triangle((0.7, 0.1), (0.95, 0.1), (0.7, 0.4), color=0xFF00FF)
    img = png(gui)
    green = (img == rgb(0x00FF00)).all(-1)
    assert green[100 - 1 - 80, 40] and green[100 - 1 - 30, 40]   # top and bottom sides
    assert green[100 - 1 - 50, 20] and green[100 - 1 - 50, 60]   # left and right sides
    assert not green[100 - 1 - 50, 40]                            # hollow
    magenta = (img == rgb(0xFF00FF)).all(-1)
    assert magenta[99 - 15, 75] and not magenta[99 - 35, 90] and not magenta[99 - 5, 80]
    # Pixel centres inside the triangle are filled, and nothing else.
    j, i = np.mgrid[99:-1:-1, 0:100] + 0.5
    inside = (i >= 70) & (j >= 10) & ((i - 70) / 25 + (j - 10) / 30 <= 1)
    assert (magenta == inside).mean() > 0.998 and (magenta & ~inside).sum() <= 3


def test_set_image_orientation(png):
    w, h = 4, 3
    img = np.zeros((w, h, 3), np.uint8)
    img[0, h - 1] = (255, 0, 0)     # top-left on screen
    img[w - 1, 0] = (0, 255, 0)     # bottom-right on screen
    img[1, 0] = (0, 0, 255)         # bottom row, second column
    gui = make(res=(w, h))
    gui.set_image(img)
    out = png(gui)
    assert (out[0, 0] == (255, 0, 0)).all()
    assert (out[h - 1, w - 1] == (0, 255, 0)).all()
    assert (out[h - 1, 1] == (0, 0, 255)).all()
    assert (out[1, 1] == 0).all()
    # float image, grayscale, RG and RGBA variants
    ramp = np.arange(w * h, dtype=np.float64).reshape(w, h) * 20 / 255
    gui.set_image(ramp)
    out = png(gui)
    for x in range(w):
        for y in range(h):
            assert (out[h - 1 - y, x] == round(ramp[x, y] * 255)).all()
    gui.set_image(np.stack([ramp, 1 - ramp], -1).astype(np.float32))
    out = png(gui)
    assert (out[h - 1, 0] == (0, 255, 0)).all() and (out[0, w - 1] == (220, 35, 0)).all()
    rgba = np.zeros((w, h, 4), np.float32)
    rgba[..., 2], rgba[..., 3] = 1.0, 0.0
    gui.set_image(rgba)
    assert (png(gui) == (0, 0, 255)).all()
    with pytest.raises(ValueError):
        gui.set_image(np.zeros((h, w, 3)))


def test_set_image_then_draw(png):
    gui = make(res=(64, 32))
    gui.set_image(np.full((64, 32, 3), 0.5))
    gui.circle((0.5, 0.5), color=0xFF0000, radius=4)
    img = png(gui)
    assert (img[0, 0] == 128).all() and (at(img, 32, 16) == rgb(0xFF0000)).all()


def test_show_clears_frame_and_counts(png, tmp_path):
    gui = make()
    gui.circle((0.5, 0.5), color=0xFF0000, radius=20)
    gui.text("x", (0.1, 0.9))
    assert gui.frame == 0
    first = png(gui)
    assert (first != rgb(BG)).any()
    assert gui.frame == 1
    assert (png(gui) == rgb(BG)).all()
    gui.show()  # without a file
    assert gui.frame == 3
    assert np.allclose(gui.get_image()[..., :3], rgb(BG) / 255.0)


def test_get_image_layout():
    gui = make()
    gui.circle((0.25, 0.75), color=0xFF8000, radius=3)
    img = gui.get_image()
    assert img.shape == (128, 96, 4) and img.dtype == np.float32
    assert np.allclose(img[32, 72], (1.0, 128 / 255, 0.0, 1.0))


@pytest.mark.parametrize("pillow", [True, False])
def test_text(png, monkeypatch, pillow):
    monkeypatch.setattr(font, "use_pillow", pillow)
    gui = make(res=(200, 100))
    gui.text("Hello gy", (0.1, 0.9), font_size=20, color=0xFFFFFF)
    img = png(gui)
    drawn = (img != rgb(BG)).any(-1)
    rows, cols = np.nonzero(drawn)
    # Top-left corner at (20, 90) -> file row 9; text extends right and down
    # (the font's internal leading may leave a few empty rows at the top).
    assert rows.min() >= 9 and cols.min() >= 20
    assert rows.min() <= 16 and cols.min() <= 24
    assert 12 <= rows.max() - rows.min() <= 26, "about font_size pixels tall"
    assert 50 <= cols.max() - cols.min() <= 120
    assert (img[drawn] >= rgb(BG)).all()        # blended towards white
    assert (img == 255).all(-1).sum() >= 20     # solid strokes present
    gui.text("Hello gy", (0.1, 0.9), font_size=40, color=0xFF0000)
    big = (png(gui) != rgb(BG)).any(-1)
    assert np.ptp(np.nonzero(big)[0]) > 1.6 * (rows.max() - rows.min())


def test_text_clipped_at_edges(png):
    gui = make(res=(50, 20))
    gui.text("clipped text goes on", (0.8, 1.0), font_size=30)
    gui.text("left", (-0.5, 0.1), font_size=15)
    img = png(gui)
    assert img.shape == (20, 50, 3)


def test_events_headless():
    gui = make()
    assert gui.running and not gui.show_gui
    assert gui.get_event() is False and gui.get_event(GUI.PRESS) is False
    assert list(gui.get_events()) == []
    assert not gui.is_pressed(GUI.LMB, "a")
    assert gui.get_cursor_pos() == (0.0, 0.0)
    gui.running = False
    assert not gui.running
    gui.running = True
    gui.close()
    assert not gui.running


def test_event_queue_filters_and_key_state():
    gui = make()
    push = gui._push_event
    push(GUI.PRESS, "Shift_L", (0.1, 0.2), (0, 0))
    push(GUI.PRESS, "a", (0.1, 0.2), (0, 0))
    push(GUI.MOTION, GUI.MOVE, (0.3, 0.4), (0, 0))
    push(GUI.RELEASE, "a", (0.3, 0.4), (0, 0))
    assert gui.is_pressed(GUI.SHIFT) and not gui.is_pressed("a")
    e = gui.get_event(GUI.RELEASE)
    assert e and gui.event is e and e.key == "a" and e.type == GUI.RELEASE
    assert e.pos == (0.3, 0.4) and GUI.SHIFT in e.modifier
    assert gui.get_event() is False  # the rest were consumed while searching
    push(GUI.PRESS, GUI.LMB, (0.5, 0.5), (0, 0))
    push(GUI.PRESS, GUI.ESCAPE, (0.5, 0.5), (0, 0))
    assert [e.key for e in gui.get_events((GUI.PRESS, GUI.ESCAPE))] == [GUI.ESCAPE]
    assert not gui.running  # Escape stops the GUI, as closing the window does
    assert gui.get_cursor_pos() == (0.5, 0.5)


def test_constants_and_fps_limit():
    assert (GUI.ESCAPE, GUI.SPACE, GUI.LMB, GUI.RMB, GUI.EXIT) == ("Escape", " ", "LMB", "RMB", "WMClose")
    assert (GUI.UP, GUI.DOWN, GUI.LEFT, GUI.RIGHT, GUI.SHIFT) == ("Up", "Down", "Left", "Right", "Shift")
    assert len({GUI.PRESS, GUI.RELEASE, GUI.MOTION}) == 3
    gui = make(fps_limit=30)
    assert gui.fps_limit == 30
    gui.fps_limit = None
    assert gui.fps_limit is None
    gui.fps_limit = 10
    t = time.perf_counter()
    for _ in range(5):
        gui.show()
    assert time.perf_counter() - t < 0.3, "headless frames are not throttled"


def test_widgets(png):
    gui = make(res=(300, 200))
    speed = gui.slider("speed", 0, 10, 1)
    lab = gui.label("count")
    ev = gui.button("Go")
    assert speed.value == 0 and ev == "WidgetButton_Go"
    speed.value, lab.value = 4, 7
    img = png(gui)
    assert (img[10, 250] == rgb(0xAAAAAA)).all()
    # clicking the button (third widget row) emits its event
    x0, y0, x1, y1 = widgets._rect_px(gui, 2)
    pos = ((x0 + x1) / 2 / 300, (y0 + y1) / 2 / 200)
    gui._push_event(GUI.PRESS, GUI.LMB, pos, (0, 0))
    gui._push_event(GUI.RELEASE, GUI.LMB, pos, (0, 0))
    assert any(e.key == "WidgetButton_Go" for e in gui.get_events(GUI.PRESS))
    x0, y0, x1, y1 = widgets._rect_px(gui, 0)
    gui._push_event(GUI.PRESS, GUI.LMB, ((x1 - 8) / 300, (y0 + 5) / 200), (0, 0))
    assert speed.value == 10


def test_png_writer_without_pillow(tmp_path, monkeypatch):
    gui = make(res=(20, 10))
    gui.circle((0.5, 0.5), color=0x123456, radius=3)
    expect = gui.canvas.rgb_top_down()
    monkeypatch.setitem(sys.modules, "PIL", None)
    write_image(tmp_path / "f.png", expect)
    monkeypatch.delitem(sys.modules, "PIL")
    assert (load_rgb(tmp_path / "f.png") == expect).all()
    from vkdiff.gui.png import read_png
    assert (read_png(tmp_path / "f.png") == expect).all()


def test_no_display_warns_once_then_renders_offscreen(png, monkeypatch):
    gui_window.reset()
    if gui_window._initialised:
        pytest.skip("a GLFW window is open in this process")
    for var in ("DISPLAY", "WAYLAND_DISPLAY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setattr("vkdiff.gui.gui._warned_headless", False)
    with pytest.warns(RuntimeWarning, match="cannot open a window"):
        gui = GUI("nodisplay", res=(40, 30), background_color=BG)
    assert not gui.show_gui and gui.running
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        GUI("again", res=(40, 30))
    gui.circle((0.5, 0.5), color=0xFF0000, radius=3)
    img = png(gui)
    assert (at(img, 20, 15) == rgb(0xFF0000)).all()


def test_ti_gui_show_env(monkeypatch):
    monkeypatch.setenv("TI_GUI_SHOW", "0")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        gui = GUI(res=16)
    assert not gui.show_gui


def test_many_circles_and_field_inputs(png):
    class Field:  # anything with to_numpy(), like a vkdiff / Taichi field
        def __init__(self, a):
            self.a = a

        def to_numpy(self):
            return self.a

    rng = np.random.default_rng(0)
    pos = rng.random((10000, 2)).astype(np.float32)
    gui = make(res=800)
    t = time.perf_counter()
    gui.circles(Field(pos), radius=3, color=0xED553B)
    elapsed = time.perf_counter() - t
    img = png(gui)
    assert 0.1 < (img == rgb(0xED553B)).all(-1).mean() < 0.3      # disc interiors
    assert 0.25 < (img != rgb(BG)).any(-1).mean() < 0.6           # interiors + rims
    assert elapsed < 2.0


def test_max_frames_env_ends_running_loops(monkeypatch):
    """VKDIFF_GUI_MAX_FRAMES=N: `running` turns False after the N-th show(); a show() past it
    ends the program (SystemExit(0)), for loops that never read `running`."""
    monkeypatch.setenv("VKDIFF_GUI_MAX_FRAMES", "3")
    gui = make()
    n = 0
    while gui.running and n < 10:
        n += 1
        gui.show()
    assert n == 3 and gui.frame == 3
    gui2 = make()
    with pytest.raises(SystemExit) as e:
        for _ in range(100):
            gui2.show()
    assert e.value.code == 0 and gui2.frame == 3
    monkeypatch.setenv("VKDIFF_GUI_MAX_FRAMES", "x")
    with pytest.raises(ValueError, match="VKDIFF_GUI_MAX_FRAMES"):
        make()
    monkeypatch.delenv("VKDIFF_GUI_MAX_FRAMES")
    gui3 = make()
    for _ in range(5):
        gui3.show()
    assert gui3.running and gui3.frame == 5
