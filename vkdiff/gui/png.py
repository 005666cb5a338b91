"""Minimal PNG writer and reader (numpy + zlib), used when pillow is not installed (GUI
screenshots, ti.tools.imwrite/imread)."""

import struct
import zlib

import numpy as np


def _chunk(tag, data):
    body = tag + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def encode_png(rgb):
    """uint8 (h, w, c), c in 1 (grey), 2 (grey, alpha), 3 (RGB), 4 (RGBA), rows top-down
    -> PNG file bytes."""
    rgb = np.ascontiguousarray(rgb, dtype=np.uint8)
    if rgb.ndim == 2:
        rgb = rgb[:, :, None]
    h, w, c = rgb.shape
    color_type = {1: 0, 2: 4, 3: 2, 4: 6}[c]
    raw = np.zeros((h, 1 + w * c), dtype=np.uint8)  # filter byte 0 (None) per row
    raw[:, 1:] = rgb.reshape(h, w * c)
    header = struct.pack(">IIBBBBB", w, h, 8, color_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(raw.tobytes(), 6)) + _chunk(b"IEND", b""))


def write_png(path, rgb):
    with open(path, "wb") as f:
        f.write(encode_png(rgb))


def read_png(path):
    """Pixels of a non-interlaced PNG: uint8 (h, w, c) rows top-down, c = 1 (grey), 2 (grey,
    alpha), 3 (RGB) or 4 (RGBA); palette images become RGB(A), 16-bit samples keep their high
    byte, 1/2/4-bit grey is scaled to 0..255."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG file")
    pos, idat, hdr, plte, trns = 8, b"", None, None, None
    while pos < len(data):
        n, tag = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if tag == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body[:13])
        elif tag == b"PLTE":
            plte = np.frombuffer(body, np.uint8).reshape(-1, 3)
        elif tag == b"tRNS":
            trns = np.frombuffer(body, np.uint8)
        elif tag == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = hdr
    if interlace:
        raise ValueError(f"{path}: interlaced PNGs are not supported (install pillow)")
    c = {0: 1, 2: 3, 3: 1, 4: 2, 6: 4}[ctype]
    bits = depth * c                       # bits per pixel
    stride = (w * bits + 7) // 8
    bpp = max(1, bits // 8)                # filter unit
    raw = np.frombuffer(zlib.decompress(idat), dtype=np.uint8).reshape(h, 1 + stride)
    out = np.zeros((h, stride), dtype=np.int32)
    for y in range(h):
        f, line = raw[y, 0], raw[y, 1:].astype(np.int32)
        prev = out[y - 1] if y else np.zeros(stride, np.int32)
        if f == 0:
            out[y] = line
        elif f == 2:
            out[y] = (line + prev) & 255
        else:  # Sub / Average / Paeth depend on the byte to the left: go serially
            row = np.zeros(stride, np.int32)
            for i in range(stride):
                a = row[i - bpp] if i >= bpp else 0
                b, cc = prev[i], (prev[i - bpp] if i >= bpp else 0)
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
    out = out.astype(np.uint8)
    if depth == 16:
        px = out.reshape(h, w, c, 2)[..., 0]
    elif depth == 8:
        px = out.reshape(h, w, c)
    else:  # 1, 2, 4-bit grey or palette indices
        px = np.unpackbits(out, axis=1).reshape(h, -1, depth)[:, :w]
        px = (px * (1 << np.arange(depth - 1, -1, -1))).sum(-1).astype(np.uint8)[..., None]
        if ctype == 0:
            px = (px.astype(np.uint32) * 255 // ((1 << depth) - 1)).astype(np.uint8)
    if ctype == 3:
        idx = px[..., 0]
        rgb = plte[idx]
        if trns is not None:
            alpha = np.full(len(plte), 255, np.uint8)
            alpha[:len(trns)] = trns[:len(plte)]
            return np.concatenate([rgb, alpha[idx][..., None]], axis=2)
        return rgb
    return px


def read_image(path):
    """uint8 (h, w, 3) RGB of an image file, rows top-down: pillow if present,
    else read_png (PNG only)."""
    try:
        from PIL import Image
    except ImportError:
        return read_png(path)[..., :3]
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))
