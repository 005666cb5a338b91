"""Shared fixtures: every device test starts from a fresh `ti.init()` (fields, kernels and the
runtime are reset), so tests never see each other's state. tests/compiler/ overrides
`fresh_vkdiff` with a device-free set-up (its conftest.py): that tier runs without Vulkan."""
import os

import pytest

# the IR verifier (passes/verify.py) checks every kernel's tasks after every compiler pass
os.environ.setdefault('VKDIFF_VERIFY_IR', '1')

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
