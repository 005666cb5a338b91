"""Shared fixtures: every device test starts from a fresh `ti.init()` (fields, kernels and the
runtime are reset), so tests never see each other's state. tests/compiler/ overrides
`fresh_vkdiff` with a device-free set-up (its conftest.py): that tier runs without Vulkan.

A test that needs an optional device feature says so, the one way: the marker
`@pytest.mark.requires('float64')` (or `pytest.param(ti.i64, marks=pytest.mark.requires('int64'))`
for one parameter). The names are the keys of `ti.device_features()` (float64: shaderFloat64,
int64: shaderInt64, ...). On a device without one (SwiftShader has neither f64 nor i64; or
VKDIFF_DISABLE_FEATURES=float64,int64 on any device) the test skips, naming the feature and the
device; everywhere else it runs. Nothing else turns an error into a skip: a test that checks the
"no f64 on this device" error itself carries no marker and runs everywhere."""
import os

import pytest
from device_requires import missing_features

# ti.init()'s warning about a device's loose f32 math (vkdiff/precision.py) would measure the
# driver once per machine and print in every test process; tests/drivers/test_precision.py
# turns it back on where it is the subject
os.environ.setdefault('VKDIFF_PRECISION_WARNING', '0')

import vkdiff as ti  # noqa: E402


def pytest_configure(config):
    config.addinivalue_line(
        'markers', 'requires(*features): the test needs these device features (keys of '
        'ti.device_features(): float64, int64, ...) and skips on a device that lacks one')


@pytest.fixture(autouse=True)
def fresh_vkdiff(request):
    ti.init()
    missing = missing_features(request.node, ti.device_features())
    if missing:
        device = ti.device_name()
        ti.reset()
        pytest.skip(f'needs {" and ".join(missing)}, which this Vulkan device ({device}) lacks')
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
