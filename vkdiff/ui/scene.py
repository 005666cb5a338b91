"""``vkdiff.ui.Scene``: the 3D part of a GGUI frame (Taichi 1.7.4's ``SceneV2`` / ``Scene``).

``particles``, ``mesh``, ``mesh_instance`` and ``lines`` read their inputs at once and queue
them into the frame *when called* (a window's scene; GGUI's renderer queue), so 2D items
drawn later in the frame cover them.  ``canvas.scene(scene)`` gives every 3D item queued so far
in the frame the scene's camera, ambient light and point lights at that moment (the last call
wins, as in renderer.cpp ``scene_v2``; 3D items queued after the last call are not drawn) and
forgets the point lights.  The camera and ambient light (default 0.1 grey, scene_base.h) stay.
A deprecated ``ti.ui.Scene()`` not tied to a window queues its items at ``canvas.scene()``.  Rendering:
:mod:`vkdiff.ui.render3d`.  Normals not given are generated as Taichi's ``gen_normals`` does:
the face normal ``(a - b) x (a - c)``, averaged over the faces of a vertex for indexed meshes.
"""

import numpy as np

from . import devdraw, render3d, sources
from .camera import Camera


def gen_normals(pos, idx):
    """Taichi's gen_normals: per-vertex normals of triangles (idx None: consecutive triples)."""
    if idx is not None:  # whole triangles only: indices left over past a multiple of 3 are ignored
        tri = idx[:idx.size - idx.size % 3].reshape(-1, 3)
    else:
        tri = np.arange(pos.shape[0] - pos.shape[0] % 3).reshape(-1, 3)
    a, b, c = pos[tri[:, 0]], pos[tri[:, 1]], pos[tri[:, 2]]
    n = np.cross(a - b, a - c).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        n /= np.linalg.norm(n, axis=1, keepdims=True)
    out = np.zeros((pos.shape[0], 3))
    if idx is None:
        out[tri.reshape(-1)] = np.repeat(n, 3, axis=0)
        return out
    weight = np.zeros(pos.shape[0])
    for k in range(3):
        np.add.at(out, tri[:, k], n)
        np.add.at(weight, tri[:, k], 1.0)
    has = weight > 0
    out[has] /= weight[has, None]
    return out


def _range(n, offset, count):
    count = n - offset if count is None else count
    return int(offset), max(min(int(count), n - int(offset)), 0)


class Scene:
    """A 3D scene: get it with ``window.get_scene()`` (or ``ti.ui.Scene()``, deprecated)."""

    def __init__(self, _frame=None):
        self._frame = _frame
        self._camera = Camera()
        self._ambient = np.full(3, 0.1)
        self._lights = []
        self._items = []

    def set_camera(self, camera):
        if not isinstance(camera, Camera):
            raise sources.VkdiffTypeError(f"set_camera() needs a ti.ui.Camera, got {type(camera)}")
        self._camera = camera

    def point_light(self, pos, color):
        self._lights.append((sources.color3(pos, "pos"), sources.color3(color)))

    def ambient_light(self, color):
        self._ambient = sources.color3(color)

    # ------------------------------------------------------------------ renderables
    def particles(self, centers, radius, color=(0.5, 0.5, 0.5), per_vertex_color=None,
                  per_vertex_radius=None, index_offset=0, index_count=None):
        dev = self._frame.dev if self._frame is not None else None
        if dev is not None:
            n = dev.count(centers, "centers")
            lo, cnt = _range(n, index_offset, index_count)
            if cnt == 0:
                return
            cen = dev.stage_points(centers, 3, lo=lo, count=cnt)
            radii = None
            if per_vertex_radius is not None:
                radii = dev.stage_scalars(per_vertex_radius, cnt, "per_vertex_radius", lo=lo)
            r0 = sources.number(radius, "radius")
            cols = dev.stage_colors(color, per_vertex_color, cnt, lo, rgba=True)
            self._frame.add_3d(None, lambda f, v: devdraw.draw_particles_item(f, v, cen, radii,
                                                                              r0, cols))
            return
        c = sources.points(centers, 3, "centers").astype(np.float64)
        n = c.shape[0]
        cols = sources.vertex_rgba(color, per_vertex_color, n)
        if per_vertex_radius is not None:
            r = sources.scalars(per_vertex_radius, n, "per_vertex_radius").astype(np.float64)
        else:
            r = np.full(n, sources.number(radius, "radius"))
        lo, cnt = _range(n, index_offset, index_count)
        sl = slice(lo, lo + cnt)
        c, r, cols = c[sl], r[sl], cols[sl]
        self._queue(lambda f, v: render3d.draw_particles(f, v, c, r, cols))

    def _mesh_data(self, vertices, indices, normals, color, per_vertex_color, vertex_offset,
                   vertex_count, index_offset, index_count):
        pos = sources.points(vertices, 3, "vertices").astype(np.float64)
        n = pos.shape[0]
        idx = sources.indices(indices, n, 1) if indices is not None else None
        nrm = (gen_normals(pos, idx) if normals is None
               else sources.points(normals, 3, "normals").astype(np.float64))
        cols = sources.vertex_rgba(color, per_vertex_color, n)
        if idx is None:
            lo, cnt = _range(n, vertex_offset, vertex_count)
            tri = np.arange(lo, lo + cnt - cnt % 3)
        else:
            lo, cnt = _range(idx.size, index_offset, index_count)
            tri = idx[lo:lo + cnt - cnt % 3] + int(vertex_offset)
            if tri.size and tri.max() >= n:
                raise sources.VkdiffValueError("ti.ui: mesh indices plus vertex_offset exceed the vertices")
        return pos, nrm, cols, tri.reshape(-1, 3)

    def _device_mesh(self, vertices, indices, normals, color, per_vertex_color, two_sided,
                     vertex_offset, vertex_count, index_offset, index_count):
        """The mesh staged on the device (devdraw.Mesh), or None: drawn by numpy (RGBA
        colours blend in call order there) or nothing to draw (False)."""
        dev = self._frame.dev if self._frame is not None else None
        if dev is None or sources.has_alpha(per_vertex_color):
            return None
        n = dev.count(vertices, "vertices")
        if n == 0:
            return False
        pos = dev.stage_points(vertices, 3, "vertices")
        if indices is None:
            lo, cnt = _range(n, vertex_offset, vertex_count)
            cnt -= cnt % 3
            idx = None
            if lo:
                idx = dev.scratch(devdraw.T.i32, (max(cnt, 1),))
                if cnt:
                    idx.from_numpy(np.arange(lo, lo + cnt, dtype=np.int32))
            full, nfull = None, n - n % 3
        else:
            full, nfull = dev.stage_indices(indices, n)
            lo, cnt = _range(nfull, index_offset, index_count)
            cnt -= cnt % 3
            idx, cnt = dev.stage_indices(indices, n, lo, cnt, int(vertex_offset))
            nfull -= nfull % 3
        if normals is None:
            nrm = devdraw.gen_normals(dev, pos, full, nfull // 3)
        else:
            nrm = dev.stage_points(normals, 3, "normals")
        cols = dev.stage_colors(color, per_vertex_color, n)
        return devdraw.Mesh(dev, pos, nrm, cols, idx, cnt // 3, 0, two_sided)

    def mesh(self, vertices, indices=None, normals=None, color=(0.5, 0.5, 0.5),
             per_vertex_color=None, two_sided=False, vertex_offset=0, vertex_count=None,
             index_offset=0, index_count=None, show_wireframe=False):
        m = self._device_mesh(vertices, indices, normals, color, per_vertex_color, two_sided,
                              vertex_offset, vertex_count, index_offset, index_count)
        if m is not None:
            if m:
                self._frame.add_3d(None, lambda f, v: devdraw.draw_mesh(f.dev, v, m))
            return
        pos, nrm, cols, tri = self._mesh_data(vertices, indices, normals, color, per_vertex_color,
                                              vertex_offset, vertex_count, index_offset,
                                              index_count)
        two = bool(two_sided)
        self._queue(lambda f, v: render3d.draw_mesh(f, v, pos, nrm, cols, tri, two))

    def mesh_instance(self, vertices, indices=None, normals=None, color=(0.5, 0.5, 0.5),
                      per_vertex_color=None, two_sided=False, transforms=None, instance_offset=0,
                      instance_count=None, vertex_offset=0, vertex_count=None, index_offset=0,
                      index_count=None, show_wireframe=False):
        m = self._device_mesh(vertices, indices, normals, color, per_vertex_color, two_sided,
                              vertex_offset, vertex_count, index_offset, index_count)
        if m is not None:
            if m:
                for model in self._models(transforms, instance_offset, instance_count):
                    self._frame.add_3d(None, lambda f, v, model=model:
                                       devdraw.draw_mesh(f.dev, v, m, model))
            return
        pos, nrm, cols, tri = self._mesh_data(vertices, indices, normals, color, per_vertex_color,
                                              vertex_offset, vertex_count, index_offset,
                                              index_count)
        two = bool(two_sided)
        models = self._models(transforms, instance_offset, instance_count)

        def draw(f, v):
            for model in models:
                render3d.draw_mesh(f, v, pos, nrm, cols, tri, two, model)
        self._queue(draw)

    @staticmethod
    def _models(transforms, instance_offset, instance_count):
        """The model matrices of mesh_instance (read on the host: a few 4x4 matrices)."""
        if transforms is None:
            return [None]
        m = sources.as_array(transforms, "transforms").astype(np.float64)
        if m.shape[-2:] != (4, 4):
            raise sources.VkdiffValueError("Error! Transform matrix must be 4x4 shape")
        m = m.reshape(-1, 4, 4)
        lo, cnt = _range(m.shape[0], instance_offset, instance_count)
        return list(m[lo:lo + cnt])

    def lines(self, vertices, width, indices=None, color=(0.5, 0.5, 0.5), per_vertex_color=None,
              vertex_offset=0, vertex_count=None, index_offset=0, index_count=None):
        pos = sources.points(vertices, 3, "vertices").astype(np.float64)
        n = pos.shape[0]
        cols = sources.vertex_colors(color, per_vertex_color, n).astype(np.float64)
        if indices is None:
            lo, cnt = _range(n, vertex_offset, vertex_count)
            seg = np.arange(lo, lo + cnt - cnt % 2)
        else:
            idx = sources.indices(indices, n, 1)
            lo, cnt = _range(idx.size, index_offset, index_count)
            seg = idx[lo:lo + cnt - cnt % 2] + int(vertex_offset)
            seg = seg[: seg.size - seg.size % 2]
            if seg.size and seg.max() >= n:
                raise sources.VkdiffValueError("ti.ui: line indices plus vertex_offset exceed the vertices")
        seg = seg.reshape(-1, 2)
        w = sources.number(width, "width")
        p0, p1, c0, c1 = pos[seg[:, 0]], pos[seg[:, 1]], cols[seg[:, 0]], cols[seg[:, 1]]
        self._queue(lambda f, v: render3d.draw_lines(f, v, p0, p1, c0, c1, w))

    # ------------------------------------------------------------------ drawing
    def _queue(self, item):
        if self._frame is None:
            self._items.append(item)
        else:
            self._frame.add_3d(item)

    def _render_into(self, frame):
        """canvas.scene(): queue a detached scene's items, then give all 3D items of the
        frame this scene's camera and lights."""
        for item in self._items:
            frame.add_3d(item)
        self._items = []
        frame.set_view(render3d.View(self._camera, frame.width, frame.height, self._ambient,
                                     self._lights))
        self._lights = []


SceneV2 = Scene
