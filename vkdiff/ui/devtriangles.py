"""``vkdiff.ui`` device stage (face floor): the triangle kernels of a GGUI frame on the device --
canvas triangles and lines (painter's order), scene meshes (depth-tested, perspective-correct
Lambert shading) and the generated normals.  The frame, the conventions (``win``, depth bits,
uniforms) and the shared helpers are :mod:`vkdiff.ui.devkernels`'s."""

from .. import types as T
from ..lang import api as ti
from ..launch.kernel import func, kernel, template
from .devkernels import LAST, color_of, lambert, mat4, nd, span, unorm8


# ------------------------------------------------------------------ triangles
@func
def edge_ok(w, xa, ya, xb, yb, sgn):
    """raster.triangle_fragments' coverage of one edge (a -> b opposite the vertex of weight
    w): inside, or exactly on it when it is a top-left edge (y-up, counter-clockwise)."""
    dx = (xb - xa) * sgn
    dy = (yb - ya) * sgn
    topleft = dy < 0 or (dy == 0 and dx < 0)
    return w > 0 or (w == 0 and topleft)


@func
def bary_at(x0, y0, x1, y1, x2, y2, cx, cy, inv):
    w0 = ((x1 - cx) * (y2 - cy) - (x2 - cx) * (y1 - cy)) * inv
    w1 = ((x2 - cx) * (y0 - cy) - (x0 - cx) * (y2 - cy)) * inv
    e2 = ((x0 - cx) * (y1 - cy) - (x1 - cx) * (y0 - cy)) * inv
    return w0, w1, e2


@func
def corner(idx, indexed, t, k):
    v = 3 * t + k
    if indexed:
        v = idx[v]
    return v


@func
def tri_fragments(vx, idx, indexed, depth, win, t, mode: template()):
    """The pixels of triangle t (vertices vx[v, 0:4] = pixel x, y, depth, clip w): mode 0
    painter's order (atomic_max(win, t)); 1 raises the depth bits; 2 marks t where its depth
    is the stored one; 3 raises (depth bits << 32 | LAST - t) (i64)."""
    h = win.shape[0]
    w = win.shape[1]
    a = corner(idx, indexed, t, 0)
    b = corner(idx, indexed, t, 1)
    c = corner(idx, indexed, t, 2)
    x0 = vx[a, 0]
    y0 = vx[a, 1]
    x1 = vx[b, 0]
    y1 = vx[b, 1]
    x2 = vx[c, 0]
    y2 = vx[c, 1]
    area = (x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0)
    nv = vx.shape[0]
    ok = 0 <= a < nv and 0 <= b < nv and 0 <= c < nv  # (an index out of range draws nothing)
    ok = ok and area != 0 and ti.abs(area) < 1e38 and ti.abs(x0) < 1e38 and ti.abs(x1) < 1e38 and \
        ti.abs(x2) < 1e38 and ti.abs(y0) < 1e38 and ti.abs(y1) < 1e38 and ti.abs(y2) < 1e38
    if ti.static(mode != 0):
        ok = ok and vx[a, 3] > 1e-9 and vx[b, 3] > 1e-9 and vx[c, 3] > 1e-9
    if ok:
        sgn = 1.0
        if area < 0:
            sgn = -1.0
        inv = 1.0 / area
        z0 = vx[a, 2]
        z1 = vx[b, 2]
        z2 = vx[c, 2]
        code = LAST - t
        xa, xb = span(ti.min(x0, x1, x2), ti.max(x0, x1, x2), w)
        ya, yb = span(ti.min(y0, y1, y2), ti.max(y0, y1, y2), h)
        for iy in range(ya, yb + 1):
            for ix in range(xa, xb + 1):
                cx = ix + 0.5
                cy = iy + 0.5
                w0, w1, e2 = bary_at(x0, y0, x1, y1, x2, y2, cx, cy, inv)
                if edge_ok(w0, x1, y1, x2, y2, sgn) and edge_ok(w1, x2, y2, x0, y0, sgn) and \
                        edge_ok(e2, x0, y0, x1, y1, sgn):
                    if ti.static(mode == 0):
                        if t > win[iy, ix]:
                            ti.atomic_max(win[iy, ix], t)
                    else:
                        z = w0 * z0 + w1 * z1 + (1.0 - w0 - w1) * z2
                        if 0.0 <= z <= 1.0:
                            bits = ti.bit_cast(z, T.i32)
                            if ti.static(mode == 1):
                                if bits > depth[iy, ix]:
                                    ti.atomic_max(depth[iy, ix], bits)
                            elif ti.static(mode == 2):
                                if bits == depth[iy, ix] and code > win[iy, ix]:
                                    ti.atomic_max(win[iy, ix], code)
                            else:
                                key = (T.i64(bits) << 32) | T.i64(code)
                                if key > depth[iy, ix]:
                                    ti.atomic_max(depth[iy, ix], key)


@kernel
def tris2d_win(vx: nd(T.f32, 2), idx: nd(T.i32, 1), indexed: T.i32, ntri: T.i32,
               win: nd(T.i32, 2)):
    for t in range(ntri):
        tri_fragments(vx, idx, indexed, win, win, t, 0)


@kernel
def tris2d_resolve(vx: nd(T.f32, 2), idx: nd(T.i32, 1), indexed: T.i32, cols: nd(T.f32, 2),
                   per_vertex: T.i32, u: nd(T.f32, 1), win: nd(T.i32, 2), rgb: nd(T.f32, 3)):
    """Painter's order: the winning triangle's colours interpolated at the pixel centre."""
    for i, j in win:
        t = win[i, j]
        if t >= 0:
            a = corner(idx, indexed, t, 0)
            b = corner(idx, indexed, t, 1)
            c = corner(idx, indexed, t, 2)
            x0 = vx[a, 0]
            y0 = vx[a, 1]
            x1 = vx[b, 0]
            y1 = vx[b, 1]
            x2 = vx[c, 0]
            y2 = vx[c, 1]
            inv = 1.0 / ((x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0))
            w0, w1, e2 = bary_at(x0, y0, x1, y1, x2, y2, j + 0.5, i + 0.5, inv)
            w2 = 1.0 - w0 - w1
            for ch in ti.static(range(3)):
                rgb[i, j, ch] = (w0 * color_of(cols, per_vertex, u, a, ch)
                                 + w1 * color_of(cols, per_vertex, u, b, ch)
                                 + w2 * color_of(cols, per_vertex, u, c, ch))
            win[i, j] = -1


@kernel
def points2d_to_pixels(pos: nd(T.f32, 2), vx: nd(T.f32, 2), w: T.f32, h: T.f32):
    for v in range(pos.shape[0]):
        vx[v, 0] = pos[v, 0] * w
        vx[v, 1] = pos[v, 1] * h
        vx[v, 2] = 0.0
        vx[v, 3] = 1.0


@kernel
def line_quads(pos: nd(T.f32, 2), idx: nd(T.i32, 1), indexed: T.i32, cols: nd(T.f32, 2),
               per_vertex: T.i32, u: nd(T.f32, 1), half_width: T.f32, vx: nd(T.f32, 2),
               qcols: nd(T.f32, 2)):
    """canvas.lines: segment s -> triangles 2s, 2s + 1 of a quad half_width (in heights)
    each side (canvas.line_quads), as pixel-coordinate vertices with 8-bit-rounded colours.
    One invocation a corner: corner k of 6 (q00 q01 q10 | q10 q01 q11) is at p1 for k = 2, 3,
    5 (else p0), on the + side of the tangent for k = 0, 2, 3."""
    w = u[36]
    h = u[37]
    aspect = w / h
    for q in range(vx.shape[0]):
        sg = q // 6
        k = q % 6
        a = 2 * sg
        b = 2 * sg + 1
        if indexed:
            a = idx[a]
            b = idx[b]
        nv = pos.shape[0]
        x = 0.0
        y = 0.0
        if 0 <= a < nv and 0 <= b < nv:
            dx = (pos[b, 0] - pos[a, 0]) * aspect
            dy = pos[b, 1] - pos[a, 1]
            dn = ti.sqrt(dx * dx + dy * dy)
            dx /= dn
            dy /= dn
            tx = -dy * half_width / aspect
            ty = dx * half_width
            v = a
            if k == 2 or k == 3 or k == 5:
                v = b
            if not (k == 0 or k == 2 or k == 3):
                tx = -tx
                ty = -ty
            x = (pos[v, 0] + tx) * w
            y = (pos[v, 1] + ty) * h
            for c in ti.static(range(3)):
                qcols[q, c] = unorm8(color_of(cols, per_vertex, u, v, c)) / 255.0
        vx[q, 0] = x
        vx[q, 1] = y
        vx[q, 2] = 0.0
        vx[q, 3] = 1.0


# ------------------------------------------------------------------ scene meshes
@kernel
def mesh_vertices(pos: nd(T.f32, 2), u: nd(T.f32, 1), model: nd(T.f32, 1), has_model: T.i32,
                  vx: nd(T.f32, 2)):
    """Per vertex: pixel x, y, reversed depth, clip w (render3d.View.to_pixels)."""
    for v in range(pos.shape[0]):
        x = pos[v, 0]
        y = pos[v, 1]
        z = pos[v, 2]
        if has_model:
            x, y, z, _w = mat4(model, 0, pos[v, 0], pos[v, 1], pos[v, 2])
        c0, c1, c2, c3 = mat4(u, 0, x, y, z)
        vx[v, 0] = (c0 / c3 + 1.0) * 0.5 * u[36]
        vx[v, 1] = (c1 / c3 + 1.0) * 0.5 * u[37]
        vx[v, 2] = c2 / c3
        vx[v, 3] = c3


@kernel
def mesh_depth(vx: nd(T.f32, 2), idx: nd(T.i32, 1), indexed: T.i32, ntri: T.i32,
               depth: nd(T.i32, 2)):
    for t in range(ntri):
        tri_fragments(vx, idx, indexed, depth, depth, t, 1)


@kernel
def mesh_win(vx: nd(T.f32, 2), idx: nd(T.i32, 1), indexed: T.i32, ntri: T.i32,
             depth: nd(T.i32, 2), win: nd(T.i32, 2)):
    for t in range(ntri):
        tri_fragments(vx, idx, indexed, depth, win, t, 2)


@kernel
def mesh_depth64(vx: nd(T.f32, 2), idx: nd(T.i32, 1), indexed: T.i32, ntri: T.i32,
                 zw: nd(T.i64, 2)):
    for t in range(ntri):
        tri_fragments(vx, idx, indexed, zw, zw, t, 3)


@func
def shade_mesh(vx, idx, indexed, pos, nrm, cols, per_vertex, u, lights, nlights: template(),
               two_sided, rgb, t, i, j):
    a = corner(idx, indexed, t, 0)
    b = corner(idx, indexed, t, 1)
    c = corner(idx, indexed, t, 2)
    x0 = vx[a, 0]
    y0 = vx[a, 1]
    x1 = vx[b, 0]
    y1 = vx[b, 1]
    x2 = vx[c, 0]
    y2 = vx[c, 1]
    inv = 1.0 / ((x1 - x0) * (y2 - y0) - (x2 - x0) * (y1 - y0))
    w0, w1, e2 = bary_at(x0, y0, x1, y1, x2, y2, j + 0.5, i + 0.5, inv)
    w2 = 1.0 - w0 - w1
    # perspective-correct weights
    p0 = w0 / vx[a, 3]
    p1 = w1 / vx[b, 3]
    p2 = w2 / vx[c, 3]
    ps = p0 + p1 + p2
    p0 /= ps
    p1 /= ps
    p2 /= ps
    px = p0 * pos[a, 0] + p1 * pos[b, 0] + p2 * pos[c, 0]
    py = p0 * pos[a, 1] + p1 * pos[b, 1] + p2 * pos[c, 1]
    pz = p0 * pos[a, 2] + p1 * pos[b, 2] + p2 * pos[c, 2]
    nx = p0 * nrm[a, 0] + p1 * nrm[b, 0] + p2 * nrm[c, 0]
    ny = p0 * nrm[a, 1] + p1 * nrm[b, 1] + p2 * nrm[c, 1]
    nz = p0 * nrm[a, 2] + p1 * nrm[b, 2] + p2 * nrm[c, 2]
    br = (p0 * color_of(cols, per_vertex, u, a, 0) + p1 * color_of(cols, per_vertex, u, b, 0)
          + p2 * color_of(cols, per_vertex, u, c, 0))
    bg = (p0 * color_of(cols, per_vertex, u, a, 1) + p1 * color_of(cols, per_vertex, u, b, 1)
          + p2 * color_of(cols, per_vertex, u, c, 1))
    bb = (p0 * color_of(cols, per_vertex, u, a, 2) + p1 * color_of(cols, per_vertex, u, b, 2)
          + p2 * color_of(cols, per_vertex, u, c, 2))
    cr, cg, cb = lambert(u, lights, nlights, br, bg, bb, px, py, pz, nx, ny, nz, two_sided)
    rgb[i, j, 0] = cr
    rgb[i, j, 1] = cg
    rgb[i, j, 2] = cb


@kernel
def mesh_shade(vx: nd(T.f32, 2), idx: nd(T.i32, 1), indexed: T.i32, pos: nd(T.f32, 2),
               nrm: nd(T.f32, 2), cols: nd(T.f32, 2), per_vertex: T.i32, u: nd(T.f32, 1),
               lights: nd(T.f32, 2), nlights: template(), two_sided: T.i32,
               win: nd(T.i32, 2), rgb: nd(T.f32, 3)):
    for i, j in win:
        q = win[i, j]
        if q >= 0:
            shade_mesh(vx, idx, indexed, pos, nrm, cols, per_vertex, u, lights, nlights,
                       two_sided, rgb, LAST - q, i, j)
            win[i, j] = -1


@kernel
def mesh_shade64(vx: nd(T.f32, 2), idx: nd(T.i32, 1), indexed: T.i32, pos: nd(T.f32, 2),
                 nrm: nd(T.f32, 2), cols: nd(T.f32, 2), per_vertex: T.i32, u: nd(T.f32, 1),
                 lights: nd(T.f32, 2), nlights: template(), two_sided: T.i32,
                 zw: nd(T.i64, 2), rgb: nd(T.f32, 3)):
    for i, j in zw:
        q = T.i32(zw[i, j] & 0xFFFFFFFF)
        if q > 0:
            shade_mesh(vx, idx, indexed, pos, nrm, cols, per_vertex, u, lights, nlights,
                       two_sided, rgb, LAST - q, i, j)
            zw[i, j] = zw[i, j] >> 32 << 32


@kernel
def face_normals_add(pos: nd(T.f32, 2), idx: nd(T.i32, 1), indexed: T.i32, ntri: T.i32,
                     acc: nd(T.f32, 2), cnt: nd(T.i32, 1)):
    """scene.gen_normals: each face's unit normal (a - b) x (a - c) added to its corners."""
    for t in range(ntri):
        a = corner(idx, indexed, t, 0)
        b = corner(idx, indexed, t, 1)
        c = corner(idx, indexed, t, 2)
        nv = pos.shape[0]
        if not (0 <= a < nv and 0 <= b < nv and 0 <= c < nv):
            continue
        ux = pos[a, 0] - pos[b, 0]
        uy = pos[a, 1] - pos[b, 1]
        uz = pos[a, 2] - pos[b, 2]
        vx_ = pos[a, 0] - pos[c, 0]
        vy = pos[a, 1] - pos[c, 1]
        vz = pos[a, 2] - pos[c, 2]
        nx = uy * vz - uz * vy
        ny = uz * vx_ - ux * vz
        nz = ux * vy - uy * vx_
        nn = ti.sqrt(nx * nx + ny * ny + nz * nz)
        nx /= nn
        ny /= nn
        nz /= nn
        for k in ti.static(range(3)):
            v = corner(idx, indexed, t, k)
            ti.atomic_add(acc[v, 0], nx)
            ti.atomic_add(acc[v, 1], ny)
            ti.atomic_add(acc[v, 2], nz)
            ti.atomic_add(cnt[v], 1)


@kernel
def normals_average(acc: nd(T.f32, 2), cnt: nd(T.i32, 1)):
    for v in range(acc.shape[0]):
        if cnt[v] > 0:
            for k in ti.static(range(3)):
                acc[v, k] /= T.f32(cnt[v])
            cnt[v] = 0


@kernel
def zero2(a: nd(T.f32, 2)):
    for I in ti.grouped(a):
        a[I] = 0.0
