"""``vkdiff.ui`` device stage (face floor): the compute kernels that rasterise a GGUI frame on the
Vulkan device, written as vkdiff kernels (compiled by vkdiff's own codegen like user kernels):
the frame, input staging, circles, particles and the shared helpers here; triangles, lines and
meshes in :mod:`vkdiff.ui.devtriangles`.

The frame lives in device arrays (:mod:`vkdiff.ui.devdraw`): ``rgb`` (H, W, 3) f32, ``alpha``
(H, W) f32, ``depth`` (H, W) i32 holding the *bits* of the f32 reversed depth (a non-negative
float's bits order as the float does, so an integer ``atomic_max`` is a depth test) and ``win``
(H, W) i32, the winning primitive of the item being drawn (-1: none).

Every item is drawn without locks and without any invocation waiting on another:

* painter's order (canvas circles/triangles/lines): one invocation per primitive over its
  bounding box, ``atomic_max(win, primitive)`` (the last primitive wins, as blending opaque
  fragments in submission order does), then one invocation per pixel writes the winner's colour;
* depth-tested (scene particles/meshes): ``atomic_max(depth, bits(z))`` over all fragments, then
  ``atomic_max(win, LAST - primitive)`` where the fragment's bits equal the stored depth (the
  first primitive wins a tie), then one invocation per pixel shades the winner.

The shading is the numpy rasteriser's (:mod:`vkdiff.ui.render3d`, :mod:`vkdiff.ui.canvas`) in
f32: coverage, depth and Lambert terms agree with it except where f64 and f32 rounding differ
(a pixel centre within float rounding of an edge; a stored colour within rounding of an 8-bit
step).

Uniforms travel in one f32 array ``u``: [0:16] view-projection (row-major), [16:32] view,
[32:35] eye, [35] tan(fov / 2), [36] width, [37] height, [38:41] ambient, [41] number of point
lights, [42:45] constant colour, [45] alpha, [46:50] the projection's rows 2 and 3 on z and w
(P22, P23, P32, P33: depth of a camera-space z).  Point lights are a separate (L, 6) array:
position (in the shading space), colour.
"""

from .. import types as T
from ..lang import api as ti
from ..lang import types_api as tt
from ..launch.kernel import func, kernel, template

LAST = 0x7FFFFFFE  # win value of primitive p under a depth test: LAST - p (first wins a tie)
# (p < LAST, so LAST - p > 0: 0 in the low word of an i64 depth means no winner)
U_SIZE = 50


def nd(dtype, ndim):
    return tt.ndarray(dtype=dtype, ndim=ndim)


# ------------------------------------------------------------------ frame
@kernel
def clear_rgb(rgb: nd(T.f32, 3), r: T.f32, g: T.f32, b: T.f32):
    """The background colour (depth, alpha and win are cleared by buffer fills)."""
    for i, j in ti.ndrange(rgb.shape[0], rgb.shape[1]):
        rgb[i, j, 0] = r
        rgb[i, j, 1] = g
        rgb[i, j, 2] = b


@func
def unorm8(c):
    """float -> 0..255 as a UNORM8 attachment stores it: clamp, * 255 in f32, ties to even."""
    v = ti.min(ti.max(c, 0.0), 1.0) * 255.0
    k = T.i32(v + 0.5)  # rounds half up (v >= 0) ...
    if T.f32(k) - v == 0.5:
        k &= -2  # ... and a tie down to even
    return k


@kernel
def pack_rgba8(rgb: nd(T.f32, 3), alpha: nd(T.f32, 2), out: nd(T.i32, 2)):
    for i, j in alpha:
        r = unorm8(rgb[i, j, 0])
        g = unorm8(rgb[i, j, 1])
        b = unorm8(rgb[i, j, 2])
        a = unorm8(alpha[i, j])
        out[i, j] = r | (g << 8) | (b << 16) | (a << 24)


# ------------------------------------------------------------------ inputs (staging copies)
@kernel
def stage_field(src: template(), dst: nd(T.f32, 2), lo: T.i32, ncomp: template(),
                ndst: template()):
    """dst[k, c] = component c of the lo + k-th element of a vector field (any shape, row-major
    order, as to_numpy().reshape(-1, n)); components past the field's are 0."""
    for I in ti.grouped(src):
        k = 0
        for d in ti.static(range(len(src.shape))):
            k = k * src.shape[d] + I[d]
        k -= lo
        if 0 <= k < dst.shape[0]:
            for c in ti.static(range(ndst)):
                if ti.static(c < ncomp):
                    dst[k, c] = T.f32(src[I][c])
                else:
                    dst[k, c] = 0.0


@kernel
def stage_scalar_field(src: template(), dst: nd(T.f32, 1), lo: T.i32):
    for I in ti.grouped(src):
        k = 0
        for d in ti.static(range(len(src.shape))):
            k = k * src.shape[d] + I[d]
        k -= lo
        if 0 <= k < dst.shape[0]:
            dst[k] = T.f32(src[I])


@kernel
def stage_index_field(src: template(), dst: nd(T.i32, 1), lo: T.i32, add: T.i32):
    """dst[k] = the lo + k-th index of an integer field (flattened, vector elements in order)
    plus add."""
    for I in ti.grouped(src):
        k = 0
        for d in ti.static(range(len(src.shape))):
            k = k * src.shape[d] + I[d]
        if ti.static(len(src.elem_shape) == 0):
            k -= lo
            if 0 <= k < dst.shape[0]:
                dst[k] = T.i32(src[I]) + add
        else:
            for c in ti.static(range(src.elem_shape[0])):
                kc = k * src.elem_shape[0] + c - lo
                if 0 <= kc < dst.shape[0]:
                    dst[kc] = T.i32(src[I][c]) + add


@kernel
def count_translucent(cols: nd(T.f32, 2), out: nd(T.i32, 1)):
    """out[0] += how many RGBA colours have alpha != 1 (those blend, on the host)."""
    for p in range(cols.shape[0]):
        if cols[p, 3] != 1.0:
            ti.atomic_add(out[0], 1)


@func
def to_u8(v, is_u8: template()):
    """sources.image_rgba8 for one value: u8 as it is, a float clamped to [0, 1] and truncated
    (Taichi's to_rgba8)."""
    k = 0
    if ti.static(is_u8):
        k = T.i32(v)
    else:
        k = T.i32(ti.min(ti.max(T.f32(v), 0.0), 1.0) * 255.0)
    return k


@kernel
def image_from_field(src: template(), nch: template(), is_u8: template(), rgb: nd(T.f32, 3),
                     alpha: nd(T.f32, 2)):
    """canvas.set_image of a (width, height) field the window's size: pixel for pixel, the
    8-bit values / 255 (grey fields fill R, G and B)."""
    for x, y in ti.ndrange(src.shape[0], src.shape[1]):
        for c in ti.static(range(3)):
            k = 0
            if ti.static(nch == 0):
                k = to_u8(src[x, y], is_u8)
            elif ti.static(c < nch):
                k = to_u8(src[x, y][c], is_u8)
            rgb[y, x, c] = T.f32(k) / 255.0
        a = 255
        if ti.static(nch == 4):
            a = to_u8(src[x, y][3], is_u8)
        alpha[y, x] = T.f32(a) / 255.0


@kernel
def image_from_packed(src: nd(T.i32, 2), rgb: nd(T.f32, 3), alpha: nd(T.f32, 2)):
    """canvas.set_image of an uploaded RGBA8 image (one word a pixel, indexed [x, y])."""
    for x, y in src:
        v = src[x, y]
        for c in ti.static(range(3)):
            rgb[y, x, c] = T.f32((v >> (8 * c)) & 255) / 255.0
        alpha[y, x] = T.f32((v >> 24) & 255) / 255.0


@kernel
def copy_image(rgb: nd(T.f32, 3), alpha: nd(T.f32, 2), out_rgb: nd(T.f32, 3),
               out_alpha: nd(T.f32, 2)):
    for i, j in alpha:
        for c in ti.static(range(3)):
            out_rgb[i, j, c] = rgb[i, j, c]
        out_alpha[i, j] = alpha[i, j]


# ------------------------------------------------------------------ helpers
@func
def span(lo, hi, size):
    """First pixel and last pixel whose centres lie in [lo, hi] (raster._spans)."""
    first = ti.min(ti.max(T.i32(ti.ceil(lo - 0.5)), 0), size)
    last = ti.min(ti.max(T.i32(ti.floor(hi - 0.5)), -1), size - 1)
    return first, last


@func
def mat4(u, base, x, y, z):
    """Rows of the 4x4 matrix u[base:base + 16] (row-major) times (x, y, z, 1)."""
    r0 = u[base + 0] * x + u[base + 1] * y + u[base + 2] * z + u[base + 3]
    r1 = u[base + 4] * x + u[base + 5] * y + u[base + 6] * z + u[base + 7]
    r2 = u[base + 8] * x + u[base + 9] * y + u[base + 10] * z + u[base + 11]
    r3 = u[base + 12] * x + u[base + 13] * y + u[base + 14] * z + u[base + 15]
    return r0, r1, r2, r3


@func
def color_of(cols, per_vertex, u, p, c):
    v = u[42 + c]
    if per_vertex:
        v = cols[p, c]
    return v


# ------------------------------------------------------------------ canvas circles
@kernel
def circles_win(cen: nd(T.f32, 2), rad: nd(T.f32, 1), per_radius: T.i32, r0: T.f32,
                win: nd(T.i32, 2)):
    h = win.shape[0]
    w = win.shape[1]
    for p in range(cen.shape[0]):
        cx = cen[p, 0] * w
        cy = cen[p, 1] * h
        r = r0
        if per_radius:
            r = ti.abs(rad[p] * h)
        x0, x1 = span(cx - r, cx + r, w)
        y0, y1 = span(cy - r, cy + r, h)
        for iy in range(y0, y1 + 1):
            for ix in range(x0, x1 + 1):
                dx = ix + 0.5 - cx
                dy = iy + 0.5 - cy
                if dx * dx + dy * dy < r * r and p > win[iy, ix]:
                    ti.atomic_max(win[iy, ix], p)


@kernel
def resolve_flat(win: nd(T.i32, 2), rgb: nd(T.f32, 3), cols: nd(T.f32, 2), per_vertex: T.i32,
                 u: nd(T.f32, 1)):
    """Write the winning primitive's colour (painter's order) and reset win."""
    for i, j in win:
        p = win[i, j]
        if p >= 0:
            for c in ti.static(range(3)):
                rgb[i, j, c] = color_of(cols, per_vertex, u, p, c)
            win[i, j] = -1


# ------------------------------------------------------------------ scene particles
@kernel
def particles_setup(pos: nd(T.f32, 2), rad: nd(T.f32, 1), per_radius: T.i32, r0: T.f32,
                    u: nd(T.f32, 1), s: nd(T.f32, 2)):
    """Per particle: pixel centre x, y, pixel radius, camera-space x, y, z, radius, visible."""
    for p in range(s.shape[0]):
        x = pos[p, 0]
        y = pos[p, 1]
        z = pos[p, 2]
        c0, c1, c2, c3 = mat4(u, 0, x, y, z)
        r = r0
        if per_radius:
            r = rad[p]
        ex = x - u[32]
        ey = y - u[33]
        ez = z - u[34]
        dist = ti.sqrt(ex * ex + ey * ey + ez * ez)
        rpx = r / (u[35] * dist) * u[36] * 0.5
        v0, v1, v2, v3 = mat4(u, 16, x, y, z)
        ok = 0.0
        if c3 > 0 and rpx > 0 and rpx < 1e30:
            ok = 1.0
        s[p, 0] = (c0 / c3 + 1.0) * 0.5 * u[36]
        s[p, 1] = (c1 / c3 + 1.0) * 0.5 * u[37]
        s[p, 2] = rpx
        s[p, 3] = v0 / v3
        s[p, 4] = v1 / v3
        s[p, 5] = v2 / v3
        s[p, 6] = r
        s[p, 7] = ok


@func
def particle_fragments(s, u, depth, win, p, mode: template()):
    """The fragments of particle p: mode 0 raises depth (i32 bits), mode 1 marks p where its
    depth is the stored one (win), mode 2 raises (depth bits << 32 | LAST - p) (i64)."""
    h = depth.shape[0]
    w = depth.shape[1]
    x = s[p, 0]
    y = s[p, 1]
    r = s[p, 2]
    vz0 = s[p, 5]
    rad = s[p, 6]
    p22 = u[46]
    p23 = u[47]
    p32 = u[48]
    p33 = u[49]
    code = LAST - p
    # the nearest depth any fragment of the particle can have (its front point): a pixel
    # already nearer than that is skipped with one read, before any square root
    vf = vz0 + rad
    zf = (p22 * vf + p23) / (p32 * vf + p33)
    front = ti.bit_cast(ti.min(ti.max(zf, 0.0), 1.0), T.i32)
    x0, x1 = span(x - r, x + r, w)
    y0, y1 = span(y - r, y + r, h)
    for iy in range(y0, y1 + 1):
        dy = (iy + 0.5 - y) / r
        for ix in range(x0, x1 + 1):
            dx = (ix + 0.5 - x) / r
            d2 = dx * dx + dy * dy
            stored = 0
            if ti.static(mode == 2):
                stored = T.i32(depth[iy, ix] >> 32)
            else:
                stored = depth[iy, ix]
            if d2 < 1.0 and front >= stored:
                vz = vz0 + ti.sqrt(1.0 - d2) * rad
                z = (p22 * vz + p23) / (p32 * vz + p33)
                if 0.0 <= z <= 1.0:
                    bits = ti.bit_cast(z, T.i32)
                    # a plain read first: most fragments of a crowd are hidden, and skipping
                    # their atomics is most of the speed (the atomic decides the rest)
                    if ti.static(mode == 0):
                        if bits > depth[iy, ix]:
                            ti.atomic_max(depth[iy, ix], bits)
                    elif ti.static(mode == 1):
                        if bits == depth[iy, ix] and code > win[iy, ix]:
                            ti.atomic_max(win[iy, ix], code)
                    else:
                        key = (T.i64(bits) << 32) | T.i64(code)
                        if key > depth[iy, ix]:
                            ti.atomic_max(depth[iy, ix], key)


@kernel
def particles_depth(s: nd(T.f32, 2), u: nd(T.f32, 1), depth: nd(T.i32, 2)):
    for p in range(s.shape[0]):
        if s[p, 7] > 0:
            particle_fragments(s, u, depth, depth, p, 0)


@kernel
def particles_win(s: nd(T.f32, 2), u: nd(T.f32, 1), depth: nd(T.i32, 2), win: nd(T.i32, 2)):
    for p in range(s.shape[0]):
        if s[p, 7] > 0:
            particle_fragments(s, u, depth, win, p, 1)


@kernel
def particles_depth64(s: nd(T.f32, 2), u: nd(T.f32, 1), zw: nd(T.i64, 2)):
    for p in range(s.shape[0]):
        if s[p, 7] > 0:
            particle_fragments(s, u, zw, zw, p, 2)


@func
def lambert(u, lights, nlights: template(), base_r, base_g, base_b, px, py, pz, nx, ny, nz,
            two_sided):
    """render3d.lambert for one fragment; lights (L, 6): position (in the shading space),
    colour; nlights a compile-time count (a run-time loop is 4x slower on lavapipe)."""
    out_r = base_r * u[38]
    out_g = base_g * u[39]
    out_b = base_b * u[40]
    nn = ti.max(ti.sqrt(nx * nx + ny * ny + nz * nz), 1e-20)
    nx /= nn
    ny /= nn
    nz /= nn
    for k in ti.static(range(nlights)):
        lx = lights[k, 0] - px
        ly = lights[k, 1] - py
        lz = lights[k, 2] - pz
        ll = ti.max(ti.sqrt(lx * lx + ly * ly + lz * lz), 1e-20)
        f = (lx / ll) * nx + (ly / ll) * ny + (lz / ll) * nz
        if two_sided:
            f = ti.abs(f)
        else:
            f = ti.max(f, 0.0)
        out_r += f * base_r * lights[k, 3]
        out_g += f * base_g * lights[k, 4]
        out_b += f * base_b * lights[k, 5]
    return out_r, out_g, out_b


@func
def shade_particle(s, cols, per_vertex, u, lights, nlights: template(), rgb, p, i, j):
    r = s[p, 2]
    dx = (j + 0.5 - s[p, 0]) / r
    dy = (i + 0.5 - s[p, 1]) / r
    nz = ti.sqrt(ti.max(1.0 - dx * dx - dy * dy, 0.0))
    rad = s[p, 6]
    br = color_of(cols, per_vertex, u, p, 0)
    bg = color_of(cols, per_vertex, u, p, 1)
    bb = color_of(cols, per_vertex, u, p, 2)
    cr, cg, cb = lambert(u, lights, nlights, br, bg, bb, s[p, 3] + dx * rad, s[p, 4] + dy * rad,
                         s[p, 5] + nz * rad, dx, dy, nz, 0)
    rgb[i, j, 0] = cr
    rgb[i, j, 1] = cg
    rgb[i, j, 2] = cb


@kernel
def particles_shade(s: nd(T.f32, 2), cols: nd(T.f32, 2), per_vertex: T.i32, u: nd(T.f32, 1),
                    lights: nd(T.f32, 2), nlights: template(), win: nd(T.i32, 2),
                    rgb: nd(T.f32, 3)):
    for i, j in win:
        q = win[i, j]
        if q >= 0:
            shade_particle(s, cols, per_vertex, u, lights, nlights, rgb, LAST - q, i, j)
            win[i, j] = -1


@kernel
def particles_shade64(s: nd(T.f32, 2), cols: nd(T.f32, 2), per_vertex: T.i32,
                      u: nd(T.f32, 1), lights: nd(T.f32, 2), nlights: template(),
                      zw: nd(T.i64, 2),
                      rgb: nd(T.f32, 3)):
    for i, j in zw:
        q = T.i32(zw[i, j] & 0xFFFFFFFF)
        if q > 0:
            shade_particle(s, cols, per_vertex, u, lights, nlights, rgb, LAST - q, i, j)
            zw[i, j] = zw[i, j] >> 32 << 32
