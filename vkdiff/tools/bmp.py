"""API layer: BMP files with numpy (ti.tools.imwrite/imread): uncompressed 24-bit (grey and RGB
images) and 32-bit (RGBA, BI_BITFIELDS) written; 8/24/32-bit uncompressed read."""
import struct

import numpy as np

from ..errors import VkdiffValueError


def write_bmp(path, rows):
    """uint8 (h, w, c) rows top-down, c in 1, 3, 4 -> a BMP file (grey is stored as RGB)."""
    rows = np.asarray(rows, np.uint8)
    h, w, c = rows.shape
    if c == 1:
        rows, c = np.repeat(rows, 3, axis=2), 3
    if c == 4:
        px = rows[::-1][..., [2, 1, 0, 3]]             # BGRA, bottom-up
        masks = struct.pack('<4I', 0x00FF0000, 0x0000FF00, 0x000000FF, 0xFF000000)
        info = struct.pack('<IiiHHIIiiII', 56, w, h, 1, 32, 3, px.size, 2835, 2835, 0, 0) + masks
        data = px.tobytes()
    else:
        px = rows[::-1][..., ::-1]                      # BGR, bottom-up
        pad = (-w * 3) % 4
        data = np.pad(px.reshape(h, w * 3), ((0, 0), (0, pad))).tobytes()
        info = struct.pack('<IiiHHIIiiII', 40, w, h, 1, 24, 0, len(data), 2835, 2835, 0, 0)
    offset = 14 + len(info)
    header = struct.pack('<2sIHHI', b'BM', offset + len(data), 0, 0, offset)
    with open(path, 'wb') as f:
        f.write(header + info + data)


def read_bmp(path):
    """A BMP file -> uint8 (h, w, c) rows top-down: c = 3, or 4 for 32-bit with an alpha mask."""
    with open(path, 'rb') as f:
        data = f.read()
    if data[:2] != b'BM':
        raise VkdiffValueError(f"{path}: not a BMP file")
    offset, = struct.unpack_from('<I', data, 10)
    size, w, h, _, bits, comp = struct.unpack_from('<IiiHHI', data, 14)
    top_down, h = h < 0, abs(h)
    if comp not in (0, 3) or bits not in (8, 24, 32):
        raise VkdiffValueError(f"{path}: only uncompressed 8/24/32-bit BMPs are supported "
                               f"(bits {bits}, compression {comp})")
    stride = (w * bits // 8 + 3) // 4 * 4
    raw = np.frombuffer(data, np.uint8, stride * h, offset).reshape(h, stride)
    if not top_down:
        raw = raw[::-1]
    if bits == 8:
        ncol = struct.unpack_from('<I', data, 46)[0] or 256
        pal = np.frombuffer(data, np.uint8, 4 * ncol, 14 + size).reshape(ncol, 4)[:, 2::-1]
        return pal[raw[:, :w]]
    px = raw[:, :w * bits // 8].reshape(h, w, bits // 8)
    if bits == 24:
        return px[..., ::-1].copy()
    masks = struct.unpack_from('<4I', data, 54) if comp == 3 and size >= 56 else \
        (0x00FF0000, 0x0000FF00, 0x000000FF, 0xFF000000 if size >= 56 else 0)
    word = px.copy().view('<u4')[..., 0]
    chans = []
    for m in masks:
        if not m:
            continue
        shift = (m & -m).bit_length() - 1
        chans.append(((word & m) >> shift).astype(np.uint8))
    return np.stack(chans, axis=2)
