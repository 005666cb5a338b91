"""Atomics done by a compare-exchange loop (codegen/narrow.cas_loop: integer atomic_mul, f32 adds
without float atomics, 8/16-bit fields) return the value each one replaced, under contention too:
every old value is distinct. SwiftShader returned 0 to every lane of a subgroup but the last when
the loop was left by a branch after the exchange (the stored results were right)."""
import numpy as np
import pytest

import vkdiff as ti


@pytest.fixture(params=['native', 'cas'])
def float_atomics(request):
    if request.param == 'cas':
        ti.init(disable_features=['float32_atomic_add', 'float32_atomic_minmax'])
    return request.param


def test_contended_loop_atomics_return_distinct_old_values(float_atomics):
    n = 1024
    c, f = ti.field(ti.i32, shape=()), ti.field(ti.f32, shape=())
    h = ti.field(ti.i16, shape=())
    old_c = ti.field(ti.i32, shape=16)
    old_f, old_h = ti.field(ti.f32, shape=n), ti.field(ti.i32, shape=n)

    @ti.kernel
    def k():
        c[None] = 1
        for i in range(16):
            old_c[i] = ti.atomic_mul(c[None], 2)
        for i in range(n):
            old_f[i] = ti.atomic_add(f[None], 1.0)
            old_h[i] = ti.atomic_add(h[None], 1)

    k()
    assert c[None] == 2 ** 16 and f[None] == n and h[None] == n
    assert sorted(old_c.to_numpy()) == [2 ** i for i in range(16)]
    np.testing.assert_array_equal(np.sort(old_f.to_numpy()), np.arange(n))
    np.testing.assert_array_equal(np.sort(old_h.to_numpy()), np.arange(n))
