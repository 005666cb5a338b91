"""Text rendering for ``vkdiff.GUI.text``: string -> coverage mask.

With pillow (and its FreeType support) importable, text is drawn with
pillow's built-in scalable default font at ``font_size`` pixels.  Otherwise a
small built-in 5x7 bitmap font (with two descender rows, designed for this
module) is scaled to ``font_size`` with exact box-filter resampling, which
keeps the strokes even and anti-aliased.  Either way the result is a float32
mask in [0, 1], rows top-down, whose top-left corner is the text position.
"""

import numpy as np

# Each glyph: rows of 5 pixels ('#' on), top-down; rows 0-6 are the cap
# height, optional rows 7-8 the descender.  Unknown characters render as '?'.
_GLYPHS = {
    " ": "..... ..... ..... ..... ..... ..... .....",
    "!": "..#.. ..#.. ..#.. ..#.. ..#.. ..... ..#..",
    '"': ".#.#. .#.#. ..... ..... ..... ..... .....",
    "#": ".#.#. .#.#. ##### .#.#. ##### .#.#. .#.#.",
    "$": "..#.. .#### #.#.. .###. ..#.# ####. ..#..",
    "%": "##... ##..# ...#. ..#.. .#... #..## ...##",
    "&": ".##.. #..#. #.#.. .#... #.#.# #..#. .##.#",
    "'": "..#.. ..#.. ..... ..... ..... ..... .....",
    "(": "...#. ..#.. .#... .#... .#... ..#.. ...#.",
    ")": ".#... ..#.. ...#. ...#. ...#. ..#.. .#...",
    "*": "..... ..#.. #.#.# .###. #.#.# ..#.. .....",
    "+": "..... ..#.. ..#.. ##### ..#.. ..#.. .....",
    ",": "..... ..... ..... ..... ..... .##.. ..#.. .#...",
    "-": "..... ..... ..... ##### ..... ..... .....",
    ".": "..... ..... ..... ..... ..... .##.. .##..",
    "/": "..... ....# ...#. ..#.. .#... #.... .....",
    "0": ".###. #...# #..## #.#.# ##..# #...# .###.",
    "1": "..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###.",
    "2": ".###. #...# ....# ...#. ..#.. .#... #####",
    "3": "##### ...#. ..#.. ...#. ....# #...# .###.",
    "4": "...#. ..##. .#.#. #..#. ##### ...#. ...#.",
    "5": "##### #.... ####. ....# ....# #...# .###.",
    "6": "..##. .#... #.... ####. #...# #...# .###.",
    "7": "##### ....# ...#. ..#.. .#... .#... .#...",
    "8": ".###. #...# #...# .###. #...# #...# .###.",
    "9": ".###. #...# #...# .#### ....# ...#. .##..",
    ":": "..... .##.. .##.. ..... .##.. .##.. .....",
    ";": "..... .##.. .##.. ..... .##.. ..#.. .#...",
    "<": "...#. ..#.. .#... #.... .#... ..#.. ...#.",
    "=": "..... ..... ##### ..... ##### ..... .....",
    ">": ".#... ..#.. ...#. ....# ...#. ..#.. .#...",
    "?": ".###. #...# ....# ...#. ..#.. ..... ..#..",
    "@": ".###. #...# ....# .##.# #.#.# #.#.# .###.",
    "A": ".###. #...# #...# ##### #...# #...# #...#",
    "B": "####. #...# #...# ####. #...# #...# ####.",
    "C": ".###. #...# #.... #.... #.... #...# .###.",
    "D": "###.. #..#. #...# #...# #...# #..#. ###..",
    "E": "##### #.... #.... ####. #.... #.... #####",
    "F": "##### #.... #.... ####. #.... #.... #....",
    "G": ".###. #...# #.... #.### #...# #...# .####",
    "H": "#...# #...# #...# ##### #...# #...# #...#",
    "I": ".###. ..#.. ..#.. ..#.. ..#.. ..#.. .###.",
    "J": "..### ...#. ...#. ...#. ...#. #..#. .##..",
    "K": "#...# #..#. #.#.. ##... #.#.. #..#. #...#",
    "L": "#.... #.... #.... #.... #.... #.... #####",
    "M": "#...# ##.## #.#.# #.#.# #...# #...# #...#",
    "N": "#...# #...# ##..# #.#.# #..## #...# #...#",
    "O": ".###. #...# #...# #...# #...# #...# .###.",
    "P": "####. #...# #...# ####. #.... #.... #....",
    "Q": ".###. #...# #...# #...# #.#.# #..#. .##.#",
    "R": "####. #...# #...# ####. #.#.. #..#. #...#",
    "S": ".#### #.... #.... .###. ....# ....# ####.",
    "T": "##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#..",
    "U": "#...# #...# #...# #...# #...# #...# .###.",
    "V": "#...# #...# #...# #...# #...# .#.#. ..#..",
    "W": "#...# #...# #...# #.#.# #.#.# #.#.# .#.#.",
    "X": "#...# #...# .#.#. ..#.. .#.#. #...# #...#",
    "Y": "#...# #...# .#.#. ..#.. ..#.. ..#.. ..#..",
    "Z": "##### ....# ...#. ..#.. .#... #.... #####",
    "[": ".###. .#... .#... .#... .#... .#... .###.",
    "\\": "..... #.... .#... ..#.. ...#. ....# .....",
    "]": ".###. ...#. ...#. ...#. ...#. ...#. .###.",
    "^": "..#.. .#.#. #...# ..... ..... ..... .....",
    "_": "..... ..... ..... ..... ..... ..... ..... #####",
    "`": ".#... ..#.. ..... ..... ..... ..... .....",
    "a": "..... ..... .###. ....# .#### #...# .####",
    "b": "#.... #.... #.##. ##..# #...# #...# ####.",
    "c": "..... ..... .###. #.... #.... #...# .###.",
    "d": "....# ....# .##.# #..## #...# #...# .####",
    "e": "..... ..... .###. #...# ##### #.... .###.",
    "f": "..##. .#..# .#... ###.. .#... .#... .#...",
    "g": "..... ..... .#### #...# #...# .#### ....# #...# .###.",
    "h": "#.... #.... #.##. ##..# #...# #...# #...#",
    "i": "..#.. ..... .##.. ..#.. ..#.. ..#.. .###.",
    "j": "...#. ..... ..##. ...#. ...#. ...#. ...#. #..#. .##..",
    "k": "#.... #.... #..#. #.#.. ##... #.#.. #..#.",
    "l": ".##.. ..#.. ..#.. ..#.. ..#.. ..#.. .###.",
    "m": "..... ..... ##.#. #.#.# #.#.# #.#.# #.#.#",
    "n": "..... ..... #.##. ##..# #...# #...# #...#",
    "o": "..... ..... .###. #...# #...# #...# .###.",
    "p": "..... ..... ####. #...# #...# ####. #.... #.... #....",
    "q": "..... ..... .#### #...# #...# .#### ....# ....# ....#",
    "r": "..... ..... #.##. ##..# #.... #.... #....",
    "s": "..... ..... .###. #.... .###. ....# ####.",
    "t": ".#... .#... ###.. .#... .#... .#..# ..##.",
    "u": "..... ..... #...# #...# #...# #..## .##.#",
    "v": "..... ..... #...# #...# #...# .#.#. ..#..",
    "w": "..... ..... #...# #...# #.#.# #.#.# .#.#.",
    "x": "..... ..... #...# .#.#. ..#.. .#.#. #...#",
    "y": "..... ..... #...# #...# #...# .#### ....# #...# .###.",
    "z": "..... ..... ##### ...#. ..#.. .#... #####",
    "{": "...#. ..#.. ..#.. .#... ..#.. ..#.. ...#.",
    "|": "..#.. ..#.. ..#.. ..#.. ..#.. ..#.. ..#..",
    "}": ".#... ..#.. ..#.. ...#. ..#.. ..#.. .#...",
    "~": "..... ..... .#... #.#.# ...#. ..... .....",
}

GLYPH_W, GLYPH_H = 5, 9      # glyph box: 7 cap rows + 2 descender rows
CELL_W, CELL_H = 6, 11       # advance per character / per line (unscaled)
# Unscaled rows per font_size pixel: font_size covers ascent + descent
# (GLYPH_H + 1 rows), like a TrueType pixel height.
_UNITS_PER_PX = (GLYPH_H + 1)

_bitmaps = {}
_cache = {}
_CACHE_MAX = 256
use_pillow = True  # tests flip this to exercise the built-in font


def _glyph(ch):
    g = _bitmaps.get(ch)
    if g is None:
        rows = _GLYPHS.get(ch, _GLYPHS["?"]).split()
        g = np.zeros((GLYPH_H, GLYPH_W), dtype=np.float32)
        for i, row in enumerate(rows):
            g[i] = [c == "#" for c in row]
        _bitmaps[ch] = g
    return g


def _box_weights(n_src, n_dst):
    """(n_dst, n_src) matrix averaging source cells over each destination cell."""
    scale = n_src / n_dst
    lo = np.arange(n_dst)[:, None] * scale
    src = np.arange(n_src)[None, :]
    overlap = np.clip(np.minimum(lo + scale, src + 1) - np.maximum(lo, src), 0, None)
    return (overlap / scale).astype(np.float32)


def _bitmap_text(content, size):
    lines = content.expandtabs(4).split("\n")
    cols = max(len(line) for line in lines)
    src = np.zeros((len(lines) * CELL_H, max(cols, 1) * CELL_W), dtype=np.float32)
    for li, line in enumerate(lines):
        for ci, ch in enumerate(line):
            y, x = li * CELL_H + 1, ci * CELL_W
            src[y:y + GLYPH_H, x:x + GLYPH_W] = _glyph(ch)
    scale = size / _UNITS_PER_PX
    h = max(1, int(round(src.shape[0] * scale)))
    w = max(1, int(round(src.shape[1] * scale)))
    mask = _box_weights(src.shape[0], h) @ src @ _box_weights(src.shape[1], w).T
    # Sharpen the box-filtered coverage a little so small text stays legible.
    return np.clip(mask * 1.25, 0.0, 1.0)


def _pillow_text(content, size):
    try:
        from PIL import Image, ImageDraw, ImageFont, features
        if not features.check("freetype2"):
            return None
        font = ImageFont.load_default(size=size)
    except Exception:  # pillow missing, too old for sized fonts, no FreeType
        return None
    box = ImageDraw.Draw(Image.new("L", (1, 1))).multiline_textbbox((0, 0), content, font=font)
    w, h = max(box[2], 1), max(box[3], 1)
    img = Image.new("L", (w, h), 0)
    ImageDraw.Draw(img).multiline_text((0, 0), content, font=font, fill=255)
    return np.asarray(img, dtype=np.float32) / 255.0


def render_text(content, size):
    """Coverage mask (float32, rows top-down) of ``content`` at ``size`` px."""
    content = str(content)
    size = max(1, int(round(float(size))))
    key = (content, size, use_pillow)
    mask = _cache.get(key)
    if mask is None:
        mask = _pillow_text(content, size) if use_pillow else None
        if mask is None:
            mask = _bitmap_text(content, size)
        if len(_cache) >= _CACHE_MAX:
            _cache.clear()
        _cache[key] = mask
    return mask
