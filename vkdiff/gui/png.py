"""Minimal PNG writer and reader (numpy + zlib), used when pillow is not installed."""

import struct
import zlib

import numpy as np


def _chunk(tag, data):
    body = tag + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def encode_png(rgb):
    """uint8 (h, w, 3) or (h, w, 4), rows top-down -> PNG file bytes."""
    rgb = np.ascontiguousarray(rgb, dtype=np.uint8)
    h, w, c = rgb.shape
    color_type = {3: 2, 4: 6}[c]
    raw = np.zeros((h, 1 + w * c), dtype=np.uint8)  # filter byte 0 (None) per row
    raw[:, 1:] = rgb.reshape(h, w * c)
    header = struct.pack(">IIBBBBB", w, h, 8, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(raw.tobytes(), 6)) + _chunk(b"IEND", b""))


def write_png(path, rgb):
    with open(path, "wb") as f:
        f.write(encode_png(rgb))


def read_png(path):
    """Read back a PNG written by encode_png (8-bit RGB/RGBA, any filter)."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG file"
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, tag = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if tag == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6), "only 8-bit RGB/RGBA PNGs are supported"
            c = 3 if ctype == 2 else 4
        elif tag == b"IDAT":
            idat += body
        pos += 12 + n
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(h, 1 + w * c)
    out = np.zeros((h, w * c), dtype=np.int32)
    for y in range(h):
        f, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        prev = out[y - 1] if y else np.zeros(w * c, np.int32)
        if f == 0:
            out[y] = line
        elif f == 2:
            out[y] = (line + prev) & 255
        else:  # Sub / Average / Paeth depend on the pixel to the left: go serially
            row = np.zeros(w * c, np.int32)
            for i in range(w * c):
                a = row[i - c] if i >= c else 0
                b, cc = prev[i], (prev[i - c] if i >= c else 0)
                if f == 1:
                    pred = a
                elif f == 3:
                    pred = (a + b) // 2
                else:
                    p = a + b - cc
                    pa, pb, pc = abs(p - a), abs(p - b), abs(p - cc)
                    pred = a if pa <= pb and pa <= pc else (b if pb <= pc else cc)
                row[i] = (line[i] + pred) & 255
            out[y] = row
    return out.astype(np.uint8).reshape(h, w, c)


def read_image(path):
    """uint8 (h, w, 3) RGB of an image file, rows top-down: pillow if present,
    else read_png (PNG only)."""
    try:
        from PIL import Image
    except ImportError:
        return read_png(path)[..., :3]
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))
