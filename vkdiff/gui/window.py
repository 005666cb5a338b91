"""GLFW + OpenGL presentation of ``vkdiff.GUI`` frames.

A :class:`Window` owns one GLFW window with a (compatibility profile) OpenGL
context.  Each frame the CPU-rasterised RGBA image (rows bottom-up, exactly
``raster.Canvas.rgba_bottom_up()``) is uploaded into a texture with
``glTexSubImage2D`` and drawn as one full-window quad with nearest filtering,
so every window pixel is exactly one frame pixel.  Input arrives through GLFW
callbacks and is handed to the GUI as Taichi-style ``(type, key, pos, delta)``
tuples.  ``glfw`` and ``OpenGL`` are imported lazily: :func:`open_window`
raises :class:`WindowUnavailable` (with the reason) when either is missing or
no display can be opened, and the GUI then renders off-screen.

GLFW is initialised once per process and kept (re-initialising it against an
X server that resets when its last client leaves proved flaky); it is
terminated at interpreter exit.
"""

import atexit
import os
import sys
import warnings
import weakref

import numpy as np

PRESS, RELEASE, MOTION = "Press", "Release", "Motion"


class WindowUnavailable(RuntimeError):
    """No window can be opened here (no display, no GLFW, no OpenGL)."""


_glfw = None
_gl = None
_initialised = False


def _load_glfw():
    global _glfw
    if _glfw is None:
        try:
            import glfw
        except Exception as e:  # ImportError, or the bundled library fails to load
            raise WindowUnavailable(f"the 'glfw' package is not usable ({e})") from None
        _glfw = glfw
    return _glfw


def _load_gl():
    """Import PyOpenGL, after GLFW has picked its platform: PyOpenGL must load
    the same GL binding (GLX on X11, EGL on Wayland) as GLFW's contexts use."""
    global _gl
    if _gl is None:
        glfw = _glfw
        if "OpenGL" not in sys.modules and "PYOPENGL_PLATFORM" not in os.environ:
            platform = glfw.get_platform() if hasattr(glfw, "get_platform") else None
            if platform == getattr(glfw, "PLATFORM_X11", object()):
                os.environ["PYOPENGL_PLATFORM"] = "glx"
            elif platform == getattr(glfw, "PLATFORM_WAYLAND", object()):
                os.environ["PYOPENGL_PLATFORM"] = "egl"
        try:
            import OpenGL.GL as gl
        except Exception as e:
            raise WindowUnavailable(f"PyOpenGL is not usable ({e})") from None
        _gl = gl
    return _gl


def _errors(caught):
    return "; ".join(str(w.message) for w in caught) or "no details from GLFW"


def _ensure_init():
    global _initialised
    glfw = _load_glfw()
    if not _initialised:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ok = glfw.init()
        if not ok:
            raise WindowUnavailable(f"GLFW could not initialise: {_errors(caught)}")
        _initialised = True
        atexit.register(_at_exit)
    _load_gl()
    return glfw


def _terminate():
    global _initialised
    if _initialised and not Window.live:
        _initialised = False
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _glfw.terminate()


def _at_exit():
    # Close windows while PyOpenGL can still import what it needs, then GLFW.
    for win in list(Window.open_windows):
        try:
            win.close()
        except Exception:
            pass
    _terminate()


def reset():
    """Terminate GLFW if no window is open, so that the next window picks up
    a changed DISPLAY (used by the tests)."""
    _terminate()


def _key_name(glfw, key):
    """GLFW key code -> Taichi key name (X11 keysym names, lower-case letters)."""
    table = _key_name.table
    if table is None:
        table = {
            glfw.KEY_ESCAPE: "Escape", glfw.KEY_SPACE: " ", glfw.KEY_ENTER: "Return",
            glfw.KEY_KP_ENTER: "Return", glfw.KEY_TAB: "Tab", glfw.KEY_BACKSPACE: "BackSpace",
            glfw.KEY_UP: "Up", glfw.KEY_DOWN: "Down", glfw.KEY_LEFT: "Left",
            glfw.KEY_RIGHT: "Right", glfw.KEY_CAPS_LOCK: "Caps_Lock",
            glfw.KEY_LEFT_SHIFT: "Shift_L", glfw.KEY_RIGHT_SHIFT: "Shift_R",
            glfw.KEY_LEFT_CONTROL: "Control_L", glfw.KEY_RIGHT_CONTROL: "Control_R",
            glfw.KEY_LEFT_ALT: "Alt_L", glfw.KEY_RIGHT_ALT: "Alt_R",
            glfw.KEY_DELETE: "Delete", glfw.KEY_HOME: "Home", glfw.KEY_END: "End",
            glfw.KEY_PAGE_UP: "Prior", glfw.KEY_PAGE_DOWN: "Next", glfw.KEY_INSERT: "Insert",
        }
        for i in range(1, 13):
            table[getattr(glfw, f"KEY_F{i}")] = f"F{i}"
        for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789":
            table[getattr(glfw, f"KEY_{c}")] = c.lower()
        punct = {"MINUS": "-", "EQUAL": "=", "LEFT_BRACKET": "[", "RIGHT_BRACKET": "]",
                 "BACKSLASH": "\\", "SEMICOLON": ";", "APOSTROPHE": "'", "COMMA": ",",
                 "PERIOD": ".", "SLASH": "/", "GRAVE_ACCENT": "`"}
        for name, ch in punct.items():
            table[getattr(glfw, f"KEY_{name}")] = ch
        _key_name.table = table
    return table.get(key)


_key_name.table = None


class Window:
    """One GLFW window presenting frames of a fixed size (width x height)."""

    live = 0
    open_windows = weakref.WeakSet()

    def __init__(self, title, width, height, on_event):
        glfw = _ensure_init()
        gl = _gl
        self.width, self.height = int(width), int(height)
        self._on_event = on_event
        self.should_close = False
        glfw.window_hint(glfw.RESIZABLE, glfw.FALSE)
        glfw.window_hint(glfw.VISIBLE, glfw.TRUE)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            win = glfw.create_window(self.width, self.height, str(title), None, None)
        if not win:
            raise WindowUnavailable(f"GLFW could not create a window: {_errors(caught)}")
        self._win, self._tex = win, None
        Window.live += 1
        Window.open_windows.add(self)
        try:
            self._setup_gl(glfw, gl)
        except Exception as e:  # e.g. no usable GL binding for this context
            self.close()
            raise WindowUnavailable(f"OpenGL setup failed ({type(e).__name__}: {e})") from None

    def _setup_gl(self, glfw, gl):
        win = self._win
        glfw.make_context_current(win)
        glfw.swap_interval(0)  # frame pacing is done by GUI.fps_limit
        self._tex = gl.glGenTextures(1)
        gl.glBindTexture(gl.GL_TEXTURE_2D, self._tex)
        for p in (gl.GL_TEXTURE_MIN_FILTER, gl.GL_TEXTURE_MAG_FILTER):
            gl.glTexParameteri(gl.GL_TEXTURE_2D, p, gl.GL_NEAREST)
        for p in (gl.GL_TEXTURE_WRAP_S, gl.GL_TEXTURE_WRAP_T):
            gl.glTexParameteri(gl.GL_TEXTURE_2D, p, gl.GL_CLAMP_TO_EDGE)
        gl.glPixelStorei(gl.GL_UNPACK_ALIGNMENT, 4)
        gl.glPixelStorei(gl.GL_PACK_ALIGNMENT, 1)
        gl.glTexImage2D(gl.GL_TEXTURE_2D, 0, gl.GL_RGBA8, self.width, self.height, 0,
                        gl.GL_RGBA, gl.GL_UNSIGNED_BYTE, None)
        glfw.set_key_callback(win, self._key)
        glfw.set_mouse_button_callback(win, self._button)
        glfw.set_cursor_pos_callback(win, self._motion)
        glfw.set_scroll_callback(win, self._scroll)
        glfw.set_window_close_callback(win, self._closing)

    # ------------------------------------------------------------------ input
    def cursor_pos(self):
        """Cursor position in [0, 1]^2, origin bottom-left."""
        if self._win is None:
            return (0.0, 0.0)
        x, y = _glfw.get_cursor_pos(self._win)
        return self._normalise(x, y)

    def position(self):
        """Top-left corner of the window's client area on the screen."""
        return _glfw.get_window_pos(self._win)

    def _normalise(self, x, y):
        w, h = _glfw.get_window_size(self._win)
        return (x / max(w, 1), 1.0 - y / max(h, 1))

    def _key(self, win, key, scancode, action, mods):
        if action == _glfw.REPEAT:
            return
        name = _key_name(_glfw, key)
        if name is None:
            name = _glfw.get_key_name(key, scancode)
            if not name:
                return
            name = name.lower()
        etype = PRESS if action == _glfw.PRESS else RELEASE
        self._on_event(etype, name, self.cursor_pos(), (0, 0))

    def _button(self, win, button, action, mods):
        name = {_glfw.MOUSE_BUTTON_LEFT: "LMB", _glfw.MOUSE_BUTTON_RIGHT: "RMB",
                _glfw.MOUSE_BUTTON_MIDDLE: "MMB"}.get(button)
        if name is not None:
            etype = PRESS if action == _glfw.PRESS else RELEASE
            self._on_event(etype, name, self.cursor_pos(), (0, 0))

    def _motion(self, win, x, y):
        self._on_event(MOTION, "Motion", self._normalise(x, y), (0, 0))

    def _scroll(self, win, dx, dy):
        self._on_event(MOTION, "Wheel", self.cursor_pos(), (int(dx * 120), int(dy * 120)))

    def _closing(self, win):
        self.should_close = True
        self._on_event(PRESS, "WMClose", self.cursor_pos(), (0, 0))

    def poll(self):
        if self._win is not None:
            _glfw.poll_events()
            if not self.should_close and _glfw.window_should_close(self._win):
                self._closing(self._win)  # closed without the callback firing

    # ---------------------------------------------------------------- drawing
    def _draw(self, rgba=None):
        gl = _gl
        _glfw.make_context_current(self._win)
        fw, fh = _glfw.get_framebuffer_size(self._win)
        gl.glViewport(0, 0, fw, fh)
        gl.glBindTexture(gl.GL_TEXTURE_2D, self._tex)
        if rgba is not None:
            gl.glTexSubImage2D(gl.GL_TEXTURE_2D, 0, 0, 0, self.width, self.height,
                               gl.GL_RGBA, gl.GL_UNSIGNED_BYTE, np.ascontiguousarray(rgba))
        gl.glEnable(gl.GL_TEXTURE_2D)
        gl.glBegin(gl.GL_QUADS)
        for u, v in ((0, 0), (1, 0), (1, 1), (0, 1)):
            gl.glTexCoord2f(u, v)
            gl.glVertex2f(2 * u - 1, 2 * v - 1)
        gl.glEnd()
        gl.glDisable(gl.GL_TEXTURE_2D)
        return fw, fh

    def present(self, rgba):
        """Upload rgba (height, width, 4) uint8, rows bottom-up, and show it."""
        if self._win is None:
            return
        self._draw(rgba)
        _glfw.swap_buffers(self._win)

    def read_pixels(self):
        """Redraw the last presented frame into the back buffer and read it
        back: uint8 (fb_height, fb_width, 3), rows top-down like image files."""
        gl = _gl
        fw, fh = self._draw()
        gl.glFinish()
        gl.glReadBuffer(gl.GL_BACK)
        data = gl.glReadPixels(0, 0, fw, fh, gl.GL_RGBA, gl.GL_UNSIGNED_BYTE)
        if not isinstance(data, (bytes, bytearray)):
            data = np.asarray(data).tobytes()
        img = np.frombuffer(data, dtype=np.uint8).reshape(fh, fw, 4)
        return np.ascontiguousarray(img[::-1, :, :3])

    def close(self):
        if self._win is None:
            return
        _glfw.make_context_current(self._win)
        if self._tex is not None:
            try:
                _gl.glDeleteTextures([self._tex])
            except Exception:
                pass
        _glfw.make_context_current(None)
        _glfw.destroy_window(self._win)
        self._win = None
        Window.live -= 1
        Window.open_windows.discard(self)
