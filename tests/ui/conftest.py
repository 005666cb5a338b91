"""Fixtures for the ti.ui (GGUI) tests: an off-screen window and pixel-centre helpers."""

import numpy as np
import pytest

import vkdiff as ti


@pytest.fixture
def window():
    """An off-screen 64 x 48 window (width x height)."""
    w = ti.ui.Window("test", (64, 48), show_window=False)
    yield w
    w.destroy()


def centres(width, height):
    """Pixel centres (x, y) in pixels, indexed [x, y] like get_image_buffer_as_numpy."""
    return np.meshgrid(np.arange(width) + 0.5, np.arange(height) + 0.5, indexing="ij")
