"""Face floor: the fast GUI, ``ti.GUI(..., fast_gui=True)`` and ``GUI.img``, as in Taichi 1.7.4.

Under ``fast_gui`` Taichi keeps the frame as ``GUI.img``: a flat numpy uint32 array of
``width * height`` packed pixels, ``0x00RRGGBB`` (``(r << 16) + (g << 8) + b``; on macOS
``0xFFBBGGRR``, alpha set, as Taichi packs it there), row-major with row 0 at the *top*:
pixel ``(i, j)`` of an image indexed ``[x, y]`` (y up) lands at ``img[(h - 1 - j) * w + i]``.
Float channels become ``min(255, max(0, int(c * 255)))`` (truncation, as Taichi), u8 channels are
taken as they are; alpha, when the field has 4 channels, is dropped.

``set_image`` of a ``ti.Vector.field`` (3 or 4 channels, any offset) runs one device kernel,
:func:`_pack_field`, that reads the field where it lives and writes the packed frame into a u32
ndarray on the device; the one readback, into ``GUI.img``, is the copy the frame is presented
from (the numpy canvas of :mod:`vkdiff.gui.raster` gets the same pixels, converted in one
vectorised pass). No ``to_numpy`` of the source field. Anything else (numpy arrays, scalar fields,
other dtypes) is packed on the host with the same rounding rules.

This is the device-image route of ``ti.GUI`` that the device-drawing work (issue 30) builds on;
it only imports downward (lang, launch).
"""
import platform

import numpy as np

from .. import types as T
from ..lang import api
from ..lang.ndarray import NdarrayType, ndarray
from ..launch.kernel import kernel, template

__all__ = ['FastImage', 'os_name']


def os_name():
    """Taichi's ``taichi._lib.utils.get_os_name()``: 'win', 'osx' or 'linux'."""
    name = platform.platform()
    if name.lower().startswith('darwin') or name.lower().startswith('macos'):
        return 'osx'
    if name.lower().startswith('windows'):
        return 'win'
    if name.lower().startswith('linux'):
        return 'linux'
    if 'bsd' in name.lower():
        return 'unix'
    raise RuntimeError(f"Unknown Platform: {name}")


_OSX = os_name() == 'osx'
_DEVICE_DTYPES = (T.f16, T.f32, T.f64, T.u8)  # (Taichi's fast GUI: f32, f64, u8)


@kernel
def _pack_field(img: template(), out: NdarrayType(T.u32, 1), i0: template(), j0: template(),
                is_float: template(), osx: template()):
    """out[(h - 1 - j) * w + i] = packed RGB of img[i + i0, j + j0] (Taichi's
    vector_to_fast_image, with the row flip written as the destination index)."""
    for i, j in api.ndrange(img.shape[0], img.shape[1]):
        c = img[i + i0, img.shape[1] + j0 - 1 - j]
        r = 0
        g = 0
        b = 0
        if api.static(is_float):
            r = api.min(255, api.max(0, int(c[0] * 255)))
            g = api.min(255, api.max(0, int(c[1] * 255)))
            b = api.min(255, api.max(0, int(c[2] * 255)))
        else:
            r = int(c[0])
            g = int(c[1])
            b = int(c[2])
        idx = j * img.shape[0] + i
        if api.static(osx):
            out[idx] = T.u32((b << 16) + (g << 8) + r) | T.u32(0xFF000000)
        else:
            out[idx] = T.u32((r << 16) + (g << 8) + b)


def pack_host(rgb_u8_xy):
    """uint8 (w, h, >=3) indexed [x, y] -> Taichi's flat packed uint32 frame (host path)."""
    a = np.asarray(rgb_u8_xy)
    w, h = a.shape[:2]
    rows = a[:, ::-1, :3].transpose(1, 0, 2).astype(np.uint32)  # [row from top, x, c]
    r, g, b = rows[..., 0], rows[..., 1], rows[..., 2]
    packed = ((b << 16) | (g << 8) | r | np.uint32(0xFF000000)) if _OSX else ((r << 16) | (g << 8) | b)
    return packed.reshape(w * h).astype(np.uint32)


def _host_u8(img):
    """numpy image [x, y(, c)] -> uint8 (w, h, 3) with Taichi's fast-GUI conversion."""
    a = np.asarray(img)
    if a.ndim == 2:
        a = a[:, :, None]
    if a.dtype.kind == 'f':
        u8 = np.minimum(255, np.maximum(0, (a.astype(np.float64) * 255).astype(np.int64)))
    elif a.dtype.kind in 'iub':
        u8 = np.clip(a.astype(np.int64), 0, 255)
    else:
        raise ValueError(f"GUI.set_image: data type {a.dtype} is not supported")
    u8 = u8.astype(np.uint8)
    if u8.shape[2] == 1:
        u8 = np.repeat(u8, 3, axis=2)
    elif u8.shape[2] == 2:
        u8 = np.concatenate([u8, np.zeros_like(u8[..., :1])], axis=2)
    return u8[..., :3]


class FastImage:
    """The packed frame of a fast GUI: ``img`` (host, uint32 w*h) and its device twin."""

    def __init__(self, res):
        self.res = (int(res[0]), int(res[1]))
        self.img = np.zeros(self.res[0] * self.res[1], dtype=np.uint32)
        self._device = None  # u32 ndarray of w*h, made on the first device set_image

    def _is_device_source(self, src):
        return (getattr(src, 'n', None) in (3, 4) and getattr(src, 'm', 1) == 1
                and hasattr(src, 'snode') and len(getattr(src, 'shape', ())) == 2
                and getattr(src, 'dtype', None) in _DEVICE_DTYPES)

    def set_image(self, src):
        """Fill ``img`` from a field (device kernel) or an array (host); returns ``img``."""
        shape = tuple(getattr(src, 'shape', np.shape(src)))
        if tuple(shape[:2]) != self.res:
            raise ValueError(f"GUI.set_image: image resolution {tuple(shape[:2])} does not match "
                             f"GUI resolution {self.res} (images are indexed [x, y])")
        if self._is_device_source(src):
            if self._device is None:
                self._device = ndarray(T.u32, shape=(self.img.size,))
            off = getattr(src, 'offset', None) or (0, 0)
            _pack_field(src, self._device, int(off[0]), int(off[1]), src.dtype.is_float, _OSX)
            np.copyto(self.img, self._device.to_numpy())  # the one readback, to present
        else:
            if hasattr(src, 'to_numpy') and not isinstance(src, np.ndarray):
                src = src.to_numpy()
            np.copyto(self.img, pack_host(_host_u8(src)))
        return self.img

    def to_canvas(self, canvas):
        """Copy ``img`` into a raster.Canvas (RGBA words, R in the low byte, rows bottom-up)."""
        p = self.img.reshape(self.res[1], self.res[0])[::-1]
        if _OSX:
            words = (p & np.uint32(0xFFFFFF)) | np.uint32(0xFF000000)
        else:
            words = (((p >> 16) & 0xFF) | (p & 0xFF00) | ((p & 0xFF) << 16)
                     | np.uint32(0xFF000000)).astype(np.uint32)
        canvas.buf[...] = words
