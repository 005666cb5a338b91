"""Vectorised numpy CPU rasteriser for ``vkdiff.GUI`` frames.

One :class:`Canvas` holds the frame that is both written to image files and
uploaded to the window, so the pixels saved headless are the pixels shown.

Storage: ``Canvas.buf`` is a ``(height, width)`` array of little-endian
uint32 RGBA words (R in the lowest byte, alpha always 255), row 0 at the
*bottom* (Taichi's and OpenGL's convention), so ``buf.view(uint8)`` can be
handed to ``glTexSubImage2D`` as is.  Coordinates follow Taichi's canvas:
a position ``p`` in ``[0, 1]^2`` maps to pixel space ``p * (width, height)``.
Circles compare integer pixel indices with the centre and lines / triangles
compare pixel centres ``(i + 0.5, j + 0.5)``, as in Taichi; circles and lines
are anti-aliased with coverage ``clamp(radius - distance, 0, 1)``.

Everything is batched: candidate pixels for many shapes are generated at once
with broadcasting (circles: a fixed box per radius class; lines: one short
column of candidates per sample along the major axis; triangles: exact
horizontal spans), filtered into fully covered ("solid") and anti-aliased
rim pixels, and scattered with fancy indexing.  Within one call, rims are
blended first (overlapping rims combine their coverage as sequential blending
of one colour would) and solid pixels are written after them in shape order,
so a later shape's solid pixels replace an earlier one's, as in a loop.
"""

import numpy as np

U32 = np.dtype("<u4")
# Candidate pixels processed per vectorised batch (bounds temporary memory).
_BUDGET = 1 << 20
# Circles with a candidate box wider than this are drawn one by one, clipped.
_BIG = 64


def pack_colors(color):
    """0xRRGGBB int(s) -> packed little-endian RGBA uint32 word(s), alpha 255."""
    c = np.asarray(color)
    if c.dtype.kind == "f" and c.ndim >= 1 and c.shape[-1] in (3, 4):
        # (..., 3/4) float colours in [0, 1] are accepted as a convenience.
        rgb = (np.clip(c[..., :3], 0.0, 1.0) * 255.0 + 0.5).astype(np.uint32)
        c = (rgb[..., 0] << 16) | (rgb[..., 1] << 8) | rgb[..., 2]
    c = c.astype(np.int64).astype(np.uint32) & np.uint32(0xFFFFFF)
    out = ((c >> 16) & 0xFF) | (c & 0xFF00) | ((c & 0xFF) << 16) | np.uint32(0xFF000000)
    return out.astype(np.uint32)


def _unpack_rgb(packed):
    """Packed word(s) -> float32 (..., 3) RGB in 0..255."""
    p = np.asarray(packed, dtype=U32)
    return p[..., None].view(np.uint8)[..., :3].astype(np.float32)


def _ramp_indices(counts):
    """For counts [2, 3] return (owner [0,0,1,1,1], offset [0,1,0,1,2])."""
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    owner = np.repeat(np.arange(len(counts)), counts)
    starts = np.cumsum(counts) - counts
    offset = np.arange(total, dtype=np.int64) - np.repeat(starts, counts)
    return owner, offset


def _chunks(cost, budget=_BUDGET):
    """Split indices 0..n-1 into consecutive runs whose summed cost <= budget."""
    n = len(cost)
    if n == 0:
        return []
    csum = np.cumsum(cost)
    if csum[-1] <= budget:
        return [(0, n)]
    out, start, base = [], 0, 0
    while start < n:
        end = int(np.searchsorted(csum, base + budget, side="right"))
        end = max(end, start + 1)
        out.append((start, end))
        base = csum[end - 1]
        start = end
    return out


class Canvas:
    """A width x height RGBA frame with batched drawing primitives."""

    def __init__(self, width, height, color=0x000000):
        self.width, self.height = int(width), int(height)
        self.buf = np.empty((self.height, self.width), dtype=U32)
        self.flat = self.buf.reshape(-1)
        self.rgba8 = self.buf.view(np.uint8).reshape(self.height, self.width, 4)
        self._keep = None
        self.clear(color)

    # ----------------------------------------------------------- frame access
    def clear(self, color):
        self.buf.fill(pack_colors(color))

    def rgba_bottom_up(self):
        """uint8 (height, width, 4) view, row 0 at the bottom (GL order)."""
        return self.rgba8

    def rgb_top_down(self):
        """uint8 (height, width, 3) copy, row 0 at the top (image files)."""
        return np.ascontiguousarray(self.rgba8[::-1, :, :3])

    def get_image(self):
        """float32 (width, height, 4) in [0, 1], indexed [x, y] like Taichi."""
        return np.ascontiguousarray(self.rgba8.transpose(1, 0, 2), dtype=np.float32) / 255.0

    def set_image(self, img):
        """Copy a (w, h), (w, h, 1..4) float [0,1] or integer image, [x, y] indexed."""
        img = np.asarray(img)
        if img.ndim == 2:
            img = img[:, :, None]
        if img.ndim != 3 or img.shape[2] not in (1, 2, 3, 4):
            raise ValueError(f"set_image: image must be (w, h) or (w, h, 1..4), got shape {img.shape}")
        if img.shape[:2] != (self.width, self.height):
            raise ValueError(
                f"set_image: image resolution {img.shape[:2]} does not match GUI resolution "
                f"{(self.width, self.height)} (images are indexed [x, y])")
        kind = img.dtype.kind
        if kind == "u" or kind == "i":
            if img.dtype == np.uint8:
                u8 = img
            else:
                top = np.iinfo(img.dtype).max if kind == "u" else 255
                u8 = (np.clip(img.astype(np.float64), 0, top) * (255.0 / top) + 0.5).astype(np.uint8)
        elif kind == "f":
            u8 = (np.clip(img.astype(np.float32, copy=False), 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8)
        elif kind == "b":
            u8 = img.astype(np.uint8) * 255
        else:
            raise ValueError(f"set_image: data type {img.dtype} is not supported")
        u8 = u8.transpose(1, 0, 2)  # -> [y, x, c]
        dst = self.rgba8
        c = u8.shape[2]
        if c == 1:
            dst[..., 0] = dst[..., 1] = dst[..., 2] = u8[..., 0]
        else:
            dst[..., 0] = u8[..., 0]
            dst[..., 1] = u8[..., 1]
            dst[..., 2] = u8[..., 2] if c >= 3 else 0
        dst[..., 3] = 255

    # ------------------------------------------------------------ compositing
    def _scatter(self, idx, col):
        if idx.size:
            self.flat[idx] = col

    def _blend(self, idx, alpha, col):
        """flat[idx] = lerp(flat[idx], col, alpha), all gathered before writing.

        Works on packed words, two 8-bit channels per 16-bit lane, with alpha
        quantised to 0..256, so no per-channel unpacking is needed."""
        if idx.size == 0:
            return
        a = (alpha * 256.0 + 0.5).astype(np.uint32)
        na = np.uint32(256) - a
        dst = self.flat[idx]
        src = np.asarray(col, dtype=np.uint32)
        m_rb, m_ga = np.uint32(0x00FF00FF), np.uint32(0xFF00FF00)
        rb = (((src & m_rb) * a + (dst & m_rb) * na) >> np.uint32(8)) & m_rb
        ga = ((src & m_ga) >> np.uint32(8)) * a + ((dst & m_ga) >> np.uint32(8)) * na
        self.flat[idx] = rb | (ga & m_ga)

    def _blend_rims(self, idx, alpha, col):
        """Blend anti-aliased rim pixels of a batch.  Where several rims cover
        one pixel their coverages combine as 1 - prod(1 - alpha), which is
        exactly what blending them one after another gives for one colour;
        with per-shape colours the last shape's colour is used."""
        if idx.size == 0:
            return
        if self._keep is None:  # per-pixel product of (1 - alpha), all ones between uses
            self._keep = np.ones(self.flat.size, dtype=np.float32)
        keep = self._keep
        np.multiply.at(keep, idx, (1.0 - alpha).astype(np.float32))
        pix = np.flatnonzero(keep != 1.0)
        a = 1.0 - keep[pix]
        keep[pix] = 1.0
        if np.ndim(col) > 0:
            last = np.empty(self.flat.size, dtype=U32)
            last[idx] = col
            col = last[pix]
        self._blend(pix, a, col)

    def blend_mask(self, x0, y_top, mask, color):
        """Blend a coverage mask (rows top-down, values 0..1) with its top-left
        pixel at column x0, row y_top (bottom-up row index)."""
        mh, mw = mask.shape
        ys0, ys1 = y_top - mh + 1, y_top + 1  # bottom-up row range of the mask
        cx0, cx1 = max(x0, 0), min(x0 + mw, self.width)
        cy0, cy1 = max(ys0, 0), min(ys1, self.height)
        if cx0 >= cx1 or cy0 >= cy1:
            return
        m = mask[::-1][cy0 - ys0:cy1 - ys0, cx0 - x0:cx1 - x0]
        region = self.rgba8[cy0:cy1, cx0:cx1, :3]
        src = _unpack_rgb(pack_colors(color))
        dst = region.astype(np.float32)
        region[...] = dst + (src - dst) * m[..., None] + 0.5

    # ---------------------------------------------------------------- circles
    def circles(self, cx, cy, radius, color):
        """Anti-aliased discs. cx, cy: pixel-space centres (n,); radius: pixels,
        scalar or (n,); color: packed word, scalar or (n,)."""
        cx = np.asarray(cx, dtype=np.float32).reshape(-1)
        cy = np.asarray(cy, dtype=np.float32).reshape(-1)
        n = cx.size
        r = np.broadcast_to(np.asarray(radius, dtype=np.float32), (n,))
        col = np.asarray(color, dtype=U32)
        per_color = col.ndim > 0
        keep = ((r > 0) & np.isfinite(r) & (cx + r >= 0) & (cx - r <= self.width - 1)
                & (cy + r >= 0) & (cy - r <= self.height - 1))
        if not keep.all():
            cx, cy, r = cx[keep], cy[keep], r[keep]
            if per_color:
                col = col[keep]
        if cx.size == 0:
            return
        # Circles share a b x b candidate box per radius class (b = ceil(2r)); big ones (whose
        # box would be mostly off-frame) get their own box clipped to the frame.
        box = np.clip(np.ceil(2.0 * r), 1, _BIG + 1).astype(np.int64)
        big = box > _BIG
        cost = box * box
        if big.any():
            cost[big] = self.width * self.height
        for s, e in _chunks(cost):
            bs = box[s:e]
            classes = [bs[0]] if bs.min() == bs.max() else np.unique(bs)
            parts = []
            for b in classes:
                sel = slice(None) if len(classes) == 1 else np.nonzero(bs == b)[0]
                ids = np.arange(s, e)[sel] if len(classes) > 1 or b > _BIG else None
                ccol = col[s:e][sel] if per_color else col
                if b > _BIG:
                    for j, i in enumerate(ids):
                        parts.append(self._big_circle(cx[i], cy[i], r[i],
                                                      ccol[j:j + 1] if per_color else col, ids[j:j + 1]))
                else:
                    parts.append(self._circle_class(cx[s:e][sel], cy[s:e][sel], r[s:e][sel],
                                                    ccol, int(b), ids))
            self._apply(parts, per_color)

    def _circle_class(self, cx, cy, r, col, b, ids):
        """Candidates for the circles that share box size b = ceil(2r): pixels
        with non-zero coverage lie strictly within r of the centre, so at most
        b columns from floor(cx - r) + 1 (and likewise rows)."""
        k = np.arange(b, dtype=np.float32)
        x0 = np.floor(cx - r) + 1
        y0 = np.floor(cy - r) + 1
        dx = (x0 - cx)[:, None] + k  # (n, b) offsets of the candidate columns
        dy = (y0 - cy)[:, None] + k
        dx2 = dx * dx
        dy2 = dy * dy
        xi0, yi0 = x0.astype(np.int64), y0.astype(np.int64)
        if xi0.min() < 0 or xi0.max() + b > self.width:
            xi = xi0[:, None] + np.arange(b)
            dx2[(xi < 0) | (xi >= self.width)] = np.inf
        if yi0.min() < 0 or yi0.max() + b > self.height:
            yi = yi0[:, None] + np.arange(b)
            dy2[(yi < 0) | (yi >= self.height)] = np.inf
        d2 = (dy2[:, :, None] + dx2[:, None, :]).reshape(-1)  # (n * b * b)
        itype = np.int32 if self.width * self.height < 2 ** 31 - 1 else np.int64
        base = (yi0 * self.width + xi0).astype(itype)
        offs = (np.arange(b)[:, None] * self.width + np.arange(b)).reshape(-1).astype(itype)
        full = (base[:, None] + offs).reshape(-1)
        rr = r[0] if r.min() == r.max() else r
        return self._classify(full, d2, rr, b * b, col, ids)

    def _big_circle(self, cx, cy, r, col, ids):
        """Candidates of one large circle: its bounding box clipped to the frame."""
        xs = np.arange(max(np.floor(cx - r) + 1, 0), min(np.ceil(cx + r), self.width))
        ys = np.arange(max(np.floor(cy - r) + 1, 0), min(np.ceil(cy + r), self.height))
        d2 = ((ys - cy)[:, None] ** 2 + ((xs - cx) ** 2)[None, :]).reshape(-1)
        full = (ys[:, None] * self.width + xs).reshape(-1).astype(np.int64)
        return self._classify(full, d2, r, max(d2.size, 1), col, ids)

    @staticmethod
    def _classify(full, d2, r, group, col, ids):
        """Split candidates (flat pixel indices `full`, squared distances `d2`;
        each shape owns `group` consecutive candidates) into solid pixels
        (d <= r - 1) and anti-aliased rim pixels (r - 1 < d < r).  r, col and
        ids are scalars or per-shape arrays.  Returns ((solid idx, colours,
        order), (rim idx, alpha, colours, order)); order is None unless ids."""
        uniform = np.ndim(r) == 0
        if uniform:
            r2, rin2 = r * r, ((r - 1.0) ** 2 if r >= 1 else -1.0)
        else:
            rin = r - 1.0
            r2 = np.repeat(r * r, group)
            rin2 = np.repeat(np.where(rin >= 0, rin * rin, -1.0), group)
        ss = np.flatnonzero(d2 <= rin2)
        se = np.flatnonzero((d2 < r2) & (d2 > rin2))
        need = not uniform or np.ndim(col) > 0 or ids is not None
        so, eo = (ss // group, se // group) if need else (None, None)
        alpha = np.clip((r if uniform else r[eo]) - np.sqrt(d2[se]), 0.0, 1.0)
        pick = lambda a, o: a[o] if a is not None and np.ndim(a) > 0 else a
        return ((full[ss], pick(col, so), pick(ids, so)),
                (full[se], alpha, pick(col, eo), pick(ids, eo)))

    def _apply(self, parts, per_color):
        """Blend all rim pixels, then write all solid pixels in shape order
        (a later shape's solid pixel replaces an earlier one, as drawn one by
        one)."""
        if len(parts) == 1:
            (s_idx, s_col, _), (e_idx, alpha, e_col, _) = parts[0]
        else:
            solid = [p[0] for p in parts]
            edge = [p[1] for p in parts]
            s_ord = np.argsort(np.concatenate([p[2] for p in solid]), kind="stable")
            e_ord = np.argsort(np.concatenate([p[3] for p in edge]), kind="stable")
            s_idx = np.concatenate([p[0] for p in solid])[s_ord]
            e_idx = np.concatenate([p[0] for p in edge])[e_ord]
            alpha = np.concatenate([p[1] for p in edge])[e_ord]
            if per_color:
                s_col = np.concatenate([p[1] for p in solid])[s_ord]
                e_col = np.concatenate([p[2] for p in edge])[e_ord]
            else:
                s_col = e_col = solid[0][1]
        self._blend_rims(e_idx, alpha, e_col)
        self._scatter(s_idx, s_col)

    # ------------------------------------------------------------------ lines
    def lines(self, ax, ay, bx, by, radius, color):
        """Anti-aliased capsules of half-width radius between pixel-space points."""
        # Shift by half a pixel so pixel (i, j) is compared at point (i, j).
        ax = np.asarray(ax, dtype=np.float64).reshape(-1) - 0.5
        ay = np.asarray(ay, dtype=np.float64).reshape(-1) - 0.5
        bx = np.asarray(bx, dtype=np.float64).reshape(-1) - 0.5
        by = np.asarray(by, dtype=np.float64).reshape(-1) - 0.5
        n = ax.size
        r = np.broadcast_to(np.asarray(radius, dtype=np.float64), (n,))
        col = np.asarray(color, dtype=U32)
        per_color = col.ndim > 0
        if n == 0:
            return
        # Non-finite segments draw nothing; huge ones are clipped to the frame below.
        ok = np.isfinite(ax) & np.isfinite(ay) & np.isfinite(bx) & np.isfinite(by) & np.isfinite(r)
        if not ok.all():
            r = np.where(ok, r, 0.0)
            ax, ay, bx, by = (np.where(ok, v, 0.0) for v in (ax, ay, bx, by))
        # Major axis u (x when the segment is flatter than 45 degrees), minor v.
        swap = np.abs(by - ay) > np.abs(bx - ax)
        au, av = np.where(swap, ay, ax), np.where(swap, ax, ay)
        bu, bv = np.where(swap, by, bx), np.where(swap, bx, by)
        flip = bu < au
        au, bu = np.where(flip, bu, au), np.where(flip, au, bu)
        av, bv = np.where(flip, bv, av), np.where(flip, av, bv)
        du, dv = bu - au, bv - av
        slope = np.divide(dv, du, out=np.zeros_like(du), where=du > 0)
        half = r * np.sqrt(1.0 + slope * slope)  # minor-axis reach of the capsule
        umax = np.where(swap, self.height, self.width) - 1
        u0 = np.clip(np.ceil(au - r), 0, umax + 1).astype(np.int64)
        u1 = np.clip(np.floor(bu + r), -1, umax).astype(np.int64)
        count = np.maximum(u1 - u0 + 1, 0)
        count[r <= 0] = 0
        b = int(np.floor(2.0 * half.max())) + 1
        uniform_r = r.min() == r.max()
        for s, e in _chunks(count * b):
            seg, off = _ramp_indices(count[s:e])
            if seg.size == 0:
                continue
            seg += s
            m = (u0[seg] + off).astype(np.float64)  # major coordinate of samples
            t = np.clip(np.divide(m - au[seg], du[seg], out=np.zeros_like(m), where=du[seg] > 0), 0, 1)
            c = av[seg] + t * dv[seg]  # minor centre at this sample
            v0 = np.clip(np.ceil(c - half[seg]), -b - 1, max(self.width, self.height) + 1)
            v = v0[:, None] + np.arange(b)  # (S, b) candidate minor coordinates
            pu = (m - au[seg])[:, None]
            pv = v - av[seg][:, None]
            len2 = (du * du + dv * dv)[seg]
            tt = np.clip(np.divide(pu * du[seg][:, None] + pv * dv[seg][:, None], len2[:, None],
                                   out=np.zeros_like(pv), where=len2[:, None] > 0), 0, 1)
            eu = pu - tt * du[seg][:, None]
            ev = pv - tt * dv[seg][:, None]
            d2 = eu * eu + ev * ev
            mi = np.broadcast_to(m[:, None], v.shape).astype(np.int64)
            vi = v.astype(np.int64)
            sw = swap[seg][:, None]
            xi = np.where(sw, vi, mi)
            yi = np.where(sw, mi, vi)
            inside = (xi >= 0) & (xi < self.width) & (yi >= 0) & (yi < self.height)
            d2 = np.where(inside, d2, np.inf).reshape(-1)
            full = (yi * self.width + xi).reshape(-1)
            rs = r[0] if uniform_r else r[seg]
            part = self._classify(full, d2, rs, b, col[seg] if per_color else col, None)
            self._apply([part], per_color)

    # -------------------------------------------------------------- triangles
    def triangles(self, a, b, c, color):
        """Solid triangles (pixel centres inside, edges inclusive), pixel space."""
        a, b, c = (np.asarray(p, dtype=np.float64).reshape(-1, 2) for p in (a, b, c))
        n = a.shape[0]
        col = np.asarray(color, dtype=U32)
        per_color = col.ndim > 0
        if n == 0:
            return
        ys = np.stack([a[:, 1], b[:, 1], c[:, 1]], 1)
        xs = np.stack([a[:, 0], b[:, 0], c[:, 0]], 1)
        bad = ~(np.isfinite(xs).all(1) & np.isfinite(ys).all(1))
        if bad.any():  # non-finite triangles become empty
            xs, ys = np.where(bad[:, None], 0.0, xs), np.where(bad[:, None], -1.0, ys)
        j0 = np.clip(np.floor(ys.min(1)), 0, self.height).astype(np.int64)
        j1 = np.clip(np.ceil(ys.max(1)) - 1, -1, self.height - 1).astype(np.int64)
        i_lo = np.clip(np.floor(xs.min(1)), 0, self.width)
        i_hi = np.clip(np.ceil(xs.max(1)) - 1, -1, self.width - 1)
        rows = np.maximum(j1 - j0 + 1, 0)
        tri, off = _ramp_indices(rows)
        if tri.size == 0:
            return
        yc = (j0[tri] + off) + 0.5
        xl = np.full(tri.size, np.inf)
        xr = np.full(tri.size, -np.inf)
        for p, q in ((0, 1), (1, 2), (2, 0)):
            px, py, qx, qy = xs[tri, p], ys[tri, p], xs[tri, q], ys[tri, q]
            crosses = (yc - py) * (yc - qy) <= 0
            dy = qy - py
            x = np.where(dy != 0, px + (yc - py) * np.divide(qx - px, dy, out=np.zeros_like(dy),
                                                              where=dy != 0), px)
            flat = crosses & (dy == 0)
            xl = np.where(crosses, np.minimum(xl, np.where(flat, np.minimum(px, qx), x)), xl)
            xr = np.where(crosses, np.maximum(xr, np.where(flat, np.maximum(px, qx), x)), xr)
        first = np.maximum(np.ceil(xl - 0.5), i_lo[tri])
        last = np.minimum(np.floor(xr - 0.5), i_hi[tri])
        ok = np.isfinite(xl) & (last >= first)
        first = np.where(ok, first, 0).astype(np.int64)
        width = np.where(ok, last - first + 1, 0).astype(np.int64)
        row, px = _ramp_indices(width)
        if row.size == 0:
            return
        idx = (j0[tri] + off)[row] * self.width + first[row] + px
        self._scatter(idx, col[tri[row]] if per_color else col)
