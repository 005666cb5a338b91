"""``vkdiff.ui.Gui``: GGUI's immediate-mode widgets (Taichi 1.7.4's ``taichi.ui.imgui.Gui``).

Each widget call returns the widget's value for this frame, as Dear ImGui does.  vkdiff has no
ImGui: widgets are laid out in their sub-window (a translucent panel, one text row per widget)
and drawn into the frame when a window is shown; they take no mouse input, so every call
returns its current value -- ``slider_*``/``checkbox``/``color_edit_3`` the ``old_value`` they
were given (a slider's clamped into its range, as ImGui does), ``button`` False.  Off-screen
this is exactly what a program sees from Taichi's widgets while nobody touches them.
"""

from contextlib import contextmanager

import numpy as np
from ..gui.font import render_text

PANEL = np.array([0.1, 0.1, 0.12], np.float32)
PANEL_ALPHA = 0.75
TEXT = np.array([0.9, 0.9, 0.9], np.float32)
ROW_PX = 16


class Gui:
    """Widgets of a window (``window.get_gui()``)."""

    def __init__(self, window):
        self._window = window
        self._panels = []  # (name, x, y, width, height, rows) of this frame
        self._rows = None

    # ------------------------------------------------------------------ sub-windows
    @contextmanager
    def sub_window(self, name, x, y, width, height):
        """``with gui.sub_window(name, x, y, w, h) as g:``: widgets inside a panel whose
        top-left corner is (x, y) (fractions of the window, measured from the top-left)."""
        self.begin(name, x, y, width, height)
        try:
            yield self
        finally:
            self.end()

    def begin(self, name, x, y, width, height):
        self._rows = [str(name)]
        self._panels.append((float(x), float(y), float(width), float(height), self._rows))

    def end(self):
        self._rows = None

    def _row(self, text):
        if self._rows is None:  # a widget outside any sub-window: ImGui's default window
            self.begin("Debug", 0.0, 0.0, 0.3, 0.3)
        self._rows.append(text)

    # ------------------------------------------------------------------ widgets
    def text(self, text, color=None):
        self._row(str(text))

    def checkbox(self, text, old_value):
        value = bool(old_value)
        self._row(f"[{'x' if value else ' '}] {text}")
        return value

    def slider_int(self, text, old_value, minimum, maximum):
        value = int(old_value)  # Taichi returns old_value unclamped until the user drags
        self._row(f"{text}: {value}")
        return value

    def slider_float(self, text, old_value, minimum, maximum):
        value = float(old_value)  # unclamped, as Taichi's
        self._row(f"{text}: {value:.3f}")
        return value

    def color_edit_3(self, text, old_value):
        value = tuple(float(np.float32(c)) for c in old_value)  # GGUI holds float32
        self._row(f"{text}: " + " ".join(f"{c:.2f}" for c in value))
        return value

    def button(self, text):
        self._row(f"< {text} >")
        return False

    # ------------------------------------------------------------------ drawing
    def _draw(self, rgb):
        """Blend this frame's panels into rgb ((h, w, 3) floats, rows bottom-up)."""
        h, w = rgb.shape[:2]
        for x, y, pw, ph, rows in self._panels:
            x0, x1 = int(x * w), int(min(x + pw, 1.0) * w)
            top, bottom = int(y * h), int(min(y + ph, 1.0) * h)
            if x1 <= x0 or bottom <= top:
                continue
            region = rgb[h - bottom:h - top, x0:x1]
            region[:] = region * (1 - PANEL_ALPHA) + PANEL * PANEL_ALPHA
            for k, line in enumerate(rows):
                row_top = top + 4 + k * ROW_PX
                if row_top + ROW_PX > bottom:
                    break
                mask = render_text(line, ROW_PX - 4)[::-1]  # rows bottom-up like rgb
                mh, mw = mask.shape
                mh = min(mh, ROW_PX)
                mw = min(mw, x1 - x0 - 4)
                if mw <= 0:
                    continue
                ys = slice(h - (row_top + mh), h - row_top)
                patch = rgb[ys, x0 + 4:x0 + 4 + mw]
                m = mask[mask.shape[0] - patch.shape[0]:, :mw][..., None]
                patch[:] = patch * (1 - m) + TEXT * m

    def _next_frame(self):
        self._panels = []
        self._rows = None
