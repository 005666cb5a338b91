"""The pipelines (descriptor set + pipeline, one per set of bound arrays) a kernel with ndarray
parameters keeps: the same arrays launch with the same one; a freed array's pipeline is dropped
at once (it holds the array's device memory), and a new array that gets the freed one's id never
launches with a stale pipeline."""
import gc

import numpy as np

import vkdiff as ti


@ti.kernel
def _scale(x: ti.types.ndarray(), y: ti.types.ndarray(), c: ti.f32):
    for i in x:
        y[i] = x[i] * c


def _algos():
    inst = next(iter(_scale.instances.values()))
    return sum(len(ct.args.algos) for ct in inst.ctasks if ct.args is not None)


def test_same_arrays_reuse_one_pipeline_and_freed_arrays_drop_theirs():
    x = ti.ndarray(ti.f32, 8)
    y = ti.ndarray(ti.f32, 8)
    x.from_numpy(np.arange(8, dtype=np.float32))
    for c in range(5):
        _scale(x, y, float(c))
    np.testing.assert_array_equal(y.to_numpy(), 4 * np.arange(8))
    assert _algos() == 1
    z = ti.ndarray(ti.f32, 8)
    _scale(x, z, 2.0)
    assert _algos() == 2
    del z
    ti.sync()                     # (the launch recorded with it is done)
    gc.collect()
    assert _algos() == 1          # dropped with the array, not when 32 had piled up


def test_fresh_arrays_in_a_loop_get_their_own_data():
    x = ti.ndarray(ti.f32, 8)
    x.from_numpy(np.arange(8, dtype=np.float32))
    for k in range(40):               # freed ids are reused by the next arrays
        y = ti.ndarray(ti.f32, 8)
        _scale(x, y, float(k))
        np.testing.assert_array_equal(y.to_numpy(), k * np.arange(8))
        w = ti.ndarray(ti.f32, 8)     # a second one alive: ids differ
        _scale(y, w, 0.5)
        np.testing.assert_array_equal(w.to_numpy(), 0.5 * k * np.arange(8))
        del y, w
    assert _algos() <= 3
