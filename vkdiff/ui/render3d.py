"""``vkdiff.ui`` 3D stage: a scene's particles, meshes and lines -> fragments with depth.

Shading follows GGUI's shaders (python/taichi/shaders/{Particles,Mesh,SceneLines}_vk.*):

* colour = ambient * c + sum over point lights of ``max(dot(L, N), 0) * c * light`` (Lambert,
  no specular), clamped when stored; ``two_sided`` meshes use ``abs(dot(L, N))``;
* meshes: per-pixel lighting with the *untransformed* vertex position and normal interpolated
  (perspective-correct), in world space -- also for ``mesh_instance``, whose model matrices
  move the geometry but not the lighting, as in Taichi;
* particles: camera-facing discs of ``radius / (tan(fov / 2) * distance) * width / 2`` pixels
  shaded as spheres in camera space (normal ``(x, y, sqrt(1 - x^2 - y^2))``), their depth the
  sphere's front surface;
* lines: quads ``width`` pixels thick, flat (unlit) colours.

Differences: primitives with a vertex behind the camera are dropped instead of clipped; no
wireframe overlay (``show_wireframe`` is ignored).
"""

import numpy as np

from . import raster


class View:
    """Camera matrices and lights of one drawing of a scene."""

    def __init__(self, camera, width, height, ambient, lights):
        self.width, self.height = width, height
        self.view = camera._view()
        self.proj = camera._projection(width / height)
        self.viewproj = self.proj @ self.view
        self.tan_half_fov = camera.tan_half_fov
        self.eye = camera._pos
        self.ambient = np.asarray(ambient, np.float64)
        self.lights = [(np.asarray(p, np.float64), np.asarray(c, np.float64)) for p, c in lights]

    def clip(self, pos):
        """(N, 3) world positions -> (N, 4) clip coordinates (OpenGL y-up convention)."""
        return np.concatenate([pos, np.ones((pos.shape[0], 1))], axis=1) @ self.viewproj.T

    def to_pixels(self, clip):
        """clip (N, 4) -> pixel x, y (bottom-up), reversed depth z, w."""
        w = clip[:, 3]
        with np.errstate(divide="ignore", invalid="ignore"):
            x = (clip[:, 0] / w + 1) * 0.5 * self.width
            y = (clip[:, 1] / w + 1) * 0.5 * self.height
            z = clip[:, 2] / w
        return x, y, z, w

    def project_z(self, view_z):
        """Depth of camera-space z (negative in front of the camera)."""
        p = self.proj
        return (p[2, 2] * view_z + p[2, 3]) / (p[3, 2] * view_z + p[3, 3])


def lambert(view, base, pos, normal, two_sided=False, light_space=None):
    """(F, 3) colours of fragments with base colours, positions and normals; lights are
    taken in world space, or mapped by light_space (a 4x4 matrix) first."""
    out = base * view.ambient
    n = normal / np.maximum(np.linalg.norm(normal, axis=1, keepdims=True), 1e-20)
    for lp, lc in view.lights:
        if light_space is not None:
            lp = (light_space @ np.append(lp, 1.0))[:3]
        ld = lp - pos
        ld /= np.maximum(np.linalg.norm(ld, axis=1, keepdims=True), 1e-20)
        f = np.einsum("fc,fc->f", ld, n)
        f = np.abs(f) if two_sided else np.maximum(f, 0.0)
        out = out + f[:, None] * base * lc
    return out


def draw_particles(frame, view, centers, radii, colors):
    x, y, z, w = view.to_pixels(view.clip(centers))
    dist = np.linalg.norm(centers - view.eye, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        rpx = radii / (view.tan_half_fov * dist) * view.width * 0.5
    ok = np.nonzero((w > 0) & np.isfinite(rpx) & (rpx > 0))[0]
    if ok.size == 0:
        return
    x, y, rpx = x[ok], y[ok], rpx[ok]
    cam = np.concatenate([centers[ok], np.ones((ok.size, 1))], axis=1) @ view.view.T
    cam = cam[:, :3] / cam[:, 3:]
    radii, colors = radii[ok], colors[ok]
    frags = []
    for p, ix, iy in raster.box_fragments(x - rpx, x + rpx, y - rpx, y + rpx,
                                          frame.width, frame.height):
        dx = (ix + 0.5 - x[p]) / rpx[p]
        dy = (iy + 0.5 - y[p]) / rpx[p]
        d2 = dx * dx + dy * dy
        inside = d2 < 1.0
        p, dx, dy, d2 = p[inside], dx[inside], dy[inside], d2[inside]
        depth = view.project_z(cam[p, 2] + np.sqrt(1.0 - d2) * radii[p])
        frags.append((ix[inside], iy[inside], depth, p, np.stack([dx, dy], axis=1)))

    def shade(pix, p, attr):
        dx, dy = attr[:, 0], attr[:, 1]
        zs = np.sqrt(np.maximum(1.0 - dx * dx - dy * dy, 0.0))
        normal = np.stack([dx, dy, zs], axis=1)
        pos = cam[p] + normal * radii[p, None]
        col = lambert(view, colors[p, :3], pos, normal, light_space=view.view)
        store(frame, pix, col, colors[p, 3])

    if np.all(colors[:, 3] == 1.0):  # opaque: one depth resolve, the winners shaded once
        resolve = raster.DepthResolve(frame.depth, 2)
        for f in frags:
            resolve.add(*f)
        shade(*resolve.winners())
        return
    # translucent: every fragment passing the depth test blends, particle after particle
    if not frags:
        return
    ix, iy, depth, p, attr = (np.concatenate(a) for a in zip(*frags))
    order = np.argsort(p, kind="stable")
    ix, iy, depth, p, attr = ix[order], iy[order], depth[order], p[order], attr[order]
    bounds = np.flatnonzero(np.diff(p)) + 1
    for sl in np.split(np.arange(p.size), bounds):
        resolve = raster.DepthResolve(frame.depth, 2)
        resolve.add(ix[sl], iy[sl], depth[sl], p[sl], attr[sl])
        shade(*resolve.winners())


def store(frame, pix, col, alpha):
    """Write shaded fragments; alpha < 1 blends (src alpha, 1 - src alpha) for colour and
    alpha alike, as GGUI's pipelines do (the fragment colour clamped first, UNORM target)."""
    rgb = frame.rgb.reshape(-1, 3)
    if np.all(alpha == 1.0):
        rgb[pix] = col
        return
    a = np.clip(alpha, 0.0, 1.0)[:, None]
    q = lambda v: np.rint(np.clip(v, 0.0, 1.0).astype(np.float32) * 255) / 255  # 8-bit dst
    rgb[pix] = np.clip(col, 0.0, 1.0) * a + q(rgb[pix]) * (1.0 - a)
    da = frame.alpha.reshape(-1)
    da[pix] = a[:, 0] * a[:, 0] + q(da[pix]) * (1.0 - a[:, 0])


def _resolve_triangles(frame, x, y, z, w, tris):
    """Depth-resolve triangles (vertex ids tris (T, 3) into the per-vertex screen x, y,
    depth z and clip w); returns the visible pixels, their triangles and perspective-correct
    barycentric weights."""
    resolve = raster.DepthResolve(frame.depth, 3)
    for t, ix, iy, bary in raster.triangle_fragments(x[tris], y[tris], frame.width, frame.height):
        corner = tris[t]
        resolve.add(ix, iy, np.einsum("fk,fk->f", bary, z[corner]), t, bary)
    pix, t, bary = resolve.winners()
    pc = bary / w[tris[t]]  # perspective-correct weights
    pc /= pc.sum(axis=1, keepdims=True)
    return pix, t, pc


def draw_mesh(frame, view, positions, normals, colors, tris, two_sided, model=None):
    """tris (T, 3) vertex indices; model: a 4x4 matrix applied to positions for projection."""
    world = positions if model is None else (
        np.concatenate([positions, np.ones((positions.shape[0], 1))], 1) @ model.T)[:, :3]
    x, y, z, w = view.to_pixels(view.clip(world))
    front = w > 1e-9
    tris = tris[front[tris].all(axis=1)]
    if tris.size == 0:
        return
    pix, t, pc = _resolve_triangles(frame, x, y, z, w, tris)
    corner = tris[t]
    pos = np.einsum("fk,fkc->fc", pc, positions[corner])
    nrm = np.einsum("fk,fkc->fc", pc, normals[corner])
    base = np.einsum("fk,fkc->fc", pc, colors[corner])
    store(frame, pix, lambert(view, base[:, :3], pos, nrm, two_sided), base[:, 3])


def draw_lines(frame, view, p0, p1, c0, c1, width_px):
    """3D segments as screen-space quads width_px pixels thick (SceneLines2quad)."""
    a, b = view.clip(p0), view.clip(p1)
    ok = (a[:, 3] > 1e-9) & (b[:, 3] > 1e-9)
    a, b, c0, c1 = a[ok], b[ok], c0[ok], c1[ok]
    if a.size == 0:
        return
    aspect = view.width / view.height
    adjust = np.array([aspect, 1.0])
    d = (b[:, :2] / b[:, 3:] - a[:, :2] / a[:, 3:]) * adjust
    with np.errstate(invalid="ignore", divide="ignore"):
        d /= np.linalg.norm(d, axis=1, keepdims=True)
    tangent = np.stack([-d[:, 1], d[:, 0]], axis=1) * (width_px / view.height) / adjust
    corners = []
    for q, s in ((a, 1), (a, -1), (b, 1), (b, -1)):
        c = q.copy()
        c[:, :2] += s * tangent * q[:, 3:]
        corners.append(c)
    verts = np.stack([corners[0], corners[1], corners[2], corners[2], corners[1], corners[3]], 1)
    cols = np.stack([c0, c0, c1, c1, c0, c1], 1).reshape(-1, 3)
    x, y, z, w = view.to_pixels(verts.reshape(-1, 4))
    tris = np.arange(x.size).reshape(-1, 3)
    pix, t, pc = _resolve_triangles(frame, x, y, z, w, tris)
    frame.rgb.reshape(-1, 3)[pix] = np.einsum("fk,fkc->fc", pc, cols[tris[t]])
