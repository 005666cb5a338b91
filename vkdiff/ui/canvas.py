"""``vkdiff.ui.Canvas``: the 2D drawing calls of a GGUI window (Taichi 1.7.4's ``Canvas``).

A call reads its inputs at once (:mod:`vkdiff.ui.sources`) and appends a draw command to the
window's frame (:class:`Frame`); the frame is rasterised (:mod:`vkdiff.ui.raster`) when the
window composes it (``show()``, ``get_image_buffer_as_numpy()``, ``save_image()``), in call
order, over the background colour, as GGUI's render queue does.  Geometry follows Taichi's
shaders (python/taichi/shaders/*.vert, *lines2quad*.comp):

* positions are in ``[0, 1]^2``, origin bottom-left;
* ``circles``: radius is a fraction of the window *height* (``radius * height`` pixels), a pixel
  is inside when its centre is strictly closer than that;
* ``lines``: each pair of vertices is a quad ``width * height`` pixels thick, no caps, colours
  rounded to 8 bits then interpolated along it;
* ``triangles``: filled, per-vertex colours interpolated;
* ``set_image``: an image the size of the window is copied pixel for pixel; another size is
  sampled bilinearly (clamped to the edge), as GGUI's texture sampler does.
"""

import numpy as np

from . import devdraw, raster, sources
from .scene import Scene


class Frame:
    """The draw commands of one frame and the buffers they are rasterised into.

    A command is a pair (host, device): ``host(frame)`` draws into the numpy buffers
    (``rgb``, ``depth``, ``alpha``), ``device(frame)`` into ``frame.dev`` (a
    :class:`vkdiff.ui.devdraw.DeviceFrame`, present when frames are drawn on the device).
    Composing runs them in call order; the image moves between host and device only where a
    command of the other kind follows (or when it is read back)."""

    def __init__(self, width, height):
        self.width, self.height = int(width), int(height)
        self.background = np.zeros(3, np.float32)
        self.commands = []
        self.views3d = []  # one holder per 3D command: [view or None]
        self.rgb = None
        self.depth = None
        self.alpha = None
        self._where = None  # None: not composed; "host" / "dev": where the image is
        self._dev = False  # not decided yet

    @property
    def dev(self):
        """The DeviceFrame when frames are drawn on the device (devdraw.available()), else None."""
        if self._dev is False:
            ok, _ = devdraw.available()
            self._dev = devdraw.DeviceFrame(self.width, self.height) if ok else None
        return self._dev

    def add(self, command, device=None):
        self.commands.append((command, device))
        self._where = None

    def add_3d(self, item, device_item=None):
        """A 3D item (item(frame, view), or device_item(frame, view) drawing into frame.dev);
        drawn with the view of the last set_view()."""
        holder = [None]
        self.views3d.append(holder)

        def command(frame):
            if holder[0] is not None:
                item(frame, holder[0])

        def device(frame):
            if holder[0] is not None:
                device_item(frame, holder[0])
        self.add(command if item is not None else None,
                 device if device_item is not None else None)

    def set_view(self, view):
        for holder in self.views3d:
            holder[0] = view
        self._where = None

    def invalidate(self):
        self._where = None

    def _to_host(self):
        if self._where == "dev":
            self.rgb, self.depth, self.alpha = self.dev.download()
        elif self._where is None:
            self.rgb = np.empty((self.height, self.width, 3), np.float32)
            self.rgb[:] = self.background
            self.depth = np.zeros((self.height, self.width), np.float32)
            self.alpha = np.ones((self.height, self.width), np.float32)
        self._where = "host"

    def _to_device(self):
        if self._where == "host":
            self.dev.upload(self.rgb, self.depth, self.alpha)
        elif self._where is None:
            self.dev.clear(self.background)
        self._where = "dev"

    def _run(self):
        """Rasterise the commands (once per set of commands)."""
        if self._where is not None:
            return
        self.rgb = self.depth = self.alpha = None
        for host, device in self.commands:
            if device is not None:
                self._to_device()
                device(self)
            else:
                self._to_host()
                host(self)
        if self._where is None:
            if self.dev is not None:
                self._to_device()
            else:
                self._to_host()

    def compose(self):
        """The frame as numpy buffers; returns (rgb, depth) (``alpha`` is set too)."""
        self._run()
        if self._where == "dev" and self.rgb is None:
            self.rgb, self.depth, self.alpha = self.dev.download()
        return self.rgb, self.depth

    def rgba8(self):
        """(height, width, 4) uint8, rows bottom-up, rounded as a UNORM8 attachment stores."""
        self._run()
        if self._where == "dev":
            return self.dev.rgba8()
        return raster.to_rgba8(self.rgb, self.alpha)

    def depth_image(self):
        self._run()
        if self._where == "dev":
            return self.dev.depth()
        return self.depth

    def next_frame(self):
        """Drop this frame's commands (the background colour stays)."""
        self.commands = []
        self.views3d = []
        self._where = None
        if self._dev:
            self._dev.release()


# ------------------------------------------------------------------ 2D rasterisation
def draw_circles(frame, centers, radii_px, colors):
    """centers (N, 2) in [0, 1]^2, radii_px (N,) pixels, colors (N, 3)."""
    cx = centers[:, 0].astype(np.float64) * frame.width
    cy = centers[:, 1].astype(np.float64) * frame.height
    r = radii_px.astype(np.float64)
    for c, ix, iy in raster.box_fragments(cx - r, cx + r, cy - r, cy + r,
                                          frame.width, frame.height):
        dx = ix + 0.5 - cx[c]
        dy = iy + 0.5 - cy[c]
        inside = dx * dx + dy * dy < r[c] * r[c]
        raster.write_ordered(frame.rgb, ix[inside], iy[inside], colors[c[inside]])


def draw_triangles(frame, verts, colors):
    """verts (T, 3, 2) in [0, 1]^2, colors (T, 3, 3) per corner (interpolated)."""
    px = verts[:, :, 0].astype(np.float64) * frame.width
    py = verts[:, :, 1].astype(np.float64) * frame.height
    for t, ix, iy, bary in raster.triangle_fragments(px, py, frame.width, frame.height):
        col = np.einsum("fk,fkc->fc", bary, colors[t])
        raster.write_ordered(frame.rgb, ix, iy, col.astype(np.float32))


def line_quads(p0, p1, c0, c1, width, aspect):
    """Two triangles per segment, as Taichi's lines2quad shader builds them."""
    adjust = np.array([aspect, 1.0])
    d = (p1 - p0) * adjust
    with np.errstate(invalid="ignore", divide="ignore"):
        d = d / np.linalg.norm(d, axis=1, keepdims=True)
    tangent = np.stack([-d[:, 1], d[:, 0]], axis=1) * (width * 0.5) / adjust
    q00, q01, q10, q11 = p0 + tangent, p0 - tangent, p1 + tangent, p1 - tangent
    verts = np.concatenate([np.stack([q00, q01, q10], 1), np.stack([q10, q01, q11], 1)])
    cols = np.concatenate([np.stack([c0, c0, c1], 1), np.stack([c1, c0, c1], 1)])
    n = p0.shape[0]
    order = np.stack([np.arange(n), np.arange(n) + n], 1).reshape(-1)  # keep segment order
    return verts[order], cols[order]


def draw_image(frame, rgba8):
    """rgba8 (w, h, 4) uint8 indexed [x, y-up] -> the whole frame (its alpha included: the
    frame's alpha plane is what the window image returns; other drawing leaves alpha 1)."""
    img = rgba8.astype(np.float32) / 255.0
    w, h = img.shape[:2]
    if (w, h) == (frame.width, frame.height):
        frame.rgb[:] = img[:, :, :3].transpose(1, 0, 2)
        frame.alpha[:] = img[:, :, 3].T
        return

    def axis(n_out, n_in):
        u = (np.arange(n_out) + 0.5) / n_out * n_in - 0.5
        u = np.clip(u, 0.0, n_in - 1.0)
        i0 = np.floor(u).astype(np.int64)
        i1 = np.minimum(i0 + 1, n_in - 1)
        return i0, i1, (u - i0).astype(np.float32)
    x0, x1, fx = axis(frame.width, w)
    y0, y1, fy = axis(frame.height, h)
    fx = fx[None, :, None]
    fy = fy[:, None, None]
    t = img.transpose(1, 0, 2)  # [y, x]
    top = t[y0][:, x0] * (1 - fx) + t[y0][:, x1] * fx
    bottom = t[y1][:, x0] * (1 - fx) + t[y1][:, x1] * fx
    sampled = top * (1 - fy) + bottom * fy
    frame.rgb[:] = sampled[:, :, :3]
    frame.alpha[:] = sampled[:, :, 3]


# ------------------------------------------------------------------ the Canvas API
class Canvas:
    """Drawing calls on a window (get it with ``Window.get_canvas()``)."""

    def __init__(self, window):
        self._window = window

    @property
    def _frame(self):
        return self._window._frame

    def set_background_color(self, color):
        """RGB triple in [0, 1]; used for every later frame."""
        self._frame.background = sources.color3(color)
        self._frame.invalidate()

    def set_image(self, img):
        frame = self._frame
        dev = frame.dev
        size = (frame.width, frame.height)
        if dev is not None:
            staged = devdraw.stage_image(dev, img, size)
            if staged is not None:
                frame.add(None, lambda f: devdraw.draw_image(f.dev, staged))
                return
        rgba = sources.image_rgba8(img)
        if dev is not None and rgba.shape[:2] == size:
            packed = dev.scratch(devdraw.T.i32, size)
            packed.from_numpy(np.ascontiguousarray(rgba).view(np.int32)[:, :, 0])
            frame.add(None, lambda f: devdraw.draw_image(f.dev, packed))
            return
        self._frame.add(lambda f: draw_image(f, rgba))

    def circles(self, centers, radius, color=(0.5, 0.5, 0.5), per_vertex_color=None,
                per_vertex_radius=None):
        dev = self._frame.dev
        if dev is not None:
            h = self._frame.height
            if dev.count(centers, "centers") == 0:
                return
            cen = dev.stage_points(centers, 2)
            n = cen.shape[0]
            radii = None
            if per_vertex_radius is not None:
                radii = dev.stage_scalars(per_vertex_radius, n, "per_vertex_radius")
            r0 = sources.number(radius, "radius") * h
            cols = dev.stage_colors(color, per_vertex_color, n)
            self._frame.add(None, lambda f: devdraw.draw_circles(f.dev, cen, radii, r0, cols))
            return
        c = sources.points(centers, 2, "centers")
        n = c.shape[0]
        cols = np.ascontiguousarray(sources.vertex_colors(color, per_vertex_color, n))
        h = self._frame.height
        if per_vertex_radius is not None:
            r = sources.scalars(per_vertex_radius, n, "per_vertex_radius") * h
        else:
            r = np.full(n, sources.number(radius, "radius") * h, np.float32)
        r = np.abs(r)  # Taichi draws a negative radius as its magnitude
        self._frame.add(lambda f: draw_circles(f, c, r, cols))

    def triangles(self, vertices, color=(0.5, 0.5, 0.5), indices=None, per_vertex_color=None):
        dev = self._frame.dev
        if dev is not None:
            n = dev.count(vertices, "vertices")
            if n == 0:
                return
            pos = dev.stage_points(vertices, 2, "vertices")
            cols = dev.stage_colors(color, per_vertex_color, n)
            idx, cnt = (None, n) if indices is None else dev.stage_indices(indices, n)
            self._frame.add(None, lambda f: devdraw.draw_triangles_2d(f.dev, pos, idx, cnt // 3,
                                                                      cols))
            return
        v = sources.points(vertices, 2, "vertices")
        cols = sources.vertex_colors(color, per_vertex_color, v.shape[0])
        idx = (sources.indices(indices, v.shape[0], 3) if indices is not None
               else np.arange(v.shape[0] - v.shape[0] % 3))
        tri = idx.reshape(-1, 3)
        verts, tcols = v[tri], np.ascontiguousarray(cols[tri])
        self._frame.add(lambda f: draw_triangles(f, verts, tcols))

    def lines(self, vertices, width, indices=None, color=(0.5, 0.5, 0.5), per_vertex_color=None):
        dev = self._frame.dev
        if dev is not None:
            n = dev.count(vertices, "vertices")
            w = sources.number(width, "width")
            if n == 0:
                return
            pos = dev.stage_points(vertices, 2, "vertices")
            cols = dev.stage_colors(color, per_vertex_color, n)
            idx, cnt = (None, n) if indices is None else dev.stage_indices(indices, n)
            self._frame.add(None, lambda f: devdraw.draw_lines_2d(f.dev, pos, idx, cnt // 2, w,
                                                                  cols))
            return
        v = sources.points(vertices, 2, "vertices").astype(np.float64)
        cols = sources.vertex_colors(color, per_vertex_color, v.shape[0])
        # GGUI's lines2quad stage keeps vertex colours as 8-bit values: round before
        # interpolating, as Taichi's images show
        cols = (np.rint(np.clip(cols, 0, 1).astype(np.float32) * np.float32(255))
                / np.float32(255)).astype(np.float32)
        idx = (sources.indices(indices, v.shape[0], 2) if indices is not None
               else np.arange(v.shape[0] - v.shape[0] % 2))
        seg = idx.reshape(-1, 2)
        width = sources.number(width, "width")
        aspect = self._frame.width / self._frame.height
        verts, tcols = line_quads(v[seg[:, 0]], v[seg[:, 1]], cols[seg[:, 0]], cols[seg[:, 1]],
                                  width, aspect)
        self._frame.add(lambda f: draw_triangles(f, verts, tcols))

    def contour(self, scalar_field, cmap_name="plasma", normalize=False):
        """Plot a 2D scalar field through a matplotlib colour map (needs matplotlib)."""
        try:
            from matplotlib import colormaps
        except ImportError:
            raise RuntimeError("contour() needs matplotlib") from None
        a = sources.as_array(scalar_field, "scalar_field")
        if a.ndim != 2:
            raise ValueError("contour() can only be used on a 2D scalar field.")
        if normalize:
            a = (a - a.min()) / (a.max() - a.min() + 1e-16)
        self.set_image(np.ascontiguousarray(colormaps[cmap_name](a)[:, :, :3].astype(np.float32)))

    def vector_field(self, vector_field, arrow_spacing=5, scale=0.1, width=0.002, color=(0, 0, 0)):
        """Arrows of a 2D vector field (as Taichi's: shaft plus two tip segments)."""
        v = sources.as_array(vector_field, "vector_field").astype(np.float64)
        nx, ny = v.shape[:2]
        vmax = np.max(np.linalg.norm(v, axis=-1))
        ii = [min(i * arrow_spacing, nx - 1) for i in range(nx // arrow_spacing + 1)]
        jj = [min(j * arrow_spacing, ny - 1) for j in range(ny // arrow_spacing + 1)]
        pts = []
        for i in ii:
            for j in jj:
                x, y = i / (nx - 1), j / (ny - 1)
                dx, dy = scale / vmax * v[i, j]
                a = np.arctan2(dy, dx)
                tip = np.hypot(dx, dy) * 0.2
                e = (x + dx, y + dy)
                pts += [(x, y), e, e, (e[0] + tip * np.cos(a + 3.14 - 0.5233),
                                       e[1] + tip * np.sin(a + 3.14 - 0.5233)),
                        e, (e[0] + tip * np.cos(a - 3.14 + 0.5233),
                            e[1] + tip * np.sin(a - 3.14 + 0.5233))]
        self.lines(np.array(pts, np.float32), width=width, color=color)

    def scene(self, scene):
        """Draw a 3D scene (its particles, meshes and lines since the last call)."""
        if not isinstance(scene, Scene):
            raise sources.VkdiffTypeError(f"canvas.scene() needs a ti.ui.Scene, got {type(scene)}")
        scene._render_into(self._frame)
