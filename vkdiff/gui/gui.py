"""``vkdiff.GUI``: Taichi's ``ti.GUI`` interface on numpy, GLFW and OpenGL.

Every drawing call rasterises at once into one CPU frame
(:class:`vkdiff.gui.raster.Canvas`); ``show()`` presents that frame in a GLFW
window (see :mod:`vkdiff.gui.window`), optionally writes it to an image file,
then clears it for the next frame.  With ``show_gui=False`` (or ``TI_GUI_SHOW=0``
in the environment), or when no window can be opened (a warning says why,
once per process), the same frame is kept off-screen, so ``show(file)`` writes
exactly the pixels a window would show.  Positions are in ``[0, 1]^2`` with the
origin at the bottom-left; colours are ``0xRRGGBB`` ints; radii are pixels.
"""

import collections
import numbers
import os
import time
import warnings
import weakref

import numpy as np

from . import font
from .fast import FastImage
from .png import write_png
from .raster import Canvas, pack_colors
from .widgets import draw_widgets, widget_input
from .window import MOTION, PRESS, RELEASE, Window, WindowUnavailable

_warned_headless = False


def _np(x, dtype=None):
    """numpy view of arrays, lists, and field-like objects with to_numpy()."""
    if hasattr(x, "to_numpy") and not isinstance(x, np.ndarray):
        x = x.to_numpy()
    return np.asarray(x, dtype=dtype)


def _points(p, name):
    p = _np(p, np.float64)
    if p.ndim == 3 and p.shape[2] == 1:
        p = p[:, :, 0]
    if p.ndim == 1 and p.size == 2:
        p = p[None]
    if p.ndim != 2 or p.shape[1] != 2:
        raise ValueError(f"{name} must be an (N, 2) array of positions, got shape {p.shape}")
    return p


def _point(p, name):
    """One position for the single-shape methods: like Taichi (which reads p[0], p[1]) any
    2-element array, e.g. a (2, 1) column, is the point; otherwise as _points."""
    a = _np(p, np.float64)
    return a.reshape(1, 2) if a.size == 2 else _points(a, name)


def _colors(color, n, name="color"):
    c = color.to_numpy() if hasattr(color, "to_numpy") else color
    if isinstance(c, (numbers.Integral, np.integer)):
        return pack_colors(int(c))
    c = np.asarray(c)
    if c.ndim == 0:
        return pack_colors(int(c))
    packed = pack_colors(c)
    if packed.shape != (n,):
        raise ValueError(f"{name} must be an int 0xRRGGBB or an array of {n} of them, "
                         f"got shape {c.shape}")
    return packed


def _radii(radius, n):
    r = _np(radius, np.float32)
    if r.ndim > 0 and r.shape != (n,):
        raise ValueError(f"radius must be a number or an array of {n} numbers, got shape {r.shape}")
    return r


class GUI:
    """A Taichi-compatible 2D GUI: draw in [0, 1]^2 coordinates, then show()."""

    class Event:
        def __init__(self, type=None, key=None, pos=None, modifier=None, delta=None):
            self.type, self.key, self.pos = type, key, pos
            self.modifier, self.delta = modifier if modifier is not None else [], delta

        def __repr__(self):
            return f"GUI.Event(type={self.type!r}, key={self.key!r}, pos={self.pos!r})"

    class WidgetValue:
        def __init__(self, gui, wid):
            self.gui, self.wid = gui, wid

        @property
        def value(self):
            return self.gui._widgets[self.wid]["value"]

        @value.setter
        def value(self, v):
            self.gui._widgets[self.wid]["value"] = v

    # Keys (Taichi names); letters and digits are plain lower-case strings.
    SHIFT, ALT, CTRL = "Shift", "Alt", "Control"
    ESCAPE, RETURN, TAB, BACKSPACE, SPACE = "Escape", "Return", "Tab", "BackSpace", " "
    UP, DOWN, LEFT, RIGHT = "Up", "Down", "Left", "Right"
    CAPSLOCK = "Caps_Lock"
    LMB, MMB, RMB = "LMB", "MMB", "RMB"
    EXIT, WHEEL, MOVE = "WMClose", "Wheel", "Motion"
    # Event types
    PRESS, RELEASE, MOTION = PRESS, RELEASE, MOTION

    def __init__(self, name="Taichi", res=512, background_color=0x112F41, show_gui=True,
                 fullscreen=False, fast_gui=False, fps_limit=60):
        env = os.environ.get("TI_GUI_SHOW")
        if env is not None and env.strip() != "":
            show_gui = bool(int(env))
        self.name = name
        if isinstance(res, numbers.Number):
            res = (int(res), int(res))
        self.res = (int(res[0]), int(res[1]))
        self.background_color = background_color
        self.canvas = Canvas(self.res[0], self.res[1], background_color)
        env = os.environ.get("TI_GUI_FAST")
        if env is not None and env.strip() != "":
            fast_gui = bool(int(env))
        self.fast_gui = bool(fast_gui)
        # fast_gui: Taichi's packed uint32 frame buffer GUI.img (vkdiff/gui/fast.py)
        self._fast = FastImage(self.res) if self.fast_gui else None
        self.fps_limit = fps_limit
        self.frame = 0
        self.event = None
        self.key_pressed = set()
        self._events = collections.deque()
        self._cursor = (0.0, 0.0)
        self._should_close = False
        self._last_frame_time = None
        self._widgets = []
        self._window = None
        self._max_frames = _max_frames_from_env()
        if show_gui:
            self._window = self._open_window()

    def _open_window(self):
        global _warned_headless
        try:
            # The window's callbacks must not keep this GUI alive: dropping the
            # GUI closes its window (see __del__).
            ref = weakref.WeakMethod(self._push_event)

            def on_event(*args):
                method = ref()
                if method is not None:
                    method(*args)

            return Window(self.name, self.res[0], self.res[1], on_event)
        except WindowUnavailable as e:
            if not _warned_headless:
                _warned_headless = True
                warnings.warn(f"vkdiff.GUI: cannot open a window ({e}); rendering off-screen "
                              f"instead, show(file) still writes each frame. Pass show_gui=False "
                              f"to silence this.", RuntimeWarning, stacklevel=3)
            return None

    @property
    def show_gui(self):
        """True while frames are presented in a window."""
        return self._window is not None

    # ----------------------------------------------------------- life cycle
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def close(self):
        """Close the window (if any); ``running`` becomes False."""
        win, self._window = getattr(self, "_window", None), None
        if win is not None:
            win.close()
        self._should_close = True

    @property
    def running(self):
        self._poll()
        return not self._should_close

    @running.setter
    def running(self, value):
        self._should_close = not value

    @property
    def fps_limit(self):
        return None if self._frame_delta == 0 else 1.0 / self._frame_delta

    @fps_limit.setter
    def fps_limit(self, value):
        self._frame_delta = 0.0 if not value else 1.0 / float(value)

    # -------------------------------------------------------------- drawing
    def _px(self, p):
        return p[:, 0] * self.res[0], p[:, 1] * self.res[1]

    def clear(self, color=None):
        """Fill the frame with color (default: the background colour)."""
        self.canvas.clear(self.background_color if color is None else color)

    def set_image(self, img):
        """Set the frame from a (w, h) or (w, h, 1..4) image indexed [x, y]
        (x to the right, y up); float in [0, 1] or integer (uint8: 0..255).
        Under fast_gui a 3/4-channel Vector field is packed into ``GUI.img`` by a device kernel
        (vkdiff/gui/fast.py) and the frame is presented from that one readback."""
        if self._fast is not None:
            self._fast.set_image(img)
            self._fast.to_canvas(self.canvas)
            return
        self.canvas.set_image(_np(img))

    @property
    def img(self):
        """fast_gui: the frame as Taichi packs it, flat uint32 (w * h), 0x00RRGGBB, rows
        top-down (vkdiff/gui/fast.py); otherwise the frame as get_image() gives it."""
        if self._fast is not None:
            return self._fast.img
        return self.get_image()

    def get_image(self):
        """The frame as float32 (w, h, 4) in [0, 1], indexed [x, y]."""
        return self.canvas.get_image()

    def circles(self, pos, radius=1, color=0xFFFFFF, palette=None, palette_indices=None):
        """Discs of radius pixels at pos (N, 2); radius and color may be
        per-circle arrays, or colours picked by palette[palette_indices]."""
        pos = _points(pos, "pos")
        n = len(pos)
        if palette is not None:
            if palette_indices is None:
                raise ValueError("palette must be used together with palette_indices")
            ind = _np(palette_indices).reshape(-1)
            if ind.shape != (n,) or ind.dtype.kind not in "iu":
                raise ValueError(f"palette_indices must be {n} integers, got {ind.dtype} {ind.shape}")
            pal = pack_colors(np.asarray(palette))
            if n and (ind.min() < 0 or ind.max() >= len(pal)):
                raise ValueError("palette_indices out of range of palette")
            col = pal[ind]
        else:
            col = _colors(color, n)
        x, y = self._px(pos)
        self.canvas.circles(x, y, _radii(radius, n), col)

    def circle(self, pos, color=0xFFFFFF, radius=1):
        """One disc (Taichi's argument order: pos, color, radius)."""
        self.circles(_point(pos, "pos"), radius=radius, color=color)

    def lines(self, begin, end, radius=1, color=0xFFFFFF):
        """Segments begin[i] -> end[i] of half-width radius pixels."""
        a, b = _points(begin, "begin"), _points(end, "end")
        if a.shape != b.shape:
            raise ValueError(f"begin and end differ in shape: {a.shape} vs {b.shape}")
        n = len(a)
        ax, ay = self._px(a)
        bx, by = self._px(b)
        self.canvas.lines(ax, ay, bx, by, _radii(radius, n), _colors(color, n))

    def line(self, begin, end, radius=1, color=0xFFFFFF):
        self.lines(_point(begin, "begin"), _point(end, "end"), radius, color)

    def triangles(self, a, b, c, color=0xFFFFFF):
        a, b, c = (_points(p, name) for p, name in ((a, "a"), (b, "b"), (c, "c")))
        scale = np.asarray(self.res, dtype=np.float64)
        self.canvas.triangles(a * scale, b * scale, c * scale, _colors(color, len(a)))

    def triangle(self, a, b, c, color=0xFFFFFF):
        self.triangles(_point(a, "a"), _point(b, "b"), _point(c, "c"), color)

    def rect(self, topleft, bottomright, radius=1, color=0xFFFFFF):
        """Outline of the axis-aligned rectangle with these corners."""
        (x0, y0), (x1, y1) = _point(topleft, "topleft")[0], _point(bottomright, "bottomright")[0]
        begin = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]])
        self.lines(begin, np.roll(begin, -1, axis=0), radius, color)

    @staticmethod
    def _arrow_lines(orig, major, tip_scale=0.2, angle=45):
        t = np.radians(180 - angle)
        c, s = np.cos(t), np.sin(t)
        m1 = np.stack([major[:, 0] * c - major[:, 1] * s, major[:, 0] * s + major[:, 1] * c], 1)
        m2 = np.stack([major[:, 0] * c + major[:, 1] * s, -major[:, 0] * s + major[:, 1] * c], 1)
        end = orig + major
        return [(orig, end), (end, end + m1 * tip_scale), (end, end + m2 * tip_scale)]

    def arrows(self, orig, direction, radius=1, color=0xFFFFFF, **kwargs):
        o, d = _points(orig, "orig"), _points(direction, "direction")
        for a, b in self._arrow_lines(o, d, **kwargs):
            self.lines(a, b, radius, color)

    def arrow(self, orig, direction, radius=1, color=0xFFFFFF, **kwargs):
        self.arrows(_point(orig, "orig"), _point(direction, "direction"), radius, color, **kwargs)

    @staticmethod
    def _field_base(w, h, bound):
        x = np.linspace(bound / w, 1 - bound / w, w)
        y = np.linspace(bound / h, 1 - bound / h, h)
        return np.stack(np.meshgrid(x, y, indexing="ij"), -1).reshape(w * h, 2)

    def point_field(self, radius, color=0xFFFFFF, bound=0.5):
        radius = _np(radius, np.float32)
        base = self._field_base(radius.shape[0], radius.shape[1], bound)
        self.circles(base, radius=radius.reshape(-1), color=color)

    def arrow_field(self, direction, radius=1, color=0xFFFFFF, bound=0.5, **kwargs):
        direction = _np(direction, np.float64)
        base = self._field_base(direction.shape[0], direction.shape[1], bound)
        self.arrows(base, direction.reshape(-1, 2), radius=radius, color=color, **kwargs)

    def text(self, content, pos, font_size=15, color=0xFFFFFF):
        """Draw content with its top-left corner at pos ([0, 1]^2)."""
        mask = font.render_text(content, font_size)
        x = int(np.floor(float(pos[0]) * self.res[0]))
        y = int(np.floor(float(pos[1]) * self.res[1]))
        self.canvas.blend_mask(x, y - 1 if y >= self.res[1] else y, mask, color)

    # -------------------------------------------------------------- widgets
    def slider(self, text, minimum, maximum, step=1):
        self._widgets.append(dict(kind="slider", text=text, value=minimum, min=minimum,
                                  max=maximum, step=step))
        return GUI.WidgetValue(self, len(self._widgets) - 1)

    def label(self, text):
        self._widgets.append(dict(kind="label", text=text, value=0))
        return GUI.WidgetValue(self, len(self._widgets) - 1)

    def button(self, text, event_name=None):
        event_name = event_name or f"WidgetButton_{text}"
        self._widgets.append(dict(kind="button", text=text, value=event_name))
        return event_name

    # ----------------------------------------------------------- presenting
    def show(self, file=None):
        """Present the frame (window), write it to file if given, then clear it.

        With VKDIFF_GUI_MAX_FRAMES=N in the environment, `running` turns False after the N-th
        show(), and a show() past it ends the program with SystemExit(0) (for loops that never
        read `running`), so GUI programs can run headless for a fixed number of frames."""
        if self._max_frames is not None and self.frame >= self._max_frames:
            raise SystemExit(0)
        if self._widgets:
            draw_widgets(self)
        if self._window is not None:
            self._window.present(self.canvas.rgba_bottom_up())
            self._window.poll()
            self._pace()
        if file:
            write_image(file, self.canvas.rgb_top_down())
        self.frame += 1
        if self._max_frames is not None and self.frame >= self._max_frames:
            self._should_close = True
        self.clear()

    def _pace(self):
        """Sleep to the next frame deadline (vsync is off: see window.py)."""
        now = time.perf_counter()
        if self._frame_delta > 0 and self._last_frame_time is not None:
            deadline = self._last_frame_time + self._frame_delta
            if now < deadline:
                time.sleep(deadline - now)
                now = time.perf_counter()
            # Keep a steady cadence unless we fell more than a frame behind.
            self._last_frame_time = deadline if now - deadline < self._frame_delta else now
        else:
            self._last_frame_time = now

    def _read_window_pixels(self):
        """What the window shows now: uint8 (h, w, 3), rows top-down."""
        if self._window is None:
            raise RuntimeError("this GUI has no window (show_gui=False or no display)")
        return self._window.read_pixels()

    # --------------------------------------------------------------- events
    def _push_event(self, etype, key, pos, delta):
        self._cursor = pos
        if etype == PRESS:
            self.key_pressed.add(key)
        elif etype == RELEASE:
            self.key_pressed.discard(key)
        if etype == PRESS and key in (GUI.ESCAPE, GUI.EXIT):
            self._should_close = True
        if self._widgets and key in (GUI.LMB, GUI.MOVE):
            widget_input(self, etype, key, pos)
        mods = [m for m in (GUI.SHIFT, GUI.ALT, GUI.CTRL) if self.is_pressed(m)]
        self._events.append(GUI.Event(etype, key, pos, mods, delta))

    def _poll(self):
        if self._window is not None:
            self._window.poll()
            if self._window.should_close:
                self._should_close = True

    def has_key_event(self):
        self._poll()
        return bool(self._events)

    def get_key_event(self):
        return self._events.popleft() if self.has_key_event() else None

    def get_events(self, *e_filter):
        """Yield pending events, only those matching e_filter (event types,
        keys, or (type, key) pairs) when given."""
        wanted = set(tuple(f) if isinstance(f, list) else f for f in e_filter)
        while self.has_key_event():
            e = self._events.popleft()
            if not wanted or e.type in wanted or e.key in wanted or (e.type, e.key) in wanted:
                yield e

    def get_event(self, *e_filter):
        """Consume pending events up to the first match: store it in .event
        and return it (truthy), or return False when there is none."""
        for e in self.get_events(*e_filter):
            self.event = e
            return e
        return False

    def is_pressed(self, *keys):
        self._poll()
        for key in keys:
            if key in self.key_pressed:
                return True
            if key in (GUI.SHIFT, GUI.ALT, GUI.CTRL) and (
                    key + "_L" in self.key_pressed or key + "_R" in self.key_pressed):
                return True
        return False

    def get_cursor_pos(self):
        """Cursor position in [0, 1]^2, origin bottom-left."""
        if self._window is not None:
            self._cursor = self._window.cursor_pos()
        return self._cursor


def _max_frames_from_env():
    env = os.environ.get("VKDIFF_GUI_MAX_FRAMES", "").strip()
    if not env:
        return None
    try:
        n = int(env)
    except ValueError:
        n = -1
    if n < 1:
        raise ValueError(f"VKDIFF_GUI_MAX_FRAMES must be a positive integer, got {env!r}")
    return n


def write_image(path, rgb):
    """Write uint8 (h, w, 3) rows top-down; pillow if present, else PNG via zlib."""
    path = os.fspath(path)
    try:
        from PIL import Image
    except ImportError:
        Image = None
    if Image is not None:
        Image.fromarray(rgb, "RGB").save(path)
        return
    if not path.lower().endswith(".png"):
        warnings.warn(f"vkdiff.GUI: pillow is not installed, writing PNG data to {path}")
    write_png(path, rgb)
