"""A contended f32 sum on a device without f64 (SwiftShader; lavapipe with float64 disabled):
the reduction pass (passes/reduction.py) sums per workgroup in f32, then adds the workgroup
partials in order. A plain f32 sum of the partials rounds at every step once the total passes
2**24; Neumaier's compensation makes it the correctly rounded sum. Here every partial is an exact
integer below 2**24, so the result is exactly f32(sum), as with f64 accumulators."""
import numpy as np
import pytest

import vkdiff as ti


@pytest.mark.parametrize('geometry', ['cpu', 'gpu'])
def test_contended_f32_sum_is_correctly_rounded_without_f64(geometry, monkeypatch):
    monkeypatch.setenv('VKDIFF_GEOMETRY', geometry)  # 64 or 1024 partials
    ti.init(disable_features=['float64'])
    n = 100_003
    v = ti.field(ti.i32, shape=n)
    total = ti.field(ti.f32, shape=())

    @ti.kernel
    def k():
        for i in v:
            total[None] += ti.cast(v[i], ti.f32)

    a = np.random.default_rng(1).integers(0, 1000, n).astype(np.int32)
    assert a.sum() > 2 ** 24 * 2  # f32 spacing 4 at the total: each plain add of a partial rounds
    v.from_numpy(a)
    k()
    assert total[None] == np.float32(a.sum())
