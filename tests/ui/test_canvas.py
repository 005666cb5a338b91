"""ti.ui Canvas: circles, lines, triangles, set_image and background, off-screen, against
coverage computed analytically from Taichi 1.7.4's shaders (a pixel is drawn when its centre is
inside; circle radius is a fraction of the window height; line width likewise).  The same
scenes rendered by Taichi 1.7.4's own GGUI off-screen on lavapipe (arch=ti.vulkan) agreed with
vkdiff pixel for pixel (see the commit message)."""

import numpy as np
import pytest

import vkdiff as ti
W, H = 64, 48


def centres(width, height):
    """Pixel centres (x, y) in pixels, indexed [x, y] like get_image_buffer_as_numpy."""
    return np.meshgrid(np.arange(width) + 0.5, np.arange(height) + 0.5, indexing="ij")


def rgb(img):
    return np.rint(img[:, :, :3] * 255).astype(int)


def test_circles_cover_their_disc_and_nothing_else(window):
    canvas = window.get_canvas()
    canvas.set_background_color((0.1, 0.2, 0.3))
    pos = ti.Vector.field(2, ti.f32, 2)
    pos[0] = [0.25, 0.75]
    pos[1] = [0.7, 0.3]
    col = ti.Vector.field(3, ti.f32, 2)
    col[0] = [1, 0, 0]
    col[1] = [0, 1, 0]
    canvas.circles(pos, radius=0.1, per_vertex_color=col)
    img = window.get_image_buffer_as_numpy()
    assert img.shape == (W, H, 4) and img.dtype == np.float32
    xs, ys = centres(W, H)
    r = 0.1 * H  # pixels
    red = (xs - 0.25 * W) ** 2 + (ys - 0.75 * H) ** 2 < r * r
    green = (xs - 0.7 * W) ** 2 + (ys - 0.3 * H) ** 2 < r * r
    px = rgb(img)
    assert red.sum() == 76
    np.testing.assert_array_equal(px[red], [[255, 0, 0]] * red.sum())
    np.testing.assert_array_equal(px[green], [[0, 255, 0]] * green.sum())
    rest = ~(red | green)
    # background 0.1, 0.2, 0.3 stored as UNORM8, ties to even: 26, 51, 76 (as Taichi's)
    np.testing.assert_array_equal(px[rest], [[26, 51, 76]] * rest.sum())
    np.testing.assert_array_equal(img[:, :, 3], 1.0)


def test_per_vertex_radius_and_later_circles_on_top(window):
    canvas = window.get_canvas()
    c = np.array([[0.5, 0.5], [0.5, 0.5]], np.float32)
    canvas.circles(c, radius=0.0, per_vertex_radius=np.array([0.3, 0.1], np.float32),
                   per_vertex_color=np.array([[1, 1, 1], [0, 0, 1]], np.float32))
    px = rgb(window.get_image_buffer_as_numpy())
    xs, ys = centres(W, H)
    d2 = (xs - 32) ** 2 + (ys - 24) ** 2
    inner = d2 < (0.1 * H) ** 2
    ring = (d2 < (0.3 * H) ** 2) & ~inner
    assert (px[inner] == [0, 0, 255]).all() and (px[ring] == [255, 255, 255]).all()
    assert (px[d2 >= (0.3 * H) ** 2] == 0).all()


def test_lines_are_width_times_height_thick(window):
    canvas = window.get_canvas()
    v = ti.Vector.field(2, ti.f32, 4)
    v.from_numpy(np.array([[0.1, 0.2], [0.9, 0.2], [0.5, 0.1], [0.5, 0.9]], np.float32))
    canvas.lines(v, width=0.05, color=(1, 1, 1))
    on = window.get_image_buffer_as_numpy()[:, :, 0] > 0.5
    xs, ys = centres(W, H)
    half = 0.05 * H / 2  # 1.2 px each side of the segment
    horiz = (xs > 0.1 * W) & (xs < 0.9 * W) & (np.abs(ys - 0.2 * H) < half)
    vert = (ys > 0.1 * H) & (ys < 0.9 * H) & (np.abs(xs - 0.5 * W) < half)
    np.testing.assert_array_equal(on, horiz | vert)
    assert on.sum() == 226  # Taichi 1.7.4's count for this scene


def test_indexed_lines_interpolate_vertex_colours(window):
    canvas = window.get_canvas()
    v = np.array([[0.0, 0.5], [1.0, 0.5]], np.float32)
    canvas.lines(v, width=0.1, indices=np.array([1, 0], np.int32),
                 per_vertex_color=np.array([[1, 0, 0], [0, 0, 1]], np.float32))
    img = window.get_image_buffer_as_numpy()
    row = img[:, 24, :3]
    x = (np.arange(W) + 0.5) / W
    np.testing.assert_allclose(row[:, 0], 1 - x, atol=1.5 / 255)
    np.testing.assert_allclose(row[:, 2], x, atol=1.5 / 255)


def test_triangles_cover_pixel_centres_inside(window):
    canvas = window.get_canvas()
    t = ti.Vector.field(2, ti.f32, 3)
    t.from_numpy(np.array([[0.1, 0.1], [0.9, 0.1], [0.1, 0.9]], np.float32))
    canvas.triangles(t, color=(0, 0, 1))
    on = window.get_image_buffer_as_numpy()[:, :, 2] > 0.5
    xs, ys = centres(W, H)
    inside = (xs > 0.1 * W) & (ys > 0.1 * H) & (xs / W + ys / H < 1.0)
    np.testing.assert_array_equal(on, inside)


def test_set_image_round_trip_and_orientation(window):
    canvas = window.get_canvas()
    img = np.zeros((W, H, 3), np.float32)
    img[:, :, 0] = np.arange(W)[:, None] / W
    img[:, :, 1] = np.arange(H)[None, :] / H
    canvas.set_image(img)
    out = window.get_image_buffer_as_numpy()
    # f32 -> 8 bits truncates (Taichi's copy_image_f32_to_rgba8 casts c * 255 to u32)
    np.testing.assert_array_equal(out[:, :, :3] * 255,
                                  np.floor(np.clip(img, 0, 1) * np.float32(255)))
    u8 = (np.random.RandomState(0).rand(W, H, 4) * 255).astype(np.uint8)
    field = ti.Vector.field(4, ti.u8, (W, H))
    field.from_numpy(u8)
    canvas.set_image(field)
    np.testing.assert_array_equal(np.rint(window.get_image_buffer_as_numpy() * 255), u8)


def test_set_image_grey_and_scaled_bilinear(window):
    canvas = window.get_canvas()
    f = ti.field(ti.f32, (32, 24))  # half the window: sampled bilinearly, clamped at edges
    f.from_numpy((np.arange(32)[:, None] * np.ones(24) / 32).astype(np.float32))
    canvas.set_image(f)
    out = window.get_image_buffer_as_numpy()
    texels = np.floor(np.arange(32) / 32 * np.float32(255))
    u = np.clip((np.arange(W) + 0.5) / 2 - 0.5, 0, 31)
    expect = np.interp(u, np.arange(32), texels)
    np.testing.assert_allclose(out[:, 5, 0] * 255, expect, atol=0.51)
    np.testing.assert_array_equal(out[:, :, 0], out[:, :, 1])  # grey


def test_frame_starts_over_after_readback_and_show(window, tmp_path):
    canvas = window.get_canvas()
    canvas.set_background_color((1, 1, 1))
    canvas.circles(np.array([[0.5, 0.5]], np.float32), radius=0.2, color=(0, 0, 0))
    assert window.get_image_buffer_as_numpy()[32, 24, 0] == 0.0
    # off-screen, reading the frame back starts the next one; the background stays
    assert window.get_image_buffer_as_numpy()[32, 24, 0] == 1.0
    canvas.triangles(np.array([[0, 0], [1, 0], [0, 1]], np.float32), color=(0, 1, 0))
    path = tmp_path / "f.png"
    window.save_image(str(path))
    from vkdiff.gui.png import read_image
    png = read_image(path)  # rows top-down
    assert png.shape == (H, W, 3)
    assert tuple(png[H - 1, 0]) == (0, 255, 0) and tuple(png[0, W - 1]) == (255, 255, 255)


def test_bad_input_raises_vkdiff_errors(window):
    canvas = window.get_canvas()
    with pytest.raises(ti.errors.VkdiffValueError):
        canvas.circles(np.zeros((3, 5), np.float32), radius=0.1)
    with pytest.raises(TypeError):
        canvas.set_image(np.zeros((4, 4, 3), np.int32))
    with pytest.raises(ValueError):
        canvas.triangles(np.zeros((3, 2), np.float32), indices=np.array([0, 1, 7], np.int32))
