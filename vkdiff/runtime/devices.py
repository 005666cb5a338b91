"""Runtime stage: the Vulkan devices of this machine, described by what the driver reports and
never by their names: the device type (VkPhysicalDeviceProperties.deviceType), the driver
(VkPhysicalDeviceDriverProperties.driverID), the deviceUUID (which maps a CUDA or Ray GPU id to
its Vulkan device), the API version and the memory types and heaps. Opens no device.

    list_devices()      -> [DeviceInfo], in Vulkan's index order (ti.init(device=k) picks k)
    resolve(spec)       -> the index `spec` names: an index, or a UUID (any case, dashes allowed)
    choose_memory(...) -> the memory types the native module picks (a pure function)
"""
import dataclasses

from ..errors import RuntimeError_, VkdiffValueError

# VkPhysicalDeviceType
DEVICE_TYPES = {0: 'other', 1: 'integrated-gpu', 2: 'discrete-gpu', 3: 'virtual-gpu', 4: 'cpu'}

# VkDriverId (Vulkan 1.3.2xx), as lowercase names; 0: the driver does not say (a Vulkan 1.1
# device without VK_KHR_driver_properties)
DRIVER_IDS = {
    1: 'amd-proprietary', 2: 'amd-open-source', 3: 'mesa-radv', 4: 'nvidia-proprietary',
    5: 'intel-proprietary-windows', 6: 'intel-open-source-mesa', 7: 'imagination-proprietary',
    8: 'qualcomm-proprietary', 9: 'arm-proprietary', 10: 'google-swiftshader',
    11: 'ggp-proprietary', 12: 'broadcom-proprietary', 13: 'mesa-llvmpipe', 14: 'moltenvk',
    15: 'coreavi-proprietary', 16: 'juice-proprietary', 17: 'verisilicon-proprietary',
    18: 'mesa-turnip', 19: 'mesa-v3dv', 20: 'mesa-panvk', 21: 'samsung-proprietary',
    22: 'mesa-venus', 23: 'mesa-dozen', 24: 'mesa-nvk', 25: 'imagination-open-source-mesa',
    26: 'mesa-honeykrisp',
}

# VkMemoryPropertyFlagBits, for reports
MEMORY_FLAGS = {1: 'DEVICE_LOCAL', 2: 'HOST_VISIBLE', 4: 'HOST_COHERENT', 8: 'HOST_CACHED',
                16: 'LAZILY_ALLOCATED', 32: 'PROTECTED', 64: 'DEVICE_COHERENT_AMD',
                128: 'DEVICE_UNCACHED_AMD'}


def flag_names(flags):
    """'DEVICE_LOCAL|HOST_VISIBLE' for a VkMemoryPropertyFlags value ('0' for none)."""
    return '|'.join(n for bit, n in MEMORY_FLAGS.items() if flags & bit) or '0'


@dataclasses.dataclass(frozen=True)
class DeviceInfo:
    """One Vulkan physical device. uuid: deviceUUID as 32 lowercase hex digits (no dashes);
    device_type: 'discrete-gpu' | 'integrated-gpu' | 'virtual-gpu' | 'cpu' | 'other'; driver_id:
    a DRIVER_IDS name ('nvidia-proprietary', 'mesa-llvmpipe', ...; 'unknown-N' for a newer id,
    'unknown' where the driver does not say); memory_types: ((flags, heap index), ...);
    memory_heaps: ((bytes, flags), ...)."""
    index: int
    name: str
    uuid: str
    device_type: str
    driver_id: str
    driver_name: str
    driver_info: str
    vendor_id: int
    device_id: int
    api_version: str
    driver_version: int
    max_memory_allocation_count: int
    memory_types: tuple
    memory_heaps: tuple

    @property
    def is_cpu(self):
        return self.device_type == 'cpu'

    def describe(self):
        """One line: type, driver, vendor/device ids, API version, UUID."""
        drv = self.driver_name or self.driver_id
        if self.driver_info:
            drv += f' {self.driver_info}'
        return (f'{self.device_type}, driver {drv} [{self.driver_id}], vendor 0x{self.vendor_id:04x} '
                f'device 0x{self.device_id:04x}, Vulkan {self.api_version}, uuid {self.uuid}')


def driver_name_of(driver_id):
    if driver_id == 0:
        return 'unknown'
    return DRIVER_IDS.get(driver_id, f'unknown-{driver_id}')


def from_facts(f):
    """A DeviceInfo from the native module's facts dict (_vkrt.device_facts(), Device.facts)."""
    return DeviceInfo(
        index=f['index'], name=f['name'], uuid=f['uuid'],
        device_type=DEVICE_TYPES.get(f['device_type'], 'other'),
        driver_id=driver_name_of(f['driver_id']), driver_name=f['driver_name'],
        driver_info=f['driver_info'], vendor_id=f['vendor_id'], device_id=f['device_id'],
        api_version=f['api_version'], driver_version=f['driver_version'],
        max_memory_allocation_count=f['max_memory_allocation_count'],
        memory_types=tuple(tuple(t) for t in f['memory_types']),
        memory_heaps=tuple(tuple(h) for h in f['memory_heaps']))


def _native():
    try:
        from . import _vkrt  # deferred: the native module loads when a device is listed
    except ImportError as e:
        raise RuntimeError_(f'vkdiff\'s native Vulkan module does not import [{e}]: `python -m '
                            'vkdiff doctor` says what is missing') from None
    return _vkrt


def list_devices():
    """Every Vulkan physical device, in index order (ti.init(device=k) and VKDIFF_DEVICE=k use
    these indices). [] when there is no Vulkan driver."""
    native = _native()
    if not hasattr(native, 'device_facts'):
        raise RuntimeError_('vkdiff/runtime/_vkrt predates device facts: rebuild it '
                            '(bash tools/setup.sh)')
    return [from_facts(f) for f in native.device_facts()]


def normalize_uuid(text):
    """32 lowercase hex digits, or None when `text` is not a UUID (dashes and case ignored)."""
    s = str(text).replace('-', '').strip().lower()
    return s if len(s) == 32 and all(c in '0123456789abcdef' for c in s) else None


def resolve(spec, devices=None):
    """The device index `spec` names: an int, a decimal string, or a deviceUUID (any case, with
    or without dashes). An unknown UUID or index is a VkdiffValueError listing the devices."""
    if isinstance(spec, bool):
        raise VkdiffValueError(f'device={spec!r}: give a device index or a UUID')
    if isinstance(spec, int) and spec >= 0 and devices is None:
        return spec  # checked when the device is opened (and no enumeration needed)
    devices = list_devices() if devices is None else devices
    listing = '; '.join(f'{d.index}: {d.name} ({d.device_type}, uuid {d.uuid})'
                        for d in devices) or 'none'
    text = str(spec).strip()
    uuid = normalize_uuid(text)  # first: a UUID may be all decimal digits (SwiftShader's is)
    if uuid is None and (isinstance(spec, int) or text.isdigit()):
        k = int(text)
        if not 0 <= k < len(devices):
            raise VkdiffValueError(f'device {k}: no such Vulkan device (devices: {listing})')
        return k
    if uuid is None:
        raise VkdiffValueError(f'device={spec!r} is neither a device index nor a device UUID '
                               f'(32 hex digits); devices: {listing}')
    for d in devices:
        if d.uuid == uuid:
            return d.index
    raise VkdiffValueError(f'no Vulkan device has the UUID {uuid} (devices: {listing})')


def choose_memory(device_type, memory_flags, unified_allowed=True):
    """The memory types the native module picks for a device (the same C++ function): a dict
    with field, staging (None when fields are mapped) and mapped. device_type: a DEVICE_TYPES
    name; memory_flags: each memory type's VkMemoryPropertyFlags, in the device's order."""
    code = {v: k for k, v in DEVICE_TYPES.items()}[device_type]
    return dict(_native().choose_memory(code, list(memory_flags), unified_allowed=unified_allowed))
