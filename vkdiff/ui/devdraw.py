"""``vkdifui`` device stage (face floor): a GGUI frame in device memory and the drawing calls
that rasterise into it with the kernels of :mod:`vkdifui.devkernels`.

``available()`` decides once per ``ti.init()`` whether frames are drawn on the device or by the
numpy rasteriser (:mod:`vkdifui.raster`), and says why: ``VKDIFF_UI_DRAW=numpy`` forces
numpy, ``VKDIFF_UI_DRAW=device`` makes a failure to draw on the device an error; otherwise
a probe (a 2x2 frame cleared, a circle drawn and packed to RGBA8 on the device, read back
and compared) picks the device when it gives the expected pixels.

Inputs are staged at call time (Taichi's GGUI copies them into vertex buffers when the call is
made): fields are copied on the device by a kernel, ndarrays likewise, numpy arrays are
uploaded; nothing is read back per frame.  The image is read back only when asked
(``rgba8()``, ``depth()``, ``download()``).
"""

import os

import numpy as np

from .. import types as T  # noqa: N812 (also devdraw.T for scene.py)
from ..errors import VkdiffError
from ..lang import state
from ..lang.api import device_features
from ..lang.field import Field
from ..lang.ndarray import Ndarray, ndarray
from . import devkernels as K
from . import devtriangles as KT
from . import sources
from .render3d import draw_particles as host_draw

_choice = {}  # state.generation -> (on device?, reason)


def available():
    """(True, how) when frames are drawn on the device, else (False, why not)."""
    gen = state.generation
    if gen in _choice:
        return _choice[gen]
    mode = os.environ.get("VKDIFF_UI_DRAW", "").strip().lower()
    if mode == "numpy":
        res = (False, "VKDIFF_UI_DRAW=numpy")
    else:
        try:
            res = _probe()
        except Exception as e:  # noqa: BLE001 - any failure means: use numpy, say why
            if mode == "device":
                raise
            res = (False, f"the device probe failed ({type(e).__name__}: {e})")
    _choice[state.generation] = res
    return res


def _probe():
    f = DeviceFrame(2, 2)
    f.clear(np.float32([0.2, 0.4, 0.6]))
    cen = np.float32([[0.25, 0.25]])
    draw_circles(f, f.stage_points(cen, 2), None, 0.25 * 2, f.stage_colors((1, 0, 0), None, 1))
    img = f.rgba8()
    want = np.array([[[255, 0, 0, 255], [51, 102, 153, 255]],
                     [[51, 102, 153, 255], [51, 102, 153, 255]]], np.uint8)
    if not np.array_equal(img, want):
        return False, f"the device probe drew {img.tolist()}, not {want.tolist()}"
    if f.wide:
        how = "one-pass depth test: 64-bit atomic_max of depth bits and primitive id"
    else:
        why = ("VKDIFF_UI_DRAW_DEPTH=i32" if os.environ.get("VKDIFF_UI_DRAW_DEPTH") == "i32"
               else "the device has no 64-bit integer atomics")
        how = (f"two-pass depth test: atomic_max of the i32 depth bits, then of the primitive "
               f"id ({why})")
    return True, f"compute-shader rasteriser on the device ({how})"


def wide_depth():
    """64-bit depth+id atomics: where the device has them (VKDIFF_UI_DRAW_DEPTH=i32: never)."""
    if os.environ.get("VKDIFF_UI_DRAW_DEPTH", "").strip().lower() == "i32":
        return False
    feats = device_features()
    return bool(feats.get("int64") and feats.get("int64_atomics"))


class DeviceFrame:
    """Colour (H, W, 3) f32, alpha, depth bits and winner arrays of one frame on the device,
    and the staging arrays of its inputs (kept until ``release()``, the next frame)."""

    def __init__(self, width, height):
        self.width, self.height = int(width), int(height)
        self._gen = None
        self.wide = wide_depth()
        self._pool = {}
        self._used = []

    def _arrays(self):
        if self._gen != state.generation:
            h, w = self.height, self.width
            self.rgb = ndarray(T.f32, (h, w, 3))
            self.alpha = ndarray(T.f32, (h, w))
            self.depth_bits = ndarray(T.i64 if self.wide else T.i32, (h, w))
            self.win = ndarray(T.i32, (h, w))
            self.packed = ndarray(T.i32, (h, w))
            self._pool, self._used = {}, []
            self._gen = state.generation

    # ------------------------------------------------------------------ scratch arrays
    def scratch(self, dtype, shape):
        self._arrays()
        key = (dtype, tuple(shape))
        free = self._pool.get(key)
        a = free.pop() if free else ndarray(dtype, shape)
        self._used.append((key, a))
        return a

    def release(self):
        """The staged inputs of the frame are no longer needed (next_frame)."""
        for key, a in self._used:
            self._pool.setdefault(key, []).append(a)
        self._used = []

    # ------------------------------------------------------------------ image
    def clear(self, background):
        self._arrays()
        bg = np.asarray(background, np.float32)
        if bg[0] == bg[1] == bg[2]:
            self.rgb.fill(float(bg[0]))
        else:
            K.clear_rgb(self.rgb, float(bg[0]), float(bg[1]), float(bg[2]))
        self.alpha.fill(1.0)
        self.depth_bits.fill(0)
        self.win.fill(-1)  # (each draw leaves it -1 again)

    def upload(self, rgb, depth, alpha):
        self._arrays()
        self.rgb.from_numpy(np.ascontiguousarray(rgb, np.float32))
        self.alpha.from_numpy(np.ascontiguousarray(alpha, np.float32))
        bits = np.ascontiguousarray(depth, np.float32).view(np.int32)
        self.depth_bits.from_numpy(bits.astype(np.int64) << 32 if self.wide else bits)
        self.win.fill(-1)

    def download(self):
        """(rgb, depth, alpha) as the numpy rasteriser holds them (rows bottom-up)."""
        return (self.rgb.to_numpy(), self.depth(), self.alpha.to_numpy())

    def depth(self):
        bits = self.depth_bits.to_numpy()
        if self.wide:
            bits = (bits >> 32).astype(np.int32)
        return bits.view(np.float32)

    def rgba8(self):
        """(H, W, 4) uint8, rows bottom-up: rounded on the device, one 32-bit word a pixel."""
        K.pack_rgba8(self.rgb, self.alpha, self.packed)
        return self.packed.to_numpy().view(np.uint8).reshape(self.height, self.width, 4)

    def set_uniforms(self, u):
        """A staged copy of the uniforms (one per draw: a later draw must not change them)."""
        a = self.scratch(T.f32, (K.U_SIZE,))
        a.from_numpy(u)
        return a

    # ------------------------------------------------------------------ staging
    def count(self, x, name):
        """How many points x holds (a field's size, without reading it)."""
        if isinstance(x, Field) and not isinstance(x, Ndarray) and len(x.elem_shape) == 1 \
                and x.shape:
            return int(np.prod(x.shape))
        return sources.points(x, 3, name).shape[0]

    def stage_points(self, x, dims, name="centers", lo=0, count=None):
        """(N, dims) f32 device array of positions (a 2-vector input gets z = 0)."""
        if isinstance(x, Field) and len(x.elem_shape) == 1 and x.elem_shape[0] in (2, 3) \
                and not isinstance(x, Ndarray) and x.shape:
            n = int(np.prod(x.shape))
            cnt = n - lo if count is None else count
            dst = self.scratch(T.f32, (cnt, dims))
            K.stage_field(x, dst, int(lo), min(x.elem_shape[0], dims), dims)
            return dst
        a = sources.points(x, dims, name)
        a = a[lo:lo + (a.shape[0] - lo if count is None else count)]
        dst = self.scratch(T.f32, a.shape)
        dst.from_numpy(np.ascontiguousarray(a))
        return dst

    def stage_scalars(self, x, n, name, lo=0):
        if isinstance(x, Field) and not x.elem_shape and not isinstance(x, Ndarray) and x.shape \
                and int(np.prod(x.shape)) >= lo + n:
            dst = self.scratch(T.f32, (n,))
            K.stage_scalar_field(x, dst, int(lo))
            return dst
        a = sources.scalars(x, lo + n, name)[lo:lo + n]
        dst = self.scratch(T.f32, (n,))
        dst.from_numpy(np.ascontiguousarray(a, np.float32))
        return dst

    def stage_colors(self, color, per_vertex_color, n, lo=0, rgba=False):
        """(cols (n, 3) device array or None, constant colour (3,)): per-vertex colours when
        given (their alpha dropped; kept with rgba=True when there is one: (n, 4)), else the
        constant one."""
        if per_vertex_color is None:
            return None, sources.color3(color)
        x = per_vertex_color
        k = 4 if rgba and sources.has_alpha(x) else 3
        if isinstance(x, Field) and len(x.elem_shape) == 1 and x.elem_shape[0] in (3, 4) \
                and not isinstance(x, Ndarray) and x.shape and int(np.prod(x.shape)) >= lo + n:
            dst = self.scratch(T.f32, (n, k))
            K.stage_field(x, dst, int(lo), k, k)
            return dst, np.zeros(3, np.float32)
        if k == 4:
            c = sources.vertex_rgba(color, x, lo + n)[lo:lo + n]
        else:
            c = sources.per_vertex_colors(x, lo + n)[lo:lo + n]
        dst = self.scratch(T.f32, (n, k))
        dst.from_numpy(np.ascontiguousarray(c, np.float32))
        return dst, np.zeros(3, np.float32)

    def stage_indices(self, x, n_vertices, lo=0, count=None, add=0):
        """i32 device array of indices[lo:lo + count] + add (a flat integer field or a field
        of index vectors is copied on the device; on the host, indices are checked)."""
        if isinstance(x, Field) and not isinstance(x, Ndarray) and x.shape \
                and len(x.elem_shape) <= 1 and not x.dtype.is_float:
            total = int(np.prod(x.shape)) * (x.elem_shape[0] if x.elem_shape else 1)
            cnt = total - lo if count is None else count
            dst = self.scratch(T.i32, (max(cnt, 1),))
            K.stage_index_field(x, dst, int(lo), int(add))
            return dst, cnt
        a = sources.indices(x, n_vertices, 1)
        cnt = a.size - lo if count is None else count
        a = a[lo:lo + cnt] + add
        if a.size and a.max() >= n_vertices:
            raise sources.VkdiffValueError("ti.ui: mesh indices plus vertex_offset exceed the "
                                           "vertices")
        dst = self.scratch(T.i32, (max(a.size, 1),))
        if a.size:
            dst.from_numpy(np.ascontiguousarray(a, np.int32))
        return dst, a.size

    def dummy(self, dtype, shape):
        return self.scratch(dtype, shape)


def uniforms(width, height, color=(0, 0, 0), view=None):
    u = np.zeros(K.U_SIZE, np.float32)
    u[36], u[37] = width, height
    u[42:45] = np.asarray(color, np.float32)[:3]
    u[45] = 1.0
    if view is not None:
        u[0:16] = view.viewproj.reshape(-1)
        u[16:32] = view.view.reshape(-1)
        u[32:35] = view.eye
        u[35] = view.tan_half_fov
        u[38:41] = view.ambient
        u[41] = len(view.lights)
        p = view.proj
        u[46:50] = (p[2, 2], p[2, 3], p[3, 2], p[3, 3])
    return u


# ------------------------------------------------------------------ drawing
def draw_circles(f, cen, radii, r0, colors):
    """cen: staged (N, 2); radii: staged (N,) fractions of the height or None (r0 pixels)."""
    cols, const = colors
    n = cen.shape[0]
    if n == 0:
        return
    u = f.set_uniforms(uniforms(f.width, f.height, const))
    rad = radii if radii is not None else f.dummy(T.f32, (1,))
    cols = cols if cols is not None else f.dummy(T.f32, (1, 3))
    K.circles_win(cen, rad, int(radii is not None), float(np.float32(abs(r0))), f.win)
    K.resolve_flat(f.win, f.rgb, cols, int(colors[0] is not None), u)


def opaque(f, cols):
    """Whether staged colours are opaque: no alpha, or every alpha 1 (counted on the device,
    one integer read back)."""
    if cols is None or cols.shape[1] < 4:
        return True
    out = f.scratch(T.i32, (1,))
    out.fill(0)
    K.count_translucent(cols, out)
    return int(out.to_numpy()[0]) == 0


def draw_particles_item(frame, view, cen, radii, r0, colors):
    """A scene.particles item: on the device, or -- translucent RGBA colours blend particle
    after particle -- by the numpy rasteriser from the staged arrays."""
    f = frame.dev
    if not opaque(f, colors[0]):
        frame._to_host()
        c = cen.to_numpy().astype(np.float64)
        r = (radii.to_numpy().astype(np.float64) if radii is not None
             else np.full(c.shape[0], float(r0)))
        host_draw(frame, view, c, r, colors[0].to_numpy().astype(np.float64))
        return
    frame._to_device()
    draw_particles(f, view, cen, radii, r0, colors)


def draw_particles(f, view, cen, radii, r0, colors):
    cols, const = colors
    n = cen.shape[0]
    if n == 0:
        return
    u = f.set_uniforms(uniforms(f.width, f.height, const, view))
    lights = _lights(f, view, view.view)  # particles shade in camera space
    s = f.scratch(T.f32, (n, 8))
    rad = radii if radii is not None else f.dummy(T.f32, (1,))
    cols = cols if cols is not None else f.dummy(T.f32, (1, 3))
    if n > K.LAST:
        raise VkdiffError(f"ti.ui: {n} particles are more than the device rasteriser's {K.LAST}")
    K.particles_setup(cen, rad, int(radii is not None), float(r0), u, s)
    per_vertex = int(colors[0] is not None)
    if f.wide:
        K.particles_depth64(s, u, f.depth_bits)
        K.particles_shade64(s, cols, per_vertex, u, lights, len(view.lights), f.depth_bits, f.rgb)
    else:
        K.particles_depth(s, u, f.depth_bits)
        K.particles_win(s, u, f.depth_bits, f.win)
        K.particles_shade(s, cols, per_vertex, u, lights, len(view.lights), f.win, f.rgb)


def _lights(f, view, space=None):
    n = max(len(view.lights), 1)
    lt = np.zeros((n, 6), np.float32)
    for k, (lp, lc) in enumerate(view.lights):
        lt[k, :3] = lp if space is None else (space @ np.append(lp, 1.0))[:3]
        lt[k, 3:] = lc
    a = f.scratch(T.f32, (n, 6))
    a.from_numpy(lt)
    return a


class Mesh:
    """A scene mesh staged on the device: positions (nv, 3), normals (nv, 3) (generated on the
    device as scene.gen_normals does, when not given), colours, and the triangles to draw
    (idx: staged indices or None for consecutive vertices from `first`)."""

    def __init__(self, f, pos, nrm, colors, idx, ntri, first, two_sided):
        self.pos, self.nrm, self.colors = pos, nrm, colors
        self.idx, self.ntri, self.first, self.two = idx, ntri, first, int(two_sided)


def gen_normals(f, pos, idx, ntri):
    """(nv, 3) normals: scene.gen_normals on the device (float atomics; idx None: consecutive
    triples)."""
    nv = pos.shape[0]
    acc = f.scratch(T.f32, (nv, 3))
    cnt = f.scratch(T.i32, (nv,))
    KT.zero2(acc)
    cnt.fill(0)
    indexed = idx is not None
    KT.face_normals_add(pos, idx if indexed else f.dummy(T.i32, (1,)), int(indexed), int(ntri),
                       acc, cnt)
    KT.normals_average(acc, cnt)
    return acc


def draw_mesh(f, view, m, model=None):
    if m.ntri == 0:
        return
    u = f.set_uniforms(uniforms(f.width, f.height, m.colors[1], view))
    nv = m.pos.shape[0]
    vx = f.scratch(T.f32, (nv, 4))
    mod = f.scratch(T.f32, (16,))
    if model is not None:
        mod.from_numpy(np.asarray(model, np.float32).reshape(-1))
    KT.mesh_vertices(m.pos, u, mod, int(model is not None), vx)
    lights = _lights(f, view)
    cols = m.colors[0] if m.colors[0] is not None else f.dummy(T.f32, (1, 3))
    per_vertex = int(m.colors[0] is not None)
    indexed = int(m.idx is not None)
    idx = m.idx if m.idx is not None else f.dummy(T.i32, (1,))
    args = (vx, idx, indexed, int(m.ntri))
    shade = (vx, idx, indexed, m.pos, m.nrm, cols, per_vertex, u, lights, len(view.lights),
             m.two)
    if f.wide:
        KT.mesh_depth64(*args, f.depth_bits)
        KT.mesh_shade64(*shade, f.depth_bits, f.rgb)
    else:
        KT.mesh_depth(*args, f.depth_bits)
        KT.mesh_win(*args, f.depth_bits, f.win)
        KT.mesh_shade(*shade, f.win, f.rgb)


def draw_triangles_2d(f, pos, idx, ntri, colors):
    """Canvas triangles: pos staged (nv, 2) in [0, 1]^2, painter's order."""
    if ntri == 0:
        return
    cols, const = colors
    u = f.set_uniforms(uniforms(f.width, f.height, const))
    vx = f.scratch(T.f32, (pos.shape[0], 4))
    KT.points2d_to_pixels(pos, vx, float(f.width), float(f.height))
    indexed = int(idx is not None)
    idx = idx if idx is not None else f.dummy(T.i32, (1,))
    cols = cols if cols is not None else f.dummy(T.f32, (1, 3))
    KT.tris2d_win(vx, idx, indexed, int(ntri), f.win)
    KT.tris2d_resolve(vx, idx, indexed, cols, int(colors[0] is not None), u, f.win, f.rgb)


def stage_image(f, img, size):
    """canvas.set_image of a field the window's size (grey, RGB or RGBA; u8 or float): copied
    into a staging field-shaped array on the device at call time, as a callable drawing it.
    None for anything else (numpy arrays are packed on the host; other sizes are sampled by
    numpy)."""
    if not (isinstance(img, Field) and not isinstance(img, Ndarray) and img.shape is not None
            and tuple(img.shape) == tuple(size) and len(img.elem_shape) <= 1):
        return None
    nch = img.elem_shape[0] if img.elem_shape else 0
    if nch > 4 or not (img.dtype == T.u8 or img.dtype.is_float):
        return None
    rgb = f.scratch(T.f32, (size[1], size[0], 3))
    alpha = f.scratch(T.f32, (size[1], size[0]))
    K.image_from_field(img, nch, img.dtype == T.u8, rgb, alpha)
    return rgb, alpha


def draw_image(f, staged):
    """Copy a staged image over the whole frame (colour and alpha)."""
    if isinstance(staged, tuple):
        rgb, alpha = staged
        K.copy_image(rgb, alpha, f.rgb, f.alpha)
    else:
        K.image_from_packed(staged, f.rgb, f.alpha)


def draw_lines_2d(f, pos, idx, nseg, width, colors):
    """Canvas lines: each segment a quad of two triangles, drawn in painter's order."""
    if nseg == 0:
        return
    cols, const = colors
    u = f.set_uniforms(uniforms(f.width, f.height, const))
    vx = f.scratch(T.f32, (6 * nseg, 4))
    qcols = f.scratch(T.f32, (6 * nseg, 3))
    indexed = int(idx is not None)
    idx = idx if idx is not None else f.dummy(T.i32, (1,))
    cols_a = cols if cols is not None else f.dummy(T.f32, (1, 3))
    KT.line_quads(pos, idx, indexed, cols_a, int(cols is not None), u, float(width) * 0.5, vx,
                 qcols)
    none = f.dummy(T.i32, (1,))
    KT.tris2d_win(vx, none, 0, 2 * nseg, f.win)
    KT.tris2d_resolve(vx, none, 0, qcols, 1, u, f.win, f.rgb)
