"""ti.ui frames drawn on the Vulkan device (vkdiff/ui/devdraw.py, devkernels.py) against the
numpy rasteriser (the fallback, whose images match Taichi 1.7.4's GGUI: tests/ui/test_*.py):
the same scenes give the same 8-bit images up to f32-vs-f64 rounding (at most 1/255 on a few
pixels), and fields are read on the device (no to_numpy per frame)."""

import numpy as np
import pytest

import vkdiff as ti
from vkdiff.ui import devdraw

W, H = 64, 48


def _cam(pos=(0.4, 0.8, 2.5), look=(0, 0, 0)):
    cam = ti.ui.Camera()
    cam.position(*pos)
    cam.lookat(*look)
    cam.up(0, 1, 0)
    return cam


def _both(draw, res=(W, H)):
    """(device image, numpy image, device depth, numpy depth) of draw(window)."""
    out = []
    for device in (True, False):
        w = ti.ui.Window("t", res, show_window=False)
        if not device:
            w._frame._dev = None
        else:
            assert w._frame.dev is not None, devdraw.available()
        draw(w)
        img = w._frame.rgba8().astype(int)
        depth = w._frame.depth_image().copy()
        out.append((img, depth))
        w.destroy()
    (a, da), (b, db) = out
    return a, b, da, db


def _close(a, b, max_px=0):
    d = np.abs(a - b)
    assert d.max() <= 1, f"device and numpy images differ by up to {d.max()}/255"
    assert (d > 0).any(axis=-1).sum() <= max_px, f"{(d > 0).any(axis=-1).sum()} pixels differ"


def _scene_particles(n, lights, per_vertex=True, radius=None, seed=0):
    rng = np.random.default_rng(seed)
    pos = (rng.random((n, 3)) - 0.5).astype(np.float32)
    cols = rng.random((n, 3)).astype(np.float32)
    rad = (rng.random(n) * 0.05 + 0.02).astype(np.float32)

    def draw(w):
        s = w.get_scene()
        s.set_camera(_cam())
        s.ambient_light((0.2, 0.3, 0.1))
        for p, c in lights:
            s.point_light(p, c)
        f = ti.Vector.field(3, ti.f32, n)
        f.from_numpy(pos)
        s.particles(f, radius=0.04, per_vertex_color=cols if per_vertex else None,
                    color=(0.9, 0.5, 0.2), per_vertex_radius=rad if radius else None)
        w.get_canvas().scene(s)
    return draw


@pytest.mark.parametrize("lights", [[], [((0.5, 1.5, 1.5), (1, 1, 1))],
                                    [((0, 2, 0), (0.5, 0.2, 0.9)), ((1, 0, 2), (0.4, 0.8, 0.3))]])
def test_particles_match_the_numpy_rasteriser(lights):
    a, b, da, db = _both(_scene_particles(300, lights))
    _close(a, b, max_px=6)
    np.testing.assert_allclose(da, db, rtol=2e-6, atol=1e-9)


def test_particles_per_vertex_radius_and_constant_colour():
    a, b, _, _ = _both(_scene_particles(200, [((0, 2, 2), (1, 1, 1))], per_vertex=False,
                                        radius=True, seed=1))
    _close(a, b, max_px=6)


def test_particles_two_pass_depth_test_matches(monkeypatch):
    # the path of devices without 64-bit atomics (SwiftShader), forced on any device
    monkeypatch.setenv("VKDIFF_UI_DRAW_DEPTH", "i32")
    a, b, da, db = _both(_scene_particles(300, [((0.5, 1.5, 1.5), (1, 1, 1))], seed=2))
    _close(a, b, max_px=6)
    np.testing.assert_allclose(da, db, rtol=2e-6, atol=1e-9)


def _cloth(n=12, normals=False, indexed=True, two_sided=True, offset=0):
    xs, zs = np.meshgrid(np.linspace(-1, 1, n), np.linspace(-1, 1, n), indexing="ij")
    verts = np.stack([xs, 0.2 * np.sin(3 * xs) * np.cos(3 * zs), zs], -1).reshape(-1, 3)
    q = (np.arange(n - 1)[:, None] * n + np.arange(n - 1)[None, :]).reshape(-1)
    idx = np.stack([q, q + n, q + 1, q + 1, q + n, q + n + 1], 1).reshape(-1).astype(np.int32)
    cols = np.random.default_rng(3).random((n * n, 3)).astype(np.float32)

    def draw(w):
        s = w.get_scene()
        s.set_camera(_cam((0.3, 1.6, 2.2)))
        s.point_light((0, 1, 2), (1, 1, 1))
        s.point_light((-1, 0.5, -1), (0.3, 0.2, 0.6))
        s.ambient_light((0.3, 0.3, 0.3))
        vf = ti.Vector.field(3, ti.f32, n * n)
        vf.from_numpy(verts.astype(np.float32))
        nrm = None
        if normals:
            nrm = np.tile(np.float32([[0, 1, 0]]), (n * n, 1))
        if indexed:
            fi = ti.field(ti.i32, idx.size)
            fi.from_numpy(idx)
            s.mesh(vf, indices=fi, normals=nrm, per_vertex_color=cols, two_sided=two_sided,
                   index_offset=offset)
        else:
            s.mesh(verts[idx].astype(np.float32), per_vertex_color=cols[idx],
                   two_sided=two_sided, vertex_offset=offset)
        w.get_canvas().scene(s)
    return draw


@pytest.mark.parametrize("kw", [{}, {"normals": True}, {"two_sided": False},
                                {"indexed": False}, {"offset": 60}, {"indexed": False,
                                                                     "offset": 60}])
def test_mesh_matches_the_numpy_rasteriser(kw):
    a, b, da, db = _both(_cloth(**kw))
    _close(a, b, max_px=8)
    np.testing.assert_allclose(da, db, rtol=2e-6, atol=1e-9)


def test_mesh_instance_matches():
    tri = np.array([[-0.2, -0.2, 0], [0.2, -0.2, 0], [0, 0.2, 0]], np.float32)
    m = np.stack([np.eye(4)] * 3).astype(np.float32)
    m[1, 0, 3] = 0.6
    m[2, 1, 3] = -0.5

    def draw(w):
        s = w.get_scene()
        s.set_camera(_cam((0, 0, 3)))
        s.point_light((0, 0, 3), (1, 1, 1))
        s.mesh_instance(tri, color=(0.9, 0.4, 0.1), transforms=m, instance_offset=1)
        w.get_canvas().scene(s)
    a, b, _, _ = _both(draw)
    _close(a, b, max_px=3)
    assert (a[:, :, 0] > 0).sum() > 20


def test_canvas_circles_and_triangles_in_call_order():
    rng = np.random.default_rng(4)
    c = rng.random((500, 2)).astype(np.float32)
    tv = rng.random((30, 2)).astype(np.float32)
    tc = rng.random((30, 3)).astype(np.float32)
    cc = rng.random((500, 3)).astype(np.float32)

    def draw(w):
        cv = w.get_canvas()
        cv.set_background_color((0.1, 0.2, 0.3))
        cv.triangles(tv, per_vertex_color=tc)
        f = ti.Vector.field(2, ti.f32, 500)
        f.from_numpy(c)
        cv.circles(f, radius=0.02, per_vertex_color=cc)
        cv.triangles(tv[:12], indices=np.int32([0, 1, 2, 3, 4, 5, 9, 10, 11]), color=(1, 0, 1))
    a, b, _, _ = _both(draw)
    _close(a, b, max_px=4)


def test_mixed_device_and_numpy_items_keep_call_order():
    # canvas lines (numpy) between device items: the image moves host <-> device in order
    def draw(w):
        cv = w.get_canvas()
        cv.circles(np.float32([[0.5, 0.5]]), 0.3, color=(1, 0, 0))
        cv.lines(np.float32([[0, 0.5], [1, 0.5]]), 0.1, color=(0, 1, 0))
        cv.circles(np.float32([[0.5, 0.5]]), 0.05, color=(0, 0, 1))
    a, b, _, _ = _both(draw)
    np.testing.assert_array_equal(a, b)
    assert tuple(a[24, 32, :3]) == (0, 0, 255) and tuple(a[24, 10, :3]) == (0, 255, 0)


def test_fields_are_not_read_back_per_frame(monkeypatch):
    w = ti.ui.Window("t", (W, H), show_window=False)
    assert w._frame.dev is not None, devdraw.available()
    pos = ti.Vector.field(3, ti.f32, 50)
    pos.from_numpy(np.random.default_rng(5).random((50, 3)).astype(np.float32) - 0.5)
    col = ti.Vector.field(3, ti.f32, 50)
    col.fill(0.7)
    idx = ti.field(ti.i32, 6)
    idx.from_numpy(np.int32([0, 1, 2, 2, 3, 4]))

    def no_read(self, *a, **k):
        raise AssertionError(f"{self.name} read back by to_numpy")
    from vkdiff.lang.field import Field
    monkeypatch.setattr(Field, "to_numpy", no_read)
    s = w.get_scene()
    s.set_camera(_cam())
    s.particles(pos, 0.05, per_vertex_color=col)
    s.mesh(pos, indices=idx, per_vertex_color=col)
    w.get_canvas().scene(s)
    w.get_canvas().circles(pos, 0.01)
    monkeypatch.undo()
    img = w.get_image_buffer_as_numpy()
    assert (img[:, :, :3] > 0).any()
    w.destroy()


def test_index_out_of_range_in_a_field_draws_nothing_for_that_triangle():
    w = ti.ui.Window("t", (W, H), show_window=False)
    v = np.float32([[0, 0], [1, 0], [0, 1], [1, 1]])
    idx = ti.field(ti.i32, 6)
    idx.from_numpy(np.int32([0, 1, 2, 1, 3, 99]))
    w.get_canvas().triangles(v, indices=idx, color=(1, 1, 1))
    img = w.get_image_buffer_as_numpy()
    assert img[5, 5, 0] == 1.0 and img[60, 40, 0] == 0.0
    w.destroy()


def test_numpy_fallback_is_chosen_by_environment(monkeypatch):
    monkeypatch.setenv("VKDIFF_UI_DRAW", "numpy")
    monkeypatch.setattr(devdraw, "_choice", {})
    ok, why = devdraw.available()
    assert not ok and "VKDIFF_UI_DRAW=numpy" in why
    w = ti.ui.Window("t", (W, H), show_window=False)
    assert w._frame.dev is None
    w.destroy()


@pytest.mark.parametrize("alpha", [1.0, 0.5])
def test_rgba_particles_opaque_on_the_device_translucent_blend(alpha):
    # mpm3d_ggui passes a 4-vector colour field with alpha 1: drawn on the device; alpha < 1
    # blends particle after particle, by the numpy rasteriser from the staged arrays
    rng = np.random.default_rng(6)
    pos = (rng.random((200, 3)) - 0.5).astype(np.float32)
    cols = np.concatenate([rng.random((200, 3)), np.full((200, 1), alpha)], 1).astype(np.float32)

    def draw(w):
        s = w.get_scene()
        s.set_camera(_cam())
        s.point_light((0.5, 1.5, 1.5), (0.5, 0.5, 0.5))
        f = ti.Vector.field(4, ti.f32, 200)
        f.from_numpy(cols)
        s.particles(pos, radius=0.05, per_vertex_color=f)
        w.get_canvas().scene(s)
    a, b, _, _ = _both(draw)
    _close(a, b, max_px=6 if alpha == 1.0 else 0)
    assert (a[:, :, 3] < 255).any() == (alpha < 1)


@pytest.mark.parametrize("kind", ["f32 rgb field", "u8 grey field", "f32 rgba field",
                                  "numpy rgb", "numpy other size", "f32 grey field"])
def test_set_image_matches(kind):
    rng = np.random.default_rng(7)
    if kind == "u8 grey field":
        data = rng.integers(0, 256, (W, H)).astype(np.uint8)
    elif kind == "f32 grey field":
        data = (rng.random((W, H)) * 1.4 - 0.2).astype(np.float32)
    elif kind == "f32 rgba field":
        data = rng.random((W, H, 4)).astype(np.float32)
    elif kind == "numpy other size":
        data = rng.random((20, 30, 3)).astype(np.float32)
    else:
        data = (rng.random((W, H, 3)) * 1.4 - 0.2).astype(np.float32)

    def draw(w):
        img = data
        if "field" in kind:
            dt = ti.u8 if data.dtype == np.uint8 else ti.f32
            img = (ti.field(dt, (W, H)) if data.ndim == 2
                   else ti.Vector.field(data.shape[2], dt, (W, H)))
            img.from_numpy(data)
        w.get_canvas().set_image(img)
        w.get_canvas().circles(np.float32([[0.5, 0.5]]), 0.1, color=(1, 0, 0))
    a, b, _, _ = _both(draw)
    np.testing.assert_array_equal(a, b)


def test_canvas_lines_match():
    rng = np.random.default_rng(8)
    v = rng.random((40, 2)).astype(np.float32)
    c = rng.random((40, 3)).astype(np.float32)

    def draw(w):
        cv = w.get_canvas()
        cv.lines(v, 0.02, per_vertex_color=c)
        f = ti.Vector.field(2, ti.f32, 40)
        f.from_numpy(v[::-1].copy())
        cv.lines(f, 0.05, indices=np.int32([0, 1, 5, 9, 9, 9, 3, 30]), color=(0.3, 0.9, 0.2))
        cv.vector_field(np.stack(np.meshgrid(np.linspace(-1, 1, 12), np.linspace(-1, 1, 9),
                                             indexing="ij"), -1).astype(np.float32),
                        arrow_spacing=3, width=0.004, color=(1, 1, 1))
    a, b, _, _ = _both(draw)
    _close(a, b, max_px=4)
    assert (a[:, :, 0] > 0).sum() > 200


def test_mesh_with_an_index_count_not_a_multiple_of_three_draws_the_whole_triangles():
    """5 indices: the first triangle is drawn, the 2 left over are ignored, by both paths
    (the numpy path raised numpy's 'cannot reshape array of size 5' from gen_normals); the
    image is the one of the 3 indices alone."""
    verts = np.array([[-0.5, -0.5, 0], [0.5, -0.5, 0], [0, 0.5, 0], [0.5, 0.5, 0]], np.float32)

    def draw_with(idx):
        def draw(w):
            s = w.get_scene()
            s.set_camera(_cam((0, 0, 2)))
            s.ambient_light((0.8, 0.8, 0.8))
            vf = ti.Vector.field(3, ti.f32, 4)
            vf.from_numpy(verts)
            fi = ti.field(ti.i32, len(idx))
            fi.from_numpy(np.array(idx, np.int32))
            s.mesh(vf, indices=fi, color=(1.0, 0.2, 0.2))
            w.get_canvas().scene(s)
        return draw

    a5, b5, _, _ = _both(draw_with([0, 1, 2, 1, 3]))
    a3, b3, _, _ = _both(draw_with([0, 1, 2]))
    assert (b3[..., 0] > 128).sum() > 100  # the triangle is drawn
    np.testing.assert_array_equal(b5, b3)
    np.testing.assert_array_equal(a5, a3)
    _close(a5, b5, max_px=8)
