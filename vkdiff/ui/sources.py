"""``vkdiff.ui`` input stage: what a drawing call is given, as numpy arrays.

Taichi's GGUI copies every field, ndarray or numpy array it is handed into a vertex buffer at
call time (python/taichi/ui/staging_buffer.py); this module does the same on the host: fields
and ndarrays are read back with ``to_numpy()`` when the call is made, so later kernel launches
do not change a frame already described.  Images follow Taichi's ``to_rgba8``: ``u8`` values are
used as they are, float values are clamped to [0, 1] and truncated to 8 bits (``c * 255`` cast
to an unsigned int), a 2D field or array is a grey image.  Bad input raises a vkdiff error type
(also a ``TypeError``/``ValueError``).
"""

import numbers

import numpy as np

from ..errors import VkdiffTypeError, VkdiffValueError


def as_array(x, name):
    """numpy array of a field, ndarray, numpy array, list or tuple."""
    if x is None:
        raise VkdiffTypeError(f"ti.ui: {name} is None")
    if hasattr(x, "to_numpy") and not isinstance(x, np.ndarray):
        x = x.to_numpy()
        if isinstance(x, dict):
            raise VkdiffTypeError(f"ti.ui: {name} must be a scalar/vector field, ndarray or numpy "
                                  f"array, not a struct field")
    try:
        return np.asarray(x)
    except Exception as e:  # noqa: BLE001 - report what was given
        raise VkdiffTypeError(f"ti.ui: {name} cannot be read as an array ({e})") from None


def points(x, dims, name):
    """(N, dims) float32 positions from a vector field/array of 2 or 3 components (a
    2-component input gets z = 0 when dims is 3, as Taichi's copy_all_to_vbo does)."""
    a = as_array(x, name)
    if a.ndim == 1 and a.size in (2, 3) and not hasattr(x, "shape"):
        a = a[None]
    if a.ndim < 2 or a.shape[-1] not in (2, 3):
        raise VkdiffValueError(f"ti.ui: {name} must be a field of 2D/3D vectors, got shape {a.shape}")
    a = a.reshape(-1, a.shape[-1]).astype(np.float32)
    if a.shape[1] < dims:
        a = np.concatenate([a, np.zeros((a.shape[0], dims - a.shape[1]), np.float32)], axis=1)
    return a[:, :dims]


def color3(color, name="color"):
    """One RGB colour as a float32 (3,) array."""
    c = as_array(color, name).astype(np.float32).reshape(-1)
    if c.size not in (3, 4):
        raise VkdiffValueError(f"ti.ui: {name} must be 3 floats (RGB in [0, 1]), got {color!r}")
    return c[:3]


def per_vertex_colors(colors, n, name="per_vertex_color"):
    """(n, 3) float32 colours from a field of 3- or 4-vectors (alpha is dropped)."""
    c = as_array(colors, name)
    if c.ndim < 2 or c.shape[-1] not in (3, 4):
        raise VkdiffValueError(f"ti.ui: {name} must be a field of 3D/4D vectors, got shape {c.shape}")
    c = c.reshape(-1, c.shape[-1])[:, :3].astype(np.float32)
    if c.shape[0] < n:
        raise VkdiffValueError(f"ti.ui: {name} has {c.shape[0]} entries, fewer than the "
                               f"{n} vertices")
    return c[:n]


def vertex_rgba(color, per_vertex_color, n):
    """(n, 4) colours with alpha (1 unless per_vertex_color has a 4th component)."""
    if per_vertex_color is not None:
        c = as_array(per_vertex_color, "per_vertex_color")
        if c.ndim >= 2 and c.shape[-1] == 4 and c.reshape(-1, 4).shape[0] >= n:
            return c.reshape(-1, 4)[:n].astype(np.float64)
    rgb = vertex_colors(color, per_vertex_color, n).astype(np.float64)
    return np.concatenate([rgb, np.ones((n, 1))], axis=1)


def has_alpha(per_vertex_color):
    """Whether per-vertex colours have a 4th (alpha) component (without reading them)."""
    x = per_vertex_color
    if x is None:
        return False
    es = getattr(x, "elem_shape", None)
    if es is not None and hasattr(x, "to_numpy"):
        return tuple(es) == (4,)
    return np.shape(x)[-1:] == (4,)


def vertex_colors(color, per_vertex_color, n):
    """(n, 3) colours: per-vertex ones when given, else the one colour for all."""
    if per_vertex_color is not None:
        return per_vertex_colors(per_vertex_color, n)
    return np.broadcast_to(color3(color), (n, 3))


def scalars(x, n, name):
    """(n,) float32 per-vertex values (per_vertex_radius)."""
    a = as_array(x, name).astype(np.float32).reshape(-1)
    if a.size < n:
        raise VkdiffValueError(f"ti.ui: {name} has {a.size} entries, fewer than the {n} vertices")
    return a[:n]


def indices(x, n_vertices, group, name="indices"):
    """int64 vertex indices (a flat field of 2/3 per primitive, or a vector field)."""
    a = as_array(x, name)
    if a.dtype.kind not in "iu":
        raise VkdiffTypeError(f"ti.ui: {name} must hold integers, got dtype {a.dtype}")
    a = a.reshape(-1).astype(np.int64)
    if a.size and (a.min() < 0 or a.max() >= n_vertices):
        raise VkdiffValueError(f"ti.ui: {name} holds {a.min()}..{a.max()}, outside the "
                               f"{n_vertices} vertices")
    return a[: a.size - a.size % group]


def number(x, name):
    if not isinstance(x, numbers.Real):
        try:
            x = float(np.asarray(x).reshape(()))
        except Exception:  # noqa: BLE001
            raise VkdiffTypeError(f"ti.ui: {name} must be a number, got {x!r}") from None
    return float(x)


def image_rgba8(img):
    """(width, height, 4) uint8 image, indexed [x, y] with y up, like Taichi's staging image."""
    a = as_array(img, "image")
    if a.ndim == 2:
        a = np.repeat(a[:, :, None], 3, axis=2)
    elif a.ndim == 4 and a.shape[3] == 1:  # a matrix field with one column
        a = a[:, :, :, 0]
    if a.ndim != 3 or not 1 <= a.shape[2] <= 4:
        raise VkdiffValueError("ti.ui: the image must be a (width, height) grey or (width, height, "
                               f"channels) field/array, got shape {a.shape}")
    if a.dtype == np.uint8:
        u = a
    elif a.dtype.kind == "f":
        u = (np.clip(a.astype(np.float32), 0.0, 1.0) * np.float32(255)).astype(np.uint8)
    else:
        raise VkdiffTypeError(f"ti.ui: dtype of the image must be u8 or f32, got {a.dtype}")
    out = np.zeros(a.shape[:2] + (4,), np.uint8)
    out[:, :, 3] = 255
    out[:, :, : u.shape[2]] = u
    return out
