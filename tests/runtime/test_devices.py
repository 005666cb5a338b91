"""Issue 23 item 4: code is chosen by device capability, never by the device's name.
runtime/devices.py describes every device by deviceType, driverID, deviceUUID and its memory
types; devices are selected by index or UUID; the memory types a device's fields use are a pure
function of its type and memory types (tested here on the memory types of GPUs this machine does
not have)."""
import re

import numpy as np
import pytest

import vkdiff as ti
from vkdiff.errors import VkdiffValueError
from vkdiff.lang import state
from vkdiff.runtime import devices

DL, HV, HC, CA = 1, 2, 4, 8


def test_list_devices_describes_each_device():
    found = devices.list_devices()
    assert found, 'no Vulkan device'
    assert [d.index for d in found] == list(range(len(found)))
    for d in found:
        assert re.fullmatch('[0-9a-f]{32}', d.uuid), d.uuid
        assert d.device_type in ('discrete-gpu', 'integrated-gpu', 'virtual-gpu', 'cpu', 'other')
        assert d.driver_id in devices.DRIVER_IDS.values() or d.driver_id.startswith('unknown')
        assert re.fullmatch(r'\d+\.\d+\.\d+', d.api_version)
        assert d.memory_types and d.memory_heaps
        assert all(0 <= heap < len(d.memory_heaps) for _, heap in d.memory_types)
        if d.driver_id in ('mesa-llvmpipe', 'google-swiftshader'):  # both are CPU drivers
            assert d.device_type == 'cpu'


def test_runtime_reads_type_and_driver_from_the_device():
    rt = state.runtime()
    d = devices.list_devices()[0]
    assert (rt.device_type, rt.driver_id, rt.info.uuid) == (d.device_type, d.driver_id, d.uuid)


@pytest.mark.parametrize('form', ['plain', 'dashes', 'upper'])
def test_init_by_uuid(form):
    d = devices.list_devices()[0]
    u = d.uuid
    spec = {'plain': u, 'upper': u.upper(),
            'dashes': f'{u[:8]}-{u[8:12]}-{u[12:16]}-{u[16:20]}-{u[20:]}'}[form]
    ti.init(device=spec)
    x = ti.field(ti.f32, shape=4)

    @ti.kernel
    def fill():
        for i in x:
            x[i] = i * 1.5
    fill()
    np.testing.assert_array_equal(x.to_numpy(), np.arange(4) * 1.5)
    assert state.runtime().info.uuid == u


def test_unknown_uuid_is_a_clear_error_listing_the_devices():
    d = devices.list_devices()[0]
    with pytest.raises(VkdiffValueError, match='no Vulkan device has the UUID 0{32}') as e:
        devices.resolve('00000000-0000-0000-0000-000000000000')
    assert d.uuid in str(e.value) and d.name in str(e.value)
    with pytest.raises(VkdiffValueError, match='neither a device index nor a device UUID'):
        devices.resolve('gpu0')
    with pytest.raises(VkdiffValueError, match='no such Vulkan device'):
        devices.resolve('99')
    with pytest.raises(ValueError):
        ti.init(device=1.5)


def test_vkdiff_device_env_takes_a_uuid(monkeypatch):
    d = devices.list_devices()[0]
    monkeypatch.setenv('VKDIFF_DEVICE', d.uuid.upper())
    ti.init()
    assert state.runtime().info.uuid == d.uuid
    monkeypatch.setenv('VKDIFF_DEVICE', 'ffffffffffffffffffffffffffffffff')
    with pytest.raises(ValueError, match='no Vulkan device has the UUID f{32}'):
        ti.init()


# ------------------------------------------------------------ memory types by device type
# Memory types as these devices report them (vulkaninfo / gpuinfo.org), in their order.
NVIDIA_REBAR = [DL, HV | HC, HV | HC | CA, DL | HV | HC]          # BAR heap: all of VRAM
AMD_NO_REBAR = [DL, HV | HC, DL | HV | HC, HV | HC | CA]          # BAR heap: 256 MiB
BAR_FIRST = [DL | HV | HC, DL, HV | HC | CA]                      # a driver listing BAR first
INTEL_IGPU = [DL, DL | HV | HC, DL | HV | HC | CA]
CPU_DRIVER = [DL | HV | HC | CA]                                  # lavapipe, SwiftShader


@pytest.mark.parametrize('kind, flags, field, staging', [
    ('discrete-gpu', NVIDIA_REBAR, 0, 2),
    ('discrete-gpu', AMD_NO_REBAR, 0, 3),
    ('discrete-gpu', BAR_FIRST, 1, 2),
    ('virtual-gpu', INTEL_IGPU, 0, 2),
    ('other', CPU_DRIVER, 0, 0),
])
def test_staged_devices_keep_fields_out_of_bar_and_download_through_cached_memory(
        kind, flags, field, staging):
    c = devices.choose_memory(kind, flags)
    assert c == {'field': field, 'staging': staging, 'mapped': False}
    if kind == 'discrete-gpu':
        assert not flags[c['field']] & HV  # never BAR memory for a field
        assert flags[c['staging']] & CA and not flags[c['staging']] & DL


@pytest.mark.parametrize('kind, flags, field', [
    ('integrated-gpu', INTEL_IGPU, 2),   # host-cached preferred: host reads of fields
    ('cpu', CPU_DRIVER, 0),
    ('integrated-gpu', [DL, DL | HV | HC], 1),
])
def test_mapped_fields_only_on_integrated_gpus_and_cpu_drivers(kind, flags, field):
    assert devices.choose_memory(kind, flags) == {'field': field, 'staging': None, 'mapped': True}
    off = devices.choose_memory(kind, flags, unified_allowed=False)
    assert off['mapped'] is False and off['staging'] is not None
    # a discrete GPU with the very same memory types is never mapped
    assert devices.choose_memory('discrete-gpu', flags)['mapped'] is False


def test_memory_type_bits_are_respected():
    from vkdiff.runtime import _vkrt
    c = _vkrt.choose_memory(2, NVIDIA_REBAR, 0b1110, 0b0011, True)  # field may not use type 0
    assert c == {'field': 3, 'staging': 1, 'mapped': False}   # BAR only as a last resort
    assert _vkrt.choose_memory(2, [DL], 1, 1, True)['staging'] is None  # no host memory


def test_this_device_uses_the_chosen_types():
    rt = state.runtime()
    mem = dict(rt.device.memory)
    flags = [f for f, _ in rt.info.memory_types]
    assert mem['mapped'] == rt.features['unified_memory']
    expect = devices.choose_memory(rt.device_type, flags)
    assert (mem['field'], mem['mapped']) == (expect['field'], expect['mapped'])


def test_a_uuid_of_decimal_digits_is_a_uuid_not_an_index():
    """SwiftShader's deviceUUID is 53776966745368616465725555494400: all decimal digits."""
    fake = [devices.DeviceInfo(0, 'a', '0' * 32, 'cpu', 'unknown', '', '', 0, 0, '1.3.0', 0, 4096,
                               ((15, 0),), ((1 << 30, 1),)),
            devices.DeviceInfo(1, 'b', '53776966745368616465725555494400', 'cpu',
                               'google-swiftshader', '', '', 0, 0, '1.3.0', 0, 4096, ((15, 0),),
                               ((1 << 30, 1),))]
    assert devices.resolve('53776966745368616465725555494400', fake) == 1
    assert devices.resolve('1', fake) == 1 and devices.resolve(0, fake) == 0
