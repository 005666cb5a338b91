"""ti.ui rules found by comparing with Taichi 1.7.4's off-screen GGUI (ti.vulkan,
show_window=False, get_image_buffer_as_numpy): the frame order of 3D items, the camera of
the last canvas.scene() call, the default ambient light and the layout of the camera
matrices (taichi/ui/ggui/renderer.cpp scene_v2, taichi/ui/common/scene_base.h)."""

import math

import numpy as np

import vkdiff as ti


def _cam(pos):
    cam = ti.ui.Camera()
    cam.position(*pos)
    cam.lookat(0, 0, 0)
    cam.up(0, 1, 0)
    return cam


def test_particles_called_before_a_circle_are_covered_by_it(window):
    # Taichi queues scene.particles when called; the circle queued later covers it even
    # though canvas.scene() comes last (uirev misc.py case_order_particles_then_circle).
    scene = window.get_scene()
    scene.set_camera(_cam((0, 0, 3)))
    scene.ambient_light((1, 1, 1))
    scene.particles(np.array([[0, 0, 0]], np.float32), 0.3, color=(0, 1, 0))
    canvas = window.get_canvas()
    canvas.circles(np.array([[0.5, 0.5]], np.float32), 0.1, color=(1, 0, 0))
    canvas.scene(scene)
    img = window.get_image_buffer_as_numpy()
    np.testing.assert_allclose(img[32, 24, :3], [1, 0, 0], atol=1 / 255)
    # the particle (radius 0.3 / (tan(22.5 deg) * 3) * 32 = 7.7 px) shows around the circle
    # (0.1 * 48 = 4.8 px)
    np.testing.assert_allclose(img[32 + 6, 24, :3], [0, 1, 0], atol=1 / 255)


def test_all_3d_items_of_a_frame_take_the_last_scene_calls_camera(window):
    # renderer.cpp scene_v2: every 3D renderable queued so far gets the scene UBO of the
    # last call: the first particle is drawn with the second camera (seen from +x, the
    # particle at z=+1 lands left of centre, not at the centre as the first camera sees it)
    scene = window.get_scene()
    canvas = window.get_canvas()
    scene.set_camera(_cam((0, 0, 3)))
    scene.ambient_light((1, 1, 1))
    scene.particles(np.array([[0, 0, 1]], np.float32), 0.1, color=(0, 1, 0))
    canvas.scene(scene)
    scene.set_camera(_cam((3, 0, 0)))
    canvas.scene(scene)
    img = window.get_image_buffer_as_numpy()
    on = np.argwhere(img[:, :, 1] > 0.5)
    t = math.tan(math.radians(45) / 2)
    cx = (-1 / (3 * t * 64 / 48) + 1) / 2 * 64  # view x of (0,0,1) from +x is -1
    np.testing.assert_allclose(on[:, 0].mean() + 0.5, cx, atol=0.5)


def test_3d_items_after_the_last_scene_call_are_not_drawn(window):
    scene = window.get_scene()
    scene.set_camera(_cam((0, 0, 3)))
    window.get_canvas().scene(scene)
    scene.particles(np.array([[0, 0, 0]], np.float32), 0.3, color=(1, 1, 1))
    img = window.get_image_buffer_as_numpy()
    assert img[:, :, :3].max() == 0


def test_default_ambient_light_is_a_tenth(window):
    # scene_base.h: ambient_light_color_ = (0.1, 0.1, 0.1); no point light -> colour * 0.1
    # (Taichi stores 0.1 * 1.0 -> 26/255 in the 8-bit image)
    scene = window.get_scene()
    scene.set_camera(_cam((0, 0, 3)))
    scene.particles(np.array([[0, 0, 0]], np.float32), 0.3, color=(1, 1, 1))
    window.get_canvas().scene(scene)
    img = window.get_image_buffer_as_numpy()
    np.testing.assert_allclose(img[32, 24, :3], [26 / 255] * 3, atol=1e-6)


def test_camera_matrices_in_glm_layout():
    # Taichi returns glm's column-major matrices as numpy rows: translation in the last ROW
    cam = _cam((0, 0, 3))
    v = cam.get_view_matrix()
    np.testing.assert_allclose(v[3], [0, 0, -3, 1], atol=1e-12)
    np.testing.assert_allclose(np.array([1, 2, 0, 1]) @ v, [1, 2, -3, 1], atol=1e-12)
    p = cam.get_projection_matrix(64 / 48)
    assert p[2, 3] == -1 and p[3, 3] == 0


def test_camera_curr_attributes_are_vectors():
    # Taichi 1.7.4 (uirev misc.py case_camera_attrs): curr_position is Vector([1, 2, 3]) as
    # given, with .x, .norm(), .normalized()
    cam = _cam((1, 2, 3))
    p = cam.curr_position
    assert isinstance(p, ti.Vector)
    assert p.x == 1 and p.to_numpy().tolist() == [1, 2, 3]
    assert abs(p.norm() - math.sqrt(14)) < 1e-12
    d = (cam.curr_lookat - cam.curr_position).normalized().to_numpy()
    np.testing.assert_allclose(d, -np.array([1, 2, 3]) / math.sqrt(14), rtol=1e-12)
    assert list(cam.curr_up) == [0, 1, 0]


def test_rgba_per_vertex_colour_blends_over_the_background(window):
    # Taichi 1.7.4 blends with (src alpha, 1 - src alpha) for colour and alpha alike: alpha
    # 0.2 over black stores colour * 0.2 and alpha 0.2 * 0.2 + 0.8 = 0.84 -> 214 (uirev
    # scn2.py case_mesh_pvc_rgba / case_particles_pvc_rgba)
    scene = window.get_scene()
    scene.set_camera(_cam((0, 0, 3)))
    scene.ambient_light((1, 1, 1))
    quad = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, -1, 0], [1, 1, 0], [-1, 1, 0]],
                    np.float32)
    scene.mesh(quad, per_vertex_color=np.tile(np.float32([[1, 0.5, 0.25, 0.2]]), (6, 1)))
    scene.particles(np.array([[0, 0, 0.5]], np.float32), 0.05,
                    per_vertex_color=np.float32([[0, 1, 0, 0.5]]))
    window.get_canvas().scene(scene)
    img = window.get_image_buffer_as_numpy()
    rgba8 = np.rint(img * 255)
    np.testing.assert_array_equal(rgba8[20, 24], [51, 26, 13, 214])  # quad only
    # particle (alpha 0.5) over the quad's stored colour: 0.5 * (0, 1, 0) + 0.5 * quad
    np.testing.assert_allclose(img[32, 24, :3], [0.1, 0.55, 0.025], atol=1.5 / 255)
    assert rgba8[32, 24, 3] == np.rint((0.25 + 0.5 * 0.84) * 255)


def test_save_image_png_is_rgba(window, tmp_path):
    # Taichi 1.7.4 writes the off-screen image as an RGBA PNG (uirev misc.py
    # case_save_image_png: imread gives (64, 48, 4), [255, 128, 0, 255] at the origin)
    from vkdiff.gui.png import read_png
    c = window.get_canvas()
    c.set_background_color((0.2, 0.3, 0.9))
    c.triangles(np.float32([[0, 0], [1, 0], [0, 1]]), color=(1, 0.5, 0))
    path = tmp_path / "f.png"
    window.save_image(str(path))
    px = read_png(str(path))
    assert px.shape == (48, 64, 4)
    np.testing.assert_array_equal(px[-1, 0], [255, 128, 0, 255])  # bottom-left
    np.testing.assert_array_equal(px[0, -1], [51, 76, 230, 255])  # top-right: background


def test_negative_circle_radius_draws_like_positive(window):
    # Taichi 1.7.4 draws circles of radius -r as radius r (uirev prim.py case_circles_rneg)
    c = window.get_canvas()
    c.circles(np.float32([[0.5, 0.5]]), -0.1, color=(1, 1, 1))
    neg = window.get_image_buffer_as_numpy()
    c.circles(np.float32([[0.5, 0.5]]), 0.1, color=(1, 1, 1))
    pos = window.get_image_buffer_as_numpy()
    assert pos[:, :, 0].sum() > 50
    np.testing.assert_array_equal(neg, pos)


def test_canvas_lines_round_vertex_colours_to_8_bits_first():
    # Taichi 1.7.4's canvas.lines stores per-vertex colours as 8-bit before interpolating:
    # its image equals the one of the pre-rounded colours (uirev lq.py case_lines_pvc_q vs
    # prim.py case_lines_pvc)
    def draw(c1):
        w = ti.ui.Window("t", (64, 48), show_window=False)
        w.get_canvas().lines(np.float32([[0.05, 0.5], [0.95, 0.5]]), 0.2,
                             per_vertex_color=np.float32([[0, 0, 0], c1]))
        img = w.get_image_buffer_as_numpy()
        w.destroy()
        return img
    raw = draw([200.4 / 255, 100.4 / 255, 50.4 / 255])
    rounded = draw([200 / 255, 100 / 255, 50 / 255])
    assert raw[:, :, 0].max() > 0.7
    np.testing.assert_array_equal(raw, rounded)


def test_triangle_edges_through_pixel_centres_follow_the_top_left_rule(window):
    # Taichi 1.7.4 on lavapipe (uirev fill.py case_single_tri_edges): centres on the left
    # edge x = 10.5 are drawn, centres on the bottom edge y = 10.5 and on the hypotenuse
    # x + y = 51 are not
    s = np.float32([64, 48])
    window.get_canvas().triangles(np.float32([[10.5, 10.5], [40.5, 10.5], [10.5, 40.5]]) / s,
                                  color=(1, 1, 1))
    on = window.get_image_buffer_as_numpy()[:, :, 0] > 0.5
    assert on[10, 20] and on[10, 11]          # left edge
    assert not on[20, 10] and on[20, 11]      # bottom edge
    assert not on[25, 25] and on[24, 25]      # hypotenuse
    # column ix: centres iy + 0.5 in (10.5, 50 - ix) -> 39 - ix pixels
    assert on.sum() == sum(39 - ix for ix in range(10, 39))
