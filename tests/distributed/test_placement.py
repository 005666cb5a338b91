"""placement.plan_workers on faked device lists: Vulkan ignores CUDA_VISIBLE_DEVICES, so GPU ids
from Ray or a launcher are mapped to Vulkan devices by UUID (on NVIDIA the Vulkan deviceUUID is
the CUDA UUID); GPUs round-robin; CPU drivers split the cores."""
from types import SimpleNamespace as D

import pytest

from vkdiff.distributed.placement import (DeviceMappingError, normalise_uuid, plan_workers,
                                          vulkan_index_for_gpu)

U0 = '3b1f6a5c-0d2e-4f11-9a8b-7c6d5e4f3a21'
U1 = 'a0b1c2d3-e4f5-0617-2839-4a5b6c7d8e9f'
TWO_GPUS = [D(index=0, name='NVIDIA H100', uuid=U1.replace('-', ''), device_type='discrete-gpu'),
            D(index=1, name='NVIDIA H100', uuid=U0.replace('-', ''), device_type='discrete-gpu')]
GPU_AND_CPU = [D(index=0, name='llvmpipe', uuid='6d' * 16, device_type='cpu'),
               D(index=1, name='Radeon', uuid=U0.replace('-', ''), device_type='discrete-gpu')]
CPU_ONLY = [D(index=0, name='llvmpipe', uuid='6d' * 16, device_type='cpu'),
            D(index=1, name='SwiftShader', uuid='5a' * 16, device_type='cpu')]


def test_uuid_forms_are_normalised():
    assert normalise_uuid('GPU-' + U0.upper()) == U0.replace('-', '')
    assert normalise_uuid(bytes.fromhex(U0.replace('-', ''))) == U0.replace('-', '')


def test_two_gpus_ordinals_map_through_cuda_uuids():
    # CUDA ordinal 0 is the GPU with UUID U0, which Vulkan lists second
    cuda = (normalise_uuid(U0), normalise_uuid(U1))
    assert vulkan_index_for_gpu('0', TWO_GPUS, cuda) == 1
    assert vulkan_index_for_gpu(1, TWO_GPUS, cuda) == 0
    plan = plan_workers(4, TWO_GPUS, gpu_ids=['0', '1'], cuda_uuid_list=cuda, env={})
    assert [p.device for p in plan] == [1, 0, 1, 0]


def test_uuid_strings_from_cuda_visible_devices():
    env = {'CUDA_VISIBLE_DEVICES': 'GPU-' + U1}
    plan = plan_workers(2, TWO_GPUS, env=env)
    assert [p.device for p in plan] == [0, 0]


def test_gpu_plus_cpu_driver_uses_the_gpu_only():
    plan = plan_workers(3, GPU_AND_CPU, env={})
    assert [p.device for p in plan] == [1, 1, 1]
    assert all('LP_NUM_THREADS' not in p.env for p in plan)


def test_gpus_round_robin_without_launcher_ids():
    assert [p.device for p in plan_workers(3, TWO_GPUS, env={})] == [0, 1, 0]


def test_cpu_only_workers_share_the_cores():
    plan = plan_workers(2, CPU_ONLY, cores=8, env={})
    assert [p.device for p in plan] == [None, None]
    assert [p.env['LP_NUM_THREADS'] for p in plan] == ['4', '4']
    assert plan_workers(4, CPU_ONLY, cores=2, env={})[0].env['LP_NUM_THREADS'] == '0'
    assert plan_workers(2, CPU_ONLY, cores=8, env={'LP_NUM_THREADS': '3'})[0].env == \
        {'LP_NUM_THREADS': '3'}


def test_unknown_gpu_is_an_error_not_another_device():
    with pytest.raises(DeviceMappingError, match='not a Vulkan device') as info:
        plan_workers(1, CPU_ONLY, gpu_ids=['GPU-' + U0], env={})
    assert isinstance(info.value, LookupError)
    with pytest.raises(LookupError, match='ordinal 2'):
        vulkan_index_for_gpu('2', TWO_GPUS, (U0, U1))
