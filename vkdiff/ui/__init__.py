"""``vkdiff.ui`` (``ti.ui``): Taichi 1.7.4's GGUI, drawn on the Vulkan device.

``ti.ui.Window`` (:mod:`.window`) with its ``Canvas`` (2D: :mod:`.canvas`), ``Scene`` (3D:
:mod:`.scene`, rendered by :mod:`.render3d`), ``Gui`` widgets (:mod:`.imgui`), ``Camera``
(:mod:`.camera`), and the key constants (:mod:`.constants`).  Stages: inputs are read into
numpy at call time (:mod:`.sources`) or staged on the device (:mod:`.devdraw`), a frame's
commands are rasterised by compute kernels (:mod:`.devkernels`) or, as the fallback and for
the kinds not done on the device, with numpy (:mod:`.raster`), and shown in a GLFW window
through :mod:`vkdiff.gui.window` or kept off-screen.
``ti.ui.GUI`` is vkdiff's ``ti.GUI``, as in Taichi.
"""

from ..gui import GUI
from .camera import Camera, ProjectionMode
from .canvas import Canvas
from .constants import *  # noqa: F401,F403
from .constants import PRESS, RELEASE  # noqa: F401
from .imgui import Gui
from .scene import Scene, SceneV2
from .window import Event, Window


def make_camera():
    return Camera()


def check_ggui_availability():
    """GGUI is always available in vkdiff (device or numpy rasteriser; windows need GLFW and a
    display)."""
    return None


__all__ = ["GUI", "Camera", "ProjectionMode", "Canvas", "Gui", "Scene", "SceneV2", "Event",
           "Window", "make_camera", "check_ggui_availability", "SHIFT", "ALT", "CTRL", "ESCAPE",
           "RETURN", "TAB", "BACKSPACE", "SPACE", "UP", "DOWN", "LEFT", "RIGHT", "CAPSLOCK",
           "LMB", "MMB", "RMB", "PRESS", "RELEASE"]
