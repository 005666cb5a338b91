"""Taichi-style GUI widgets (slider, label, button) for ``vkdiff.GUI``.

Widgets stack down the top-right corner of the frame and are drawn into the
frame by ``show()`` just before it is presented, so screenshots include them.
A slider follows the left mouse button while it is held over it; a button
emits a ``(GUI.PRESS, event_name)`` event when the left button is released
over it.
"""

import numpy as np

from . import font
from .raster import pack_colors

PANEL_W, ROW_H, MARGIN = 180, 34, 6
BG, HOVER, TEXT, BAR, KNOB = 0xAAAAAA, 0xCCCCCC, 0x111111, 0x333333, 0x555555


def _rect_px(gui, i):
    """Pixel rectangle (x0, y0, x1, y1), bottom-up rows, of widget i."""
    w, h = gui.res
    x0 = max(0, w - PANEL_W - MARGIN)
    y1 = h - MARGIN - i * (ROW_H + MARGIN)
    return x0, y1 - ROW_H, min(w, x0 + PANEL_W), y1


def _fill(gui, x0, y0, x1, y1, color):
    x0, y0 = max(x0, 0), max(y0, 0)
    if x1 > x0 and y1 > y0:
        gui.canvas.buf[y0:y1, x0:x1] = pack_colors(color)


def _fmt(v):
    return f"{v:.3g}" if isinstance(v, float) else str(v)


def draw_widgets(gui):
    cur = getattr(gui, "_cursor", (0, 0))
    cx, cy = cur[0] * gui.res[0], cur[1] * gui.res[1]
    for i, wd in enumerate(gui._widgets):
        x0, y0, x1, y1 = _rect_px(gui, i)
        if y1 <= 0:
            break
        hover = x0 <= cx < x1 and y0 <= cy < y1
        _fill(gui, x0, y0, x1, y1, HOVER if hover else BG)
        if wd["kind"] == "slider":
            label = f"{wd['text']}: {_fmt(wd['value'])}"
            span = wd["max"] - wd["min"]
            t = 0.0 if span == 0 else float(np.clip((wd["value"] - wd["min"]) / span, 0, 1))
            bx0, bx1, by = x0 + 8, x1 - 8, y0 + 7
            _fill(gui, bx0, by - 1, bx1, by + 1, BAR)
            kx = int(bx0 + t * (bx1 - bx0))
            _fill(gui, kx - 3, by - 5, kx + 3, by + 5, KNOB)
        elif wd["kind"] == "label":
            label = f"{wd['text']}: {_fmt(wd['value'])}"
        else:
            label = wd["text"]
        mask = font.render_text(label, 14)
        gui.canvas.blend_mask(x0 + 6, y1 - 3, mask[: ROW_H - 16], TEXT)


def widget_input(gui, etype, key, pos):
    """Route a mouse event at pos ([0,1]^2) to the widget under it."""
    px, py = pos[0] * gui.res[0], pos[1] * gui.res[1]
    if key == "LMB" and etype == "Press":
        gui._widget_drag = None
    for i, wd in enumerate(gui._widgets):
        x0, y0, x1, y1 = _rect_px(gui, i)
        inside = x0 <= px < x1 and y0 <= py < y1
        if wd["kind"] == "slider":
            if key == "LMB" and etype == "Press" and inside:
                gui._widget_drag = i
            if getattr(gui, "_widget_drag", None) == i and ("LMB" in gui.key_pressed or etype == "Press"):
                t = float(np.clip((px - (x0 + 8)) / max(x1 - x0 - 16, 1), 0, 1))
                v = wd["min"] + t * (wd["max"] - wd["min"])
                if wd["step"]:
                    v = wd["min"] + round((v - wd["min"]) / wd["step"]) * wd["step"]
                wd["value"] = type(wd["min"])(v) if isinstance(wd["min"], int) and \
                    isinstance(wd["step"], int) else v
        elif wd["kind"] == "button" and key == "LMB" and etype == "Release" and inside:
            gui._events.append(gui.Event("Press", wd["value"], pos, [], (0, 0)))
    if key == "LMB" and etype == "Release":
        gui._widget_drag = None
