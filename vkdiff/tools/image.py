"""API layer: ``ti.tools`` image helpers (Taichi's ``taichi.tools.image``): imwrite, imread,
imresize, imshow.

Images are indexed ``[x, y]`` with ``y`` up (Taichi's convention), as ``(w, h)`` or
``(w, h, c)``; files store rows top-down. PNG (grey, grey+alpha, RGB, RGBA) and BMP (24/32-bit)
are read and written with numpy alone; other formats (JPEG, ...) go through pillow when it is
installed (``pip install pillow``), else raise UnsupportedError saying so.
"""
import os

import numpy as np

from ..errors import UnsupportedError, VkdiffTypeError, VkdiffValueError
from . import bmp
from ..gui import GUI
from ..gui.png import read_png, write_png


def _np(img):
    return img if isinstance(img, np.ndarray) else img.to_numpy()


def cook_image_to_bytes(img):
    """A field or array of any type -> uint8 (h, w, c) rows top-down, as Taichi writes it:
    floats are clamped to [0, 1] and scaled by 255, u16/u32/u64 keep their high byte."""
    img = _np(img)
    if img.dtype in (np.uint16, np.uint32, np.uint64):
        img = (img // (np.iinfo(img.dtype).max // 256)).astype(np.uint8)
    elif img.dtype in (np.float16, np.float32, np.float64):
        img = (np.clip(img, 0, 1) * 255.0).astype(np.uint8)
    elif img.dtype != np.uint8:
        raise VkdiffTypeError(f"Data type {img.dtype} not supported in ti.tools.imwrite")
    if img.ndim not in (2, 3):
        raise VkdiffValueError(f"Image must be either RGB/RGBA or greyscale: shape {img.shape}")
    if img.ndim == 2:
        img = img.reshape(*img.shape, 1)
    if img.shape[2] not in (1, 3, 4):
        raise VkdiffValueError(f"Image must be either RGB/RGBA or greyscale: {img.shape[2]} "
                               f"channels")
    return img.swapaxes(0, 1)[::-1, :]


def _ext(filename):
    return os.path.splitext(os.fspath(filename))[1].lower()


def _pillow(filename, what):
    try:
        from PIL import Image
    except ImportError:
        raise UnsupportedError(f"{what} {filename!s}: vkdiff reads and writes PNG and BMP "
                               f"itself; {_ext(filename) or 'this'} format needs pillow "
                               f"(pip install pillow)") from None
    return Image


def imwrite(img, filename):
    """Save a field or array (``(w, h)``, ``(w, h, 3)`` or ``(w, h, 4)``; floats in [0, 1])
    to an image file; the format follows the file name's extension."""
    rows = np.ascontiguousarray(cook_image_to_bytes(img))
    ext = _ext(filename)
    if ext == '.png':
        write_png(filename, rows)
    elif ext == '.bmp':
        bmp.write_bmp(filename, rows)
    else:
        Image = _pillow(filename, 'ti.tools.imwrite')
        mode = {1: 'L', 3: 'RGB', 4: 'RGBA'}[rows.shape[2]]
        im = Image.fromarray(rows[..., 0] if mode == 'L' else rows, mode)
        if ext in ('.jpg', '.jpeg'):
            im.convert('RGB' if mode == 'RGBA' else mode).save(filename, quality=95)
        else:
            im.save(filename)


def _convert_channels(px, channels):
    """stb_image's conversion of (h, w, c) uint8 pixels to `channels` components."""
    c = px.shape[2]
    if channels in (0, c):
        return px
    if channels not in (1, 2, 3, 4):
        raise VkdiffValueError(f"ti.tools.imread: channels must be 0..4, got {channels}")
    color = px[..., :3] if c >= 3 else np.repeat(px[..., :1], 3, axis=2)
    alpha = px[..., c - 1:c] if c in (2, 4) else np.full(px.shape[:2] + (1,), 255, np.uint8)
    if channels >= 3:
        return color if channels == 3 else np.concatenate([color, alpha], axis=2)
    if c >= 3:  # stb's luminance: (77 r + 150 g + 29 b) >> 8
        w = color.astype(np.uint32)
        grey = ((77 * w[..., 0] + 150 * w[..., 1] + 29 * w[..., 2]) >> 8).astype(np.uint8)
        grey = grey[..., None]
    else:
        grey = px[..., :1]
    return grey if channels == 1 else np.concatenate([grey, alpha], axis=2)


def imread(filename, channels=0):
    """Load an image file as uint8 ``(w, h, c)`` indexed ``[x, y]`` (y up); ``channels``
    (1..4) converts to that many components, 0 keeps the file's."""
    ext = _ext(filename)
    if not os.path.exists(filename):
        raise FileNotFoundError(f"ti.tools.imread: no such file: {filename}")
    if ext == '.png':
        px = read_png(filename)
    elif ext == '.bmp':
        px = bmp.read_bmp(filename)
    else:
        Image = _pillow(filename, 'ti.tools.imread')
        with Image.open(filename) as im:
            if im.mode not in ('L', 'LA', 'RGB', 'RGBA'):
                im = im.convert('RGBA' if 'A' in im.mode or 'transparency' in im.info else 'RGB')
            px = np.asarray(im)
        if px.ndim == 2:
            px = px[..., None]
    px = _convert_channels(px, channels)
    return np.ascontiguousarray(px.swapaxes(0, 1)[:, ::-1, :])


def imresize(img, w, h=None):
    """Resize a ``(w, h, ...)`` image (field or array) to ``(w, h)`` by nearest sampling."""
    img = _np(img)
    if h is None:
        h = w
    if (w, h) == img.shape[:2]:
        return img
    if not (isinstance(w, int) and isinstance(h, int) and w > 1 and h > 1):
        raise VkdiffValueError(f"ti.tools.imresize: width and height must be integers > 1, got "
                               f"{w!r}, {h!r}")
    u, v = img.shape[0] / w, img.shape[1] / h
    x = np.clip(np.arange(w) * u, 0, img.shape[0] - 1).astype(np.int32)
    y = np.clip(np.arange(h) * v, 0, img.shape[1] - 1).astype(np.int32)
    return img[tuple(np.meshgrid(x, y))].swapaxes(0, 1)


def imshow(img, title="imshow"):
    """Show an image in a GUI window until it is closed (Escape). Without a window (no
    display, TI_GUI_SHOW=0) the image is rendered off-screen once and imshow returns."""
    img = _np(img)
    if img.ndim not in (2, 3):
        raise VkdiffValueError(f"Image must be either RGB/RGBA or greyscale: shape {img.shape}")
    with GUI(title, res=img.shape[:2]) as gui:
        while gui.running:
            if gui.get_event(GUI.ESCAPE):
                gui.running = False
            gui.set_image(img)
            gui.show()
            if not gui.show_gui:
                break
