"""Shared helpers for the vkdiff.GUI tests: reading back written images and
the analytic pixel distances the rasteriser must honour."""

import numpy as np
import pytest


def load_rgb(path):
    """uint8 (h, w, 3) rows top-down, as a viewer shows the file."""
    try:
        from PIL import Image
    except ImportError:
        from vkdiff.gui.png import read_png
        return read_png(path)[..., :3]
    with Image.open(path) as im:
        return np.asarray(im.convert("RGB"))


def rgb(color):
    return np.array([(color >> 16) & 255, (color >> 8) & 255, color & 255], dtype=np.uint8)


@pytest.fixture
def png(tmp_path):
    """png(gui) -> show the gui into a fresh PNG and return its pixels."""
    counter = [0]

    def shoot(gui):
        counter[0] += 1
        path = tmp_path / f"frame{counter[0]}.png"
        gui.show(str(path))
        return load_rgb(path)

    return shoot


@pytest.fixture(autouse=True)
def fresh_vkdiff():
    """The GUI is standalone: override tests/conftest.py's per-test ti.init()
    so these tests need neither the compiler nor the Vulkan runtime."""
    yield
