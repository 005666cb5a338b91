"""ti.ui Scene and Camera: projection of known points, depth order, Lambert shading and the
depth buffer, against values derived from glm's lookAt/perspective and GGUI's shaders (Taichi
1.7.4's own GGUI off-screen gave the same images and depths for these scenes)."""

import math

import numpy as np

import vkdiff as ti

W, H = 64, 48


def _scene(window, pos=(0, 0, 3), fov=45):
    scene = window.get_scene()
    cam = ti.ui.Camera()
    cam.position(*pos)
    cam.lookat(0, 0, 0)
    cam.up(0, 1, 0)
    cam.fov(fov)
    scene.set_camera(cam)
    return scene, cam


def test_camera_matrices_project_a_known_point():
    cam = ti.ui.make_camera()
    cam.position(0, 0, 3)
    cam.lookat(0, 0, 0)
    cam.up(0, 1, 0)
    v = cam.get_view_matrix().T  # Taichi's layout is glm's: transposed
    np.testing.assert_allclose(v @ [1, 2, 0, 1], [1, 2, -3, 1], atol=1e-12)
    p = cam.get_projection_matrix(W / H).T
    t = math.tan(math.radians(45) / 2)
    clip = p @ v @ [0.5, 0.25, 0, 1]
    ndc = clip[:3] / clip[3]
    np.testing.assert_allclose(ndc[:2], [0.5 / (3 * t * W / H), 0.25 / (3 * t)], rtol=1e-12)
    # reversed depth: 1 at z_near = 0.1, 0 at z_far = 1000
    assert abs(ndc[2] - (100 / 3 - 0.1) / 999.9) < 1e-12


def test_particle_lands_on_projected_pixel_with_expected_radius(window):
    scene, cam = _scene(window)
    scene.ambient_light((1, 1, 1))  # unlit colour = the particle's colour
    p = np.array([[0.5, 0.25, 0.0]], np.float32)
    scene.particles(p, radius=0.1, color=(1, 0.5, 0.25))
    window.get_canvas().scene(scene)
    img = window.get_image_buffer_as_numpy()
    on = np.argwhere(img[:, :, 0] > 0)
    t = math.tan(math.radians(45) / 2)
    cx = (0.5 / (3 * t * W / H) + 1) / 2 * W
    cy = (0.25 / (3 * t) + 1) / 2 * H
    np.testing.assert_allclose(on.mean(0) + 0.5, [cx, cy], atol=0.3)
    dist = math.sqrt(0.5 ** 2 + 0.25 ** 2 + 9)
    r_px = 0.1 / (t * dist) * W / 2  # GGUI: radius / (tan(fov/2) * distance) * width / 2
    assert abs(len(on) - math.pi * r_px ** 2) < 2 * math.pi * r_px
    np.testing.assert_allclose(img[on[:, 0], on[:, 1], :3], [[1, 0.5, 0.25]] * len(on),
                               atol=1 / 255)


def test_nearer_particle_hides_farther_one_in_any_order(window):
    for order in ([0, 1], [1, 0]):
        scene, _ = _scene(window)
        scene.ambient_light((1, 1, 1))
        p = np.array([[0, 0, 0], [0, 0, 1]], np.float32)[order]  # z=1 is nearer the camera
        c = np.array([[1, 0, 0], [0, 1, 0]], np.float32)[order]
        scene.particles(p, radius=0.3, per_vertex_color=c)
        window.get_canvas().scene(scene)
        window.get_canvas().set_background_color((0, 0, 0))
        img = window.get_image_buffer_as_numpy()
        assert tuple(img[32, 24, :3]) == (0, 1, 0)


def test_depth_buffer_of_a_quad_and_a_sphere(window):
    scene, _ = _scene(window)
    quad = np.array([[-1, -1, 0.5], [1, -1, 0.5], [1, 1, 0.5], [-1, 1, 0.5]], np.float32)
    scene.mesh(quad, indices=np.array([0, 1, 2, 0, 2, 3], np.int32))
    window.get_canvas().scene(scene)
    depth = window.get_depth_buffer_as_numpy()
    assert depth.shape == (W, H)
    d = 2.5  # distance along the view axis
    np.testing.assert_allclose(depth[32, 24], (100 / d - 0.1) / 999.9, rtol=1e-6)
    assert depth[0, 0] == 0.0  # cleared to the far value
    scene.particles(np.array([[0, 0, 1]], np.float32), radius=0.3, color=(1, 1, 1))
    window.get_canvas().scene(scene)
    depth = window.get_depth_buffer_as_numpy()
    assert depth.max() <= (100 / 1.7 - 0.1) / 999.9 + 1e-7  # the sphere's front at 2 - 0.3
    assert depth.max() > (100 / 1.72 - 0.1) / 999.9


def test_mesh_lambert_shading_and_depth_order(window):
    scene, _ = _scene(window)
    scene.ambient_light((0.2, 0.2, 0.2))
    scene.point_light(pos=(0, 0, 10), color=(0.5, 0.5, 0.5))
    big = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], np.float32)
    small = big * [0.3, 0.3, 1] + [0, 0, 0.5]
    verts = np.concatenate([small, big])  # the nearer quad first: order must not matter
    idx = np.array([0, 1, 2, 0, 2, 3, 4, 5, 6, 4, 6, 7], np.int32)
    cols = np.array([[0, 1, 0]] * 4 + [[1, 0, 0]] * 4, np.float32)
    scene.mesh(verts, indices=idx, per_vertex_color=cols)
    window.get_canvas().scene(scene)
    img = window.get_image_buffer_as_numpy()
    # centre: the green quad at z=0.5, normal +z, light straight above: 0.2 + 0.5 * cos(0)
    np.testing.assert_allclose(img[32, 24, :3], [0, 0.7, 0], atol=1 / 255)
    # a pixel of the red quad: ambient + 0.5 * cos(angle to the light) at that point
    t = math.tan(math.radians(45) / 2)
    x = (np.arange(W) + 0.5) / W * 2 - 1
    wx = x[50] * 3 * t * W / H  # world x on the z=0 plane under pixel column 50
    wy = ((24.5 / H) * 2 - 1) * 3 * t
    cos = 10 / math.sqrt(wx * wx + wy * wy + 100)
    np.testing.assert_allclose(img[50, 24, 0], 0.2 + 0.5 * cos, atol=1.5 / 255)


def test_two_sided_mesh_lit_from_behind(window):
    scene, _ = _scene(window)
    scene.point_light(pos=(0, 0, -10), color=(1, 1, 1))  # behind the quad
    quad = np.array([[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, -1, 0], [1, 1, 0], [-1, 1, 0]],
                    np.float32)
    for two_sided, expect in ((False, 0.05), (True, 0.55)):  # + default ambient 0.1 * 0.5
        scene.set_camera(_scene(window)[1])
        scene.point_light(pos=(0, 0, -10), color=(1, 1, 1))
        scene.mesh(quad, color=(0.5, 0.5, 0.5), two_sided=two_sided)
        window.get_canvas().scene(scene)
        assert abs(window.get_image_buffer_as_numpy()[32, 24, 0] - expect) <= 1 / 255


def test_mesh_instance_moves_copies(window):
    scene, _ = _scene(window, pos=(0, 0, 5))
    scene.ambient_light((1, 1, 1))
    tri = np.array([[-0.2, -0.2, 0], [0.2, -0.2, 0], [0, 0.2, 0]], np.float32)
    m = np.stack([np.eye(4), np.eye(4)]).astype(np.float32)
    m[1, 0, 3] = 1.0  # the second copy one unit to the right
    scene.mesh_instance(tri, color=(1, 1, 1), transforms=m)
    window.get_canvas().scene(scene)
    img = window.get_image_buffer_as_numpy()
    t = math.tan(math.radians(45) / 2)
    x1 = (1.0 / (5 * t * W / H) + 1) / 2 * W
    assert img[32, 24, 0] == 1.0 and img[int(x1), 24, 0] == 1.0
    assert img[int((32 + x1) / 2), 24, 0] == 0.0


def test_scene_lines_width_in_pixels(window):
    scene, _ = _scene(window)
    v = np.array([[-1, 0, 0], [1, 0, 0]], np.float32)
    scene.lines(v, width=4, color=(1, 1, 0))
    window.get_canvas().scene(scene)
    on = window.get_image_buffer_as_numpy()[32, :, 0] > 0
    assert list(np.nonzero(on)[0]) == [22, 23, 24, 25]  # 4 pixels centred on row 24
