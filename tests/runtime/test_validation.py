"""The runtime is correct on any driver, not only on lavapipe's in-order queue: dependent
dispatches in one batch get barriers, and the SPIR-V uses only the device features that were
enabled (fallbacks otherwise). Run this file under VKDIFF_VALIDATION=1 too (tools/test.sh does)."""
import numpy as np
import pytest

import vkdiff as ti

from shared_programs import accumulate, dependent_chain


def test_dependent_dispatches_in_one_batch():
    """Write then dependent read of the same field thousands of times in one batch."""
    n = 256
    a, b, step_a, step_b = dependent_chain(n)
    history = []
    for k in range(2000):
        step_a()
        step_b()
        if k % 500 == 499:
            history.append(b.to_numpy())
    ti.sync()
    for k, h in zip((500, 1000, 1500, 2000), history):
        np.testing.assert_array_equal(h, np.full(n, k))


def test_batched_launches_without_sync_are_ordered():
    x = ti.field(ti.f32, shape=1000)

    @ti.kernel
    def inc(k: ti.f32):
        for i in x:
            x[i] = x[i] * 0.5 + k

    expect = np.zeros(1000)
    for k in range(3000):
        inc(float(k % 7))
        expect = expect * 0.5 + (k % 7)
    np.testing.assert_allclose(x.to_numpy(), expect, rtol=1e-6)


def test_host_write_between_launches():
    x, y, acc = accumulate(8)
    for k in range(50):
        x[k % 8] = k  # host write while launches are pending
        acc()
    expect = np.zeros(8)
    xs = np.zeros(8)
    for k in range(50):
        xs[k % 8] = k
        expect += xs
    np.testing.assert_array_equal(y.to_numpy(), expect)


def _atomic_kernel():
    x = ti.field(ti.f32, shape=())
    y = ti.field(ti.f32, shape=64)

    @ti.kernel
    def k():
        for i in range(64):
            y[i % 4] += 1.0   # varying index: stays a real atomic add

    return k, y


@pytest.mark.parametrize('disabled', [False, True])
def test_float_atomic_capability_only_when_enabled(disabled):
    if disabled:
        ti.init(disable_features=['float32_atomic_add', 'float32_atomic_minmax'])
    feats = ti.device_features()
    k, y = _atomic_kernel()
    k()
    np.testing.assert_array_equal(y.to_numpy()[:4], [16, 16, 16, 16])
    spv = k.spirv()
    if feats['float32_atomic_add']:
        assert 'OpAtomicFAddEXT' in spv and 'AtomicFloat32AddEXT' in spv
    else:
        assert 'OpAtomicFAddEXT' not in spv and 'AtomicFloat32AddEXT' not in spv
        assert 'OpAtomicCompareExchange' in spv


@pytest.mark.parametrize('disabled', [False, True])
def test_float64_only_when_enabled(disabled):
    if disabled:
        ti.init(disable_features=['float64'])
    feats = ti.device_features()
    if feats['float64']:
        x = ti.field(ti.f64, shape=4)

        @ti.kernel
        def k():
            for i in x:
                x[i] = i * 0.5

        k()
        assert 'Float64' in k.spirv()
        np.testing.assert_array_equal(x.to_numpy(), [0, 0.5, 1, 1.5])
    else:
        with pytest.raises(ti.VkdiffError):
            x = ti.field(ti.f64, shape=4)
            x[0] = 1.0


def test_no_optional_capability_in_plain_kernels():
    x = ti.field(ti.f32, shape=4)

    @ti.kernel
    def k():
        for i in x:
            x[i] = ti.sin(i * 1.0)

    k()
    spv = k.spirv()
    for cap in ('Float64', 'Int64', 'AtomicFloat32AddEXT', 'GroupNonUniform'):
        assert f'OpCapability {cap}\n' not in spv


_NO_BARRIERS = r'''
import vkdiff as ti
from vkdiff.runtime import program, validation
program.Runtime._hazard = lambda self, reads, writes: None   # drop every barrier
from shared_programs import dependent_chain
ti.init()
a, b, step_a, step_b = dependent_chain(256)
for k in range(20):
    step_a(); step_b()
ti.sync()
print('MESSAGES', len([m for m in validation.read_new_messages() if 'SYNC-HAZARD' in m]))
'''


def test_validation_layer_catches_missing_barriers(tmp_path):
    """The check can fail: with vkdiff's barriers removed, the layer reports hazards."""
    import os
    import subprocess
    import sys
    script = tmp_path / 'no_barriers.py'
    script.write_text(_NO_BARRIERS)
    path = os.pathsep.join(p for p in (os.path.dirname(os.path.dirname(__file__)),
                                         os.environ.get('PYTHONPATH'))
                           if p)  # (shared_programs)
    env = dict(os.environ, VKDIFF_VALIDATION='1', PYTHONPATH=path)
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    count = int(out.stdout.split('MESSAGES')[1])
    assert count > 0


@pytest.mark.parametrize('disabled', [False, True])
def test_subgroup_reduction_only_when_enabled(disabled):
    if disabled:
        ti.init(disable_features=['subgroup_arithmetic'])
    feats = ti.device_features()
    n = 100_000
    x = ti.field(ti.f32, shape=n)
    total = ti.field(ti.f32, shape=())

    @ti.kernel
    def k():
        for i in x:
            total[None] += x[i]

    x.from_numpy((np.arange(n) % 7).astype(np.float32))
    k()
    assert total[None] == float((np.arange(n) % 7).sum())  # exact: summed in f64, in order
    spv = k.spirv()
    if feats['subgroup_arithmetic']:
        assert 'OpCapability GroupNonUniformArithmetic' in spv and 'OpGroupNonUniformFAdd' in spv
    else:
        assert 'GroupNonUniform' not in spv
        assert 'OpControlBarrier' in spv  # the shared-memory tree


@pytest.mark.parametrize('disabled', [False, True])
def test_int64_only_when_enabled(disabled):
    if disabled:
        ti.init(disable_features=['int64'])
    feats = ti.device_features()
    if not feats['int64']:
        with pytest.raises(ti.VkdiffError, match='64-bit integer'):
            x = ti.field(ti.i64, shape=4)
            x[0] = 1
        return
    x = ti.field(ti.i64, shape=4)

    @ti.kernel
    def k():
        for i in x:
            x[i] = ti.cast(i, ti.i64) * 3_000_000_000

    k()
    np.testing.assert_array_equal(x.to_numpy(), np.arange(4, dtype=np.int64) * 3_000_000_000)
    assert 'OpCapability Int64\n' in k.spirv()
