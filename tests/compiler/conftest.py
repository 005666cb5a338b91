"""The device-free tier: every test here compiles against fixed options (a lavapipe-like
profile, vkdiff.compiler.lavapipe_like()) with `init_offline`, so it needs no Vulkan device:
CI runs it with VK_ICD_FILENAMES=/nonexistent. Opening the device here is an error
(lang.state.runtime raises), and each test checks that none was opened.

This fixture overrides tests/conftest.py's `fresh_vkdiff` (same name: the nearest conftest
wins), which would open the device for every test."""
import pytest

import vkdiff as ti
from vkdiff import compiler
from vkdiff.lang import state


@pytest.fixture(autouse=True)
def fresh_vkdiff():
    state.init_offline(compiler.lavapipe_like())
    yield
    opened = state.has_runtime()
    ti.reset()
    assert not opened, 'a device-free compiler test opened the Vulkan device'
