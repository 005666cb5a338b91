"""Shared fixtures: every device test starts from a fresh `ti.init()` (fields, kernels and the
runtime are reset), so tests never see each other's state. tests/compiler/ overrides
`fresh_vkdiff` with a device-free set-up (its conftest.py): that tier runs without Vulkan."""
import os

import pytest

# ti.init()'s warning about a device's loose f32 math (vkdiff/precision.py) would measure the
# driver once per machine and print in every test process; tests/drivers/test_precision.py
# turns it back on where it is the subject
os.environ.setdefault('VKDIFF_PRECISION_WARNING', '0')

import vkdiff as ti  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_vkdiff():
    ti.init()
    yield
    ti.reset()
    _fail_on_validation_messages()


def _fail_on_validation_messages():
    """Under VKDIFF_VALIDATION=1 a test fails if the Khronos validation layer reported anything
    (error or warning, synchronization validation included) while it ran."""
    from vkdiff.runtime import validation
    if validation.enabled():
        msgs = validation.read_new_messages()
        if msgs:
            pytest.fail(f'{len(msgs)} validation-layer message(s):\n' + '\n'.join(msgs[:5]))
