"""``vkdiff.gui``: a standalone, Taichi-compatible ``GUI`` (``ti.GUI``).

Needs only numpy; a window additionally needs the ``glfw`` and ``PyOpenGL``
packages and a display, and pillow (optional) adds more image formats and a
nicer font.  Nothing here imports the rest of vkdiff, so the main package can
re-export :class:`GUI` as ``vkdiff.GUI``.

Modules: ``gui`` (the GUI class), ``raster`` (numpy rasteriser of the frame),
``window`` (GLFW/OpenGL presentation), ``font`` (text), ``widgets`` (slider,
label, button), ``png`` (fallback PNG writer).
"""

from .gui import GUI, write_image

__all__ = ["GUI", "write_image"]
