"""``vkdiff.ui`` rasterisation stage (the numpy fallback of :mod:`vkdiff.ui.devkernels`): primitives
-> fragments, fragments -> frame.

The frame is a float32 ``(height, width, 3)`` colour buffer plus a float32 ``(height, width)``
depth buffer, row 0 at the *bottom* (Taichi's canvas has its origin bottom-left).  Pixel
``(i, j)`` is covered by a primitive when its centre ``(i + 0.5, j + 0.5)`` is, as Vulkan's
rasteriser does without multisampling (GGUI draws no anti-aliasing).

Everything is vectorised with numpy: a batch of primitives becomes the list of candidate pixels
of all their bounding boxes (``box_fragments``), a mask keeps the covered ones, and
``write_ordered`` stores them in painter's order (2D) or a ``DepthResolve`` keeps the nearest
per pixel for shading afterwards (3D).  A batch is split so that no more than
``_BUDGET`` candidates exist at once.

Depth is Taichi's reversed depth: 1 at the near plane, 0 at the far plane, cleared to 0, and a
fragment is kept when it is nearer (larger) than what the buffer holds.
"""

import numpy as np

_BUDGET = 1 << 21  # candidate pixels per batch


def _spans(lo, hi, size):
    """First pixel and count per primitive whose centres lie in [lo, hi] (pixel units)."""
    first = np.ceil(lo - 0.5)
    last = np.floor(hi - 0.5)
    first = np.clip(first, 0, size).astype(np.int64)
    last = np.clip(last, -1, size - 1).astype(np.int64)
    return first, np.maximum(last - first + 1, 0)


def box_fragments(xlo, xhi, ylo, yhi, width, height):
    """Yield (prim, ix, iy) for every pixel centre inside each primitive's box, in batches,
    primitives in increasing order (so a later primitive's pixels come later)."""
    x0, nx = _spans(np.asarray(xlo, np.float64), np.asarray(xhi, np.float64), width)
    y0, ny = _spans(np.asarray(ylo, np.float64), np.asarray(yhi, np.float64), height)
    counts = nx * ny
    n = counts.size
    start = 0
    csum = np.cumsum(counts)
    while start < n:
        base = csum[start - 1] if start else 0
        stop = int(np.searchsorted(csum, base + _BUDGET, side="right"))
        stop = max(stop, start + 1)
        c = counts[start:stop]
        total = int(c.sum())
        if total:
            prim = np.repeat(np.arange(start, stop), c)
            offs = np.arange(total) - np.repeat(np.cumsum(c) - c, c)
            w = nx[prim]
            yield prim, x0[prim] + offs % w, y0[prim] + offs // w
        start = stop


def triangle_fragments(px, py, width, height):
    """Yield (tri, ix, iy, bary) for the pixel centres inside triangles given by pixel
    coordinates px, py of shape (T, 3); bary (F, 3) are screen-space barycentric weights.
    Both windings are drawn (GGUI culls no faces); degenerate triangles draw nothing."""
    px = np.asarray(px, np.float64)
    py = np.asarray(py, np.float64)
    area = (px[:, 1] - px[:, 0]) * (py[:, 2] - py[:, 0]) - (px[:, 2] - px[:, 0]) * (py[:, 1] - py[:, 0])
    ok = np.isfinite(area) & (area != 0)
    ok &= np.isfinite(px).all(1) & np.isfinite(py).all(1)
    keep = np.nonzero(ok)[0]
    if keep.size == 0:
        return
    px, py, area = px[keep], py[keep], area[keep]
    for t, ix, iy in box_fragments(px.min(1), px.max(1), py.min(1), py.max(1), width, height):
        cx = ix + 0.5
        cy = iy + 0.5
        ax, ay = px[t], py[t]
        inv = 1.0 / area[t]
        # weight of vertex k: signed area of the sub-triangle opposite to it
        w0 = ((ax[:, 1] - cx) * (ay[:, 2] - cy) - (ax[:, 2] - cx) * (ay[:, 1] - cy)) * inv
        w1 = ((ax[:, 2] - cx) * (ay[:, 0] - cy) - (ax[:, 0] - cx) * (ay[:, 2] - cy)) * inv
        e2 = ((ax[:, 0] - cx) * (ay[:, 1] - cy) - (ax[:, 1] - cx) * (ay[:, 0] - cy)) * inv
        w2 = 1.0 - w0 - w1
        # top-left rule: a centre exactly on an edge belongs to the triangle only for a left
        # edge or a horizontal top edge in these y-up coordinates (counter-clockwise: an
        # edge going down, or a horizontal one going left), as lavapipe gives Taichi
        sgn = np.sign(area[t])
        inside = np.ones(t.size, bool)
        for k, w in ((0, w0), (1, w1), (2, e2)):
            a, b = (k + 1) % 3, (k + 2) % 3
            dx = (ax[:, b] - ax[:, a]) * sgn
            dy = (ay[:, b] - ay[:, a]) * sgn
            topleft = (dy < 0) | ((dy == 0) & (dx < 0))
            inside &= (w > 0) | ((w == 0) & topleft)
        if inside.any():
            bary = np.stack([w0[inside], w1[inside], w2[inside]], axis=1)
            yield keep[t[inside]], ix[inside], iy[inside], bary


def write_ordered(rgb, ix, iy, colors):
    """Store fragments in order: where several hit one pixel the last one stays (painter's
    order, as blending opaque fragments in submission order does)."""
    h, w = rgb.shape[:2]
    flat = rgb.reshape(h * w, 3)
    flat[iy * w + ix] = colors


class DepthResolve:
    """Deferred depth test of one renderable: fragments only compete for pixels here (depth
    and a few attributes each); the winners are shaded once at the end (``winners``), so
    hidden fragments cost no shading.  The frame's depth buffer is updated as it goes."""

    def __init__(self, depth, nattr):
        self.width = depth.shape[1]
        self.z = depth.reshape(-1)
        self.prim = np.full(self.z.size, -1, np.int64)
        self.attr = np.zeros((self.z.size, nattr), np.float64)

    def add(self, ix, iy, z, prim, attr):
        pix = iy * self.width + ix
        z = np.asarray(z, np.float32)
        keep = (z > self.z[pix]) & (z <= 1.0) & (z >= 0.0)
        if not keep.any():
            return
        order = np.argsort(z[keep], kind="stable")  # the nearest is written last
        sel = np.nonzero(keep)[0][order]
        pix = pix[sel]
        self.z[pix] = z[sel]
        self.prim[pix] = prim[sel]
        self.attr[pix] = attr[sel]

    def winners(self):
        """(flat pixel indices, primitive ids, attributes) of the fragments that stayed."""
        pix = np.nonzero(self.prim >= 0)[0]
        return pix, self.prim[pix], self.attr[pix]


def to_rgba8(rgb, alpha=None):
    """float colours -> uint8 RGBA (h, w, 4), rounded as a UNORM8 attachment stores them."""
    out = np.empty(rgb.shape[:2] + (4,), np.uint8)
    out[:, :, 3] = 255 if alpha is None else np.rint(alpha.astype(np.float32) * np.float32(255))
    # float32 arithmetic, ties to even: what lavapipe stores (0.3 -> 76, 0.1 -> 26)
    out[:, :, :3] = np.rint(np.clip(rgb, 0.0, 1.0).astype(np.float32) * np.float32(255))
    return out
