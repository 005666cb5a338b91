"""``vkdiff.ui.Camera``: Taichi 1.7.4's GGUI camera (python/taichi/ui/camera.py and
taichi/ui/common/camera.h): position / lookat / up, a perspective (``fov`` degrees, vertical)
or orthogonal projection, and ``track_user_inputs`` (WASDQE moves, the mouse turns).

The matrices are glm's, as GGUI builds them: ``lookAt`` (right-handed) and
``perspective(fov, aspect, z_far, z_near)`` with depth in [0, 1] -- the near and far planes are
passed swapped, so depth is *reversed*: 1 at ``z_near`` (0.1), 0 at ``z_far`` (1000).
Matrices are numpy ``(4, 4)`` arrays acting on column vectors (``M @ [x, y, z, 1]``).
"""

import math
import time

import numpy as np

from ..lang.matrix import Vector

PERSPECTIVE, ORTHOGONAL = 0, 1


class ProjectionMode:
    """Camera projection mode: 0 for perspective and 1 for orthogonal."""
    Perspective = PERSPECTIVE
    Orthogonal = ORTHOGONAL


def _normalized(v):
    return v / np.linalg.norm(v)


def look_at(eye, center, up):
    f = _normalized(np.asarray(center, np.float64) - eye)
    s = _normalized(np.cross(f, up))
    u = np.cross(s, f)
    m = np.eye(4)
    m[0, :3], m[1, :3], m[2, :3] = s, u, -f
    m[0, 3], m[1, 3], m[2, 3] = -s @ eye, -u @ eye, f @ eye
    return m


def perspective(fov_deg, aspect, near, far):
    """glm::perspectiveRH_ZO(fov, aspect, near, far) (GGUI passes near=z_far, far=z_near)."""
    t = math.tan(math.radians(fov_deg) / 2)
    m = np.zeros((4, 4))
    m[0, 0] = 1.0 / (aspect * t)
    m[1, 1] = 1.0 / t
    m[2, 2] = far / (near - far)
    m[2, 3] = -(far * near) / (far - near)
    m[3, 2] = -1.0
    return m


def ortho(left, right, bottom, top, near, far):
    """glm::orthoRH_ZO."""
    m = np.eye(4)
    m[0, 0] = 2.0 / (right - left)
    m[1, 1] = 2.0 / (top - bottom)
    m[2, 2] = -1.0 / (far - near)
    m[0, 3] = -(right + left) / (right - left)
    m[1, 3] = -(top + bottom) / (top - bottom)
    m[2, 3] = -near / (far - near)
    return m


def euler_to_vec(yaw, pitch):
    return np.array([math.sin(yaw) * math.cos(pitch), math.sin(pitch),
                     math.cos(yaw) * math.cos(pitch)])


def vec_to_euler(v):
    v = _normalized(np.asarray(v, np.float64))
    pitch = math.asin(v[1])
    cos_pitch = math.sqrt(max(1 - v[1] * v[1], 0.0))
    return math.atan2(v[0] / cos_pitch, v[2] / cos_pitch), pitch


class Camera:
    """A GGUI camera; set it on a scene with ``scene.set_camera(camera)``."""

    def __init__(self):
        self.position(0.0, 0.0, 0.0)
        self.lookat(0.0, 0.0, 1.0)
        self.up(0.0, 1.0, 0.0)
        self._mode = PERSPECTIVE
        self._fov = 45.0
        self._left, self._right, self._top, self._bottom = -1.0, 1.0, -1.0, 1.0
        self._z_near, self._z_far = 0.1, 1000.0
        self.last_mouse_x = None
        self.last_mouse_y = None
        self.last_time = None

    @staticmethod
    def _vec(x, y, z):
        return np.array([float(x), float(y), float(z)])

    # curr_position / curr_lookat / curr_up: ti.Vector of the values given, as in Taichi
    # (read-only information there too); the matrices use the private float64 copies
    def position(self, x, y, z):
        self._pos = self._vec(x, y, z)
        self.curr_position = Vector([x, y, z])

    def lookat(self, x, y, z):
        self._look = self._vec(x, y, z)
        self.curr_lookat = Vector([x, y, z])

    def up(self, x, y, z):
        self._up = self._vec(x, y, z)
        self.curr_up = Vector([x, y, z])

    def projection_mode(self, mode):
        """0 (or ti.ui.ProjectionMode.Perspective) or 1 (Orthogonal)."""
        mode = int(getattr(mode, "value", mode))
        if mode not in (PERSPECTIVE, ORTHOGONAL):
            raise ValueError(f"invalid camera projection mode {mode}")
        self._mode = mode

    def fov(self, fov):
        self._fov = float(fov)

    def left(self, left):
        self._left = float(left)

    def right(self, right):
        self._right = float(right)

    def top(self, top):
        self._top = float(top)

    def bottom(self, bottom):
        self._bottom = float(bottom)

    def z_near(self, z_near):
        self._z_near = float(z_near)

    def z_far(self, z_far):
        self._z_far = float(z_far)

    @property
    def tan_half_fov(self):
        return math.tan(math.radians(self._fov) / 2)

    def get_view_matrix(self):
        """glm's layout, as Taichi returns it: the transpose of the math matrix (the
        translation in the last row; use ``row_vector @ m``)."""
        return self._view().T.copy()

    def _view(self):
        return look_at(self._pos, self._look, self._up)

    def get_projection_matrix(self, aspect):
        """glm's layout (see get_view_matrix)."""
        return self._projection(aspect).T.copy()

    def _projection(self, aspect):
        if self._mode == PERSPECTIVE:
            return perspective(self._fov, float(aspect), self._z_far, self._z_near)
        return ortho(self._left, self._right, self._top, self._bottom, self._z_far, self._z_near)

    def track_user_inputs(self, window, movement_speed=1.0, yaw_speed=2.0, pitch_speed=2.0,
                          hold_key=None):
        """Move with w/s/a/d/e/q, turn with the mouse (while hold_key is pressed, if given)."""
        front = _normalized(self._look - self._pos)
        left = np.cross(self._up, front)
        up = self._up
        now = time.perf_counter_ns()
        if self.last_time is None:
            self.last_time = now
        elapsed = (now - self.last_time) * 1e-9
        self.last_time = now
        step = movement_speed * elapsed * 60.0
        change = np.zeros(3)
        for key, direction in (("w", front), ("s", -front), ("a", left), ("d", -left),
                               ("e", up), ("q", -up)):
            if window.is_pressed(key):
                change += direction * step
        self.position(*(self._pos + change))
        mouse_x, mouse_y = window.get_cursor_pos()
        if hold_key is None or window.is_pressed(hold_key):
            if self.last_mouse_x is None or self.last_mouse_y is None:
                self.last_mouse_x, self.last_mouse_y = mouse_x, mouse_y
            yaw, pitch = vec_to_euler(front)
            yaw -= (mouse_x - self.last_mouse_x) * yaw_speed * elapsed * 60.0
            pitch += (mouse_y - self.last_mouse_y) * pitch_speed * elapsed * 60.0
            limit = math.pi / 2 * 0.99
            pitch = min(max(pitch, -limit), limit)
            front = euler_to_vec(yaw, pitch)
        self.lookat(*(self._pos + front))
        self.last_mouse_x, self.last_mouse_y = mouse_x, mouse_y
