"""Shared fixtures for the vkdiff.GUI tests."""

import pytest

from vkdiff.gui.png import read_image


@pytest.fixture
def png(tmp_path):
    """png(gui) -> show the gui into a fresh PNG file and return its pixels
    (uint8 (h, w, 3), rows top-down as a viewer shows them)."""
    counter = [0]

    def shoot(gui):
        counter[0] += 1
        path = tmp_path / f"frame{counter[0]}.png"
        gui.show(str(path))
        return read_image(path)

    return shoot


@pytest.fixture(autouse=True)
def fresh_vkdiff():
    """The GUI is standalone: override tests/conftest.py's per-test ti.init()
    so these tests need neither the compiler nor the Vulkan runtime."""
    yield
