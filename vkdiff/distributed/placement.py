"""Where each worker runs (face floor, no device opened here): pure functions from a list of
Vulkan devices (vkdiff.runtime.devices.list_devices(): index, uuid, device_type) and the GPU ids
a launcher hands out, to one Placement per worker.

- Vulkan ignores CUDA_VISIBLE_DEVICES. Ray and CUDA launchers hand out GPU ordinals (NVML's
  order, as nvidia-smi lists them) or 'GPU-<uuid>' strings; on NVIDIA the Vulkan deviceUUID is
  the CUDA UUID, so an ordinal is turned into a UUID (nvidia-smi's list) and the UUID into the
  Vulkan device index. A GPU id that matches no Vulkan device is an error, never a silent
  fallback to another device.
- Without launcher ids, workers go round-robin over the GPUs (discrete, integrated, virtual) in
  Vulkan index order; a CPU driver beside a GPU is not used.
- With only CPU drivers (lavapipe, SwiftShader), every worker uses the default device and the
  cores are split: LP_NUM_THREADS = cores // workers (0, lavapipe's "run in the calling thread",
  when that is 1 or less). An LP_NUM_THREADS the user set is kept."""
import os
import shutil
import subprocess
from dataclasses import dataclass, field

from ..errors import VkdiffError
from ..runtime import devices

GPU_TYPES = ('discrete-gpu', 'integrated-gpu', 'virtual-gpu')


class DeviceMappingError(VkdiffError, LookupError):
    """A GPU id handed to a worker matches no Vulkan device (a LookupError)."""


@dataclass(frozen=True)
class Placement:
    """One worker's device (a Vulkan index for VKDIFF_DEVICE; None: the default device) and the
    environment it starts with."""
    device: object = None
    env: dict = field(default_factory=dict)
    reason: str = ''


def normalise_uuid(u):
    """'GPU-1a2b3c4d-...' / '1A2B3C4D...' / bytes -> 32 lowercase hex digits (None stays None)."""
    if u is None:
        return None
    if isinstance(u, (bytes, bytearray)):
        return bytes(u).hex()
    s = str(u).strip().lower()
    if s.startswith('gpu-'):
        s = s[4:]
    return s.replace('-', '')


def cuda_uuids():
    """The NVIDIA GPUs' UUIDs in NVML order (nvidia-smi's), () where there is no nvidia-smi."""
    smi = shutil.which('nvidia-smi')
    if not smi:
        return ()
    try:
        out = subprocess.run([smi, '--query-gpu=uuid', '--format=csv,noheader'],
                             capture_output=True, text=True, timeout=20, check=True).stdout
    except (OSError, subprocess.SubprocessError):
        return ()
    return tuple(normalise_uuid(line) for line in out.split() if line.strip())


def vulkan_index_for_gpu(gpu_id, vulkan_devices, cuda_uuid_list=()):
    """The Vulkan index of the device a launcher's GPU id names. gpu_id: an ordinal (int or
    digit string, resolved through cuda_uuid_list) or a UUID ('GPU-…' or hex)."""
    s = str(gpu_id).strip()
    if s.isdigit():
        k = int(s)
        if k >= len(cuda_uuid_list):
            raise DeviceMappingError(
                f'GPU ordinal {k} cannot be mapped to a Vulkan device: '
                f'{len(cuda_uuid_list)} CUDA UUID(s) known (nvidia-smi); '
                'pass GPU UUIDs (CUDA_VISIBLE_DEVICES=GPU-…) instead')
        want = cuda_uuid_list[k]
    else:
        want = normalise_uuid(s)
    for d in vulkan_devices:
        if normalise_uuid(getattr(d, 'uuid', None)) == want:
            return d.index
    listing = ', '.join(f'{d.index}: {d.name} ({normalise_uuid(getattr(d, "uuid", None))})'
                        for d in vulkan_devices)
    raise DeviceMappingError(f'GPU {gpu_id} (UUID {want}) is not a Vulkan device here; '
                             f'devices: {listing or "none"}')


def _launcher_gpu_ids(env):
    """GPU ids from CUDA_VISIBLE_DEVICES (None when it is unset)."""
    v = env.get('CUDA_VISIBLE_DEVICES')
    if v is None:
        return None
    return [p for p in (x.strip() for x in v.split(',')) if p and p != '-1']


def plan_workers(workers, vulkan_devices, gpu_ids=None, cuda_uuid_list=(), cores=None,
                 env=None):
    """One Placement per worker. gpu_ids: the ids a launcher handed out (a list: worker k takes
    gpu_ids[k % len]); None reads CUDA_VISIBLE_DEVICES from env, else the GPUs in index order."""
    if workers < 1:
        raise ValueError(f'workers must be >= 1, not {workers}')
    env = os.environ if env is None else env
    if gpu_ids is None:
        gpu_ids = _launcher_gpu_ids(env)
    gpus = [d for d in vulkan_devices if getattr(d, 'device_type', None) in GPU_TYPES]
    if gpu_ids:
        idx = [vulkan_index_for_gpu(g, vulkan_devices, cuda_uuid_list) for g in gpu_ids]
        return [Placement(idx[k % len(idx)], {}, f'GPU id {gpu_ids[k % len(idx)]} by UUID')
                for k in range(workers)]
    if gpus:
        return [Placement(gpus[k % len(gpus)].index, {},
                          f'GPU {k % len(gpus)} of {len(gpus)} (round-robin)')
                for k in range(workers)]
    cores = cores or os.cpu_count() or 1
    if 'LP_NUM_THREADS' in env:
        threads = env['LP_NUM_THREADS']
        why = 'LP_NUM_THREADS kept as set'
    else:
        t = cores // workers
        threads = str(t if t > 1 else 0)
        why = f'CPU driver: {cores} core(s) shared by {workers} worker(s)'
    return [Placement(None, {'LP_NUM_THREADS': threads}, why) for _ in range(workers)]


def local_vulkan_devices():
    """This machine's Vulkan devices (opens no device)."""
    return devices.list_devices()
