"""``vkdiff.ui.Window``: Taichi 1.7.4's GGUI window (python/taichi/ui/window.py) on vkdiff.

A window owns one frame (:class:`vkdiff.ui.canvas.Frame`): canvas and scene calls queue draw
commands, and the frame is rasterised (on the device, or by numpy) when it is needed.  ``show()`` presents it
-- in a GLFW window through vkdiff's ``ti.GUI`` window code (:mod:`vkdiff.gui.window`), or
nowhere when the window is off-screen -- and starts the next frame.  Off-screen means
``show_window=False``, ``TI_GUI_SHOW=0`` in the environment, or no display (a warning says
so once).  As in Taichi, reading the frame back (``get_image_buffer_as_numpy``,
``get_depth_buffer_as_numpy``, ``save_image``) draws it, and off-screen also starts the next
frame.  Images come back indexed ``[x, y]`` with y up (``(width, height, 4)`` floats).

Input: events are ``Press``/``Release`` of key names (``ti.ui.SHIFT`` == ``"Shift"``, letters
lower-case) and mouse buttons (``ti.ui.LMB``...).  Off-screen there is no input: ``get_events``
returns ``[]``, ``get_event`` False, ``is_pressed`` False, the cursor stays at (0, 1) (GLFW's
before any motion) -- where Taichi raises "show_window must be True", so that programs written
for a window also run headless.

``VKDIFF_GUI_MAX_FRAMES=N`` (as for ``ti.GUI``): ``running`` turns False after the N-th
``show()``, and a ``show()`` past it ends the program (``SystemExit(0)``).
"""

import os
import time
import warnings
import weakref

import numpy as np

from . import raster
from .canvas import Canvas, Frame
from .constants import PRESS, RELEASE
from .imgui import Gui
from .scene import Scene
from ..gui.gui import _max_frames_from_env, write_image
from ..gui.png import write_png
from ..errors import VkdiffValueError
from ..gui.window import Window as GlfwWindow, WindowUnavailable

_warned_headless = False
_KEY_NAMES = {"Shift_L": "Shift", "Shift_R": "Shift", "Control_L": "Control",
              "Control_R": "Control", "Alt_L": "Alt", "Alt_R": "Alt", "Caps_Lock": "CapsLock"}


class Event:
    """One input event: ``key`` (a key name or LMB/MMB/RMB) and ``type`` (PRESS/RELEASE)."""

    def __init__(self, type, key):  # noqa: A002 - Taichi's attribute name
        self.type = type
        self.key = key

    def __repr__(self):
        return f"Event(type={self.type!r}, key={self.key!r})"


def _max_frames():
    return _max_frames_from_env()


class Window:
    """A GGUI window: ``ti.ui.Window(name, res, vsync=False, show_window=True,
    fps_limit=1000, pos=(100, 100))``; ``res`` is (width, height) in pixels."""

    def __init__(self, name, res, vsync=False, show_window=True, fps_limit=1000, pos=(100, 100)):
        env = os.environ.get("TI_GUI_SHOW")
        if env is not None and env.strip() != "":
            show_window = bool(int(env))
        if isinstance(res, (int, np.integer)):
            res = (res, res)
        width, height = (int(r) for r in res)
        if width < 1 or height < 1:
            raise VkdiffValueError(f"ti.ui.Window: res must be positive (width, height), got {res}")
        self.name = str(name)
        self.res = (width, height)
        self.vsync = bool(vsync)
        self.fps_limit = fps_limit
        self._frame = Frame(width, height)
        self._canvas = Canvas(self)
        self._scene = Scene(self._frame)
        self._gui = Gui(self)
        self._events = []
        self._pressed = set()
        self._cursor = (0.0, 1.0)
        self._current_event = None
        self._closed = False
        self._frames = 0
        self._max_frames = _max_frames()
        self._last_present = None
        self._glfw = self._open(pos) if show_window else None

    def _open(self, pos):
        global _warned_headless
        ref = weakref.WeakMethod(self._on_event)

        def on_event(*args):
            method = ref()
            if method is not None:
                method(*args)
        try:
            win = GlfwWindow(self.name, self.res[0], self.res[1], on_event)
        except WindowUnavailable as e:
            if not _warned_headless:
                _warned_headless = True
                warnings.warn(f"ti.ui.Window: cannot open a window ({e}); rendering off-screen "
                              f"(get_image_buffer_as_numpy/save_image still work). Pass "
                              f"show_window=False to silence this.", RuntimeWarning, stacklevel=3)
            return None
        try:
            import glfw
            glfw.set_window_pos(win._win, int(pos[0]), int(pos[1]))
        except Exception:  # noqa: BLE001 - a position is a wish, not a requirement
            pass
        return win

    # ------------------------------------------------------------------ state
    @property
    def show_window(self):
        return self._glfw is not None

    @property
    def running(self):
        self._poll()
        return not self._closed

    @running.setter
    def running(self, value):
        self._closed = not value

    def get_window_shape(self):
        return self.res

    def get_canvas(self):
        return self._canvas

    def get_scene(self):
        return self._scene

    def get_gui(self):
        return self._gui

    @property
    def GUI(self):  # noqa: N802 - Taichi's name (deprecated there)
        return self._gui

    # ------------------------------------------------------------------ input
    def _on_event(self, etype, key, pos, delta):
        self._cursor = (float(pos[0]), float(pos[1]))
        if key == "WMClose":
            self._closed = True
            return
        if etype not in (PRESS, RELEASE):
            return  # motion / wheel: only the cursor
        key = _KEY_NAMES.get(key, key)
        if etype == PRESS:
            self._pressed.add(key)
        else:
            self._pressed.discard(key)
        self._events.append(Event(etype, key))

    def _poll(self):
        if self._glfw is not None:
            self._glfw.poll()
            if self._glfw.should_close:
                self._closed = True

    @staticmethod
    def _check_tag(tag):
        if tag not in (None, PRESS, RELEASE):
            raise ValueError(f"unrecognized event tag {tag!r}")

    def get_events(self, tag=None):
        """Pending events (of type tag: ti.ui.PRESS / RELEASE, or all), removed from the queue."""
        self._check_tag(tag)
        self._poll()
        taken = [e for e in self._events if tag is None or e.type == tag]
        self._events = [e for e in self._events if not (tag is None or e.type == tag)]
        return taken

    def get_event(self, tag=None):
        """Take the first pending event of type tag into ``window.event``; False if none."""
        self._check_tag(tag)
        self._poll()
        for i, e in enumerate(self._events):
            if tag is None or e.type == tag:
                self._current_event = self._events.pop(i)
                return True
        return False

    @property
    def event(self):
        return self._current_event

    @event.setter
    def event(self, value):
        self._current_event = value

    def is_pressed(self, *keys):
        self._poll()
        return any(k in self._pressed for k in keys)

    def get_cursor_pos(self):
        """Cursor position in [0, 1]^2, origin bottom-left."""
        if self._glfw is not None:
            self._cursor = self._glfw.cursor_pos()
        return self._cursor

    # ------------------------------------------------------------------ frames
    def _compose(self, gui=False):
        """The frame; with gui=True (a real window) the ImGui panels drawn over it.  Taichi's
        off-screen image (get_image_buffer_as_numpy, save_image) holds no ImGui."""
        rgb, depth = self._frame.compose()
        if gui and self._gui._panels:
            rgb = rgb.copy()
            self._gui._draw(rgb)
        return rgb, depth

    def _next_frame(self):
        self._frame.next_frame()
        self._gui._next_frame()

    def _after_readback(self):
        if self._glfw is None:
            self._next_frame()

    def show(self):
        """Present this frame and start the next one."""
        if self._max_frames is not None and self._frames >= self._max_frames:
            raise SystemExit(0)
        if self._glfw is not None:
            if self._gui._panels:
                rgb, _ = self._compose(gui=True)
                rgba = raster.to_rgba8(rgb)
            else:
                rgba = self._frame.rgba8().copy()
                rgba[:, :, 3] = 255
            self._glfw.present(rgba)
            self._glfw.poll()
            self._pace()
        self._next_frame()
        self._frames += 1
        if self._max_frames is not None and self._frames >= self._max_frames:
            self._closed = True

    def _pace(self):
        if not self.fps_limit:
            return
        delta = 1.0 / float(self.fps_limit)
        now = time.perf_counter()
        if self._last_present is not None and now < self._last_present + delta:
            time.sleep(self._last_present + delta - now)
            now = time.perf_counter()
        self._last_present = now

    def get_image_buffer_as_numpy(self):
        """The frame as (width, height, 4) float32 in [0, 1], indexed [x, y] with y up."""
        img = self._frame.rgba8().transpose(1, 0, 2).astype(np.float32) / np.float32(255)
        self._after_readback()
        return img

    def get_depth_buffer_as_numpy(self):
        """Depth as (width, height) float32: 1 at the camera's near plane, 0 far / empty."""
        out = np.ascontiguousarray(self._frame.depth_image().T)
        self._after_readback()
        return out

    def get_depth_buffer(self, depth):
        """Copy the depth buffer into a 2D f32 field or ndarray of shape (width, height)."""
        if len(depth.shape) != 2 or tuple(depth.shape) != self.res:
            raise ValueError(f"the depth field must have shape {self.res}, got {depth.shape}")
        depth.from_numpy(self.get_depth_buffer_as_numpy())

    def save_image(self, filename):
        """Write the frame to an image file (PNG: RGBA, as Taichi; others RGB through pillow)."""
        rgba = self._frame.rgba8()[::-1].copy()
        if os.fspath(filename).lower().endswith(".png"):
            write_png(filename, rgba)  # RGBA, as Taichi's
        else:
            write_image(filename, rgba[:, :, :3].copy())
        self._after_readback()

    write_image = save_image

    def destroy(self):
        """Close the window; ``running`` becomes False."""
        win, self._glfw = self._glfw, None
        if win is not None:
            win.close()
        self._closed = True

    def __del__(self):
        try:
            self.destroy()
        except Exception:  # noqa: BLE001
            pass
