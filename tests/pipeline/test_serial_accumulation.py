"""Accumulations that Taichi runs in order keep their sequential f32 rounding: the reduction pass
(passes/reduction.py) must not sum them privately (in f64, or from zero) and add the total once.
`for _ in range(1)` (one parallel iteration: everything inside runs in order), and `row[i] +=`
in a serial inner loop where only iteration i touches row[i]. Expected: the sequential f32 sums
numpy computes (Taichi 1.7.4 Vulkan's results; its CPU backend gives the same for the first)."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.launch import compiled


def _seq_f32(values, start=0.0):
    s = np.float32(start)
    for v in np.asarray(values, np.float32):
        s = np.float32(s + v)
    return float(s)


def test_serial_idiom_accumulates_in_order_in_f32():
    x = ti.field(ti.f32, shape=1001)
    t = ti.field(ti.f32, shape=3)

    @ti.kernel
    def k():
        for _ in range(1):
            for i in range(1001):
                t[0] += x[i]
                t[2] -= x[i]

    @ti.kernel
    def k_serialize():
        ti.loop_config(serialize=True)
        for i in range(1001):
            t[1] += x[i]

    a = np.ones(1001, np.float32)
    a[0] = 1.0e8
    x.from_numpy(a)
    k()
    k_serialize()
    want = _seq_f32(a)
    assert want == 1.0e8  # 1e8 + 1 == 1e8 in f32
    assert t.to_numpy().tolist() == [want, want, -want]


def test_kernel_scope_local_in_serial_idiom_accumulates_in_f32():
    x = ti.field(ti.f64, shape=1000)

    @ti.kernel
    def k() -> ti.f32:
        s = 0.0
        for _ in range(1):
            for j in range(1000):
                s += x[j]  # s += f32(x[j]), in order
        return s

    xs = np.full(1000, 0.1) + np.arange(1000) * 1e-9
    x.from_numpy(xs)
    assert k() == _seq_f32(xs)


@pytest.mark.parametrize('geometry', ['cpu', 'gpu'])
def test_rows_owned_by_one_iteration_sum_in_order(geometry, monkeypatch):
    """Summed per run in order from the element's value (one store per run), under both launch
    geometries (test_reductions.py); `shared[i]` has two adds per iteration: left atomic."""
    if geometry == 'gpu':
        monkeypatch.setattr(compiled, '_is_cpu_driver', lambda rt: False)
    ti.init()
    m, n = 8, 1000
    a = ti.field(ti.f32, shape=(m, n))
    row = ti.field(ti.f32, shape=m)
    cell = ti.field(ti.f32, shape=(m, 4))
    shared = ti.field(ti.f32, shape=m)

    @ti.kernel
    def k():
        for i in range(m):
            for j in range(n):
                row[i] += a[i, j]
                shared[i] += a[i, j]
                shared[i] -= 0.5

    @ti.kernel
    def k2():
        for i, c in cell:  # (i, c) together name the element: one iteration owns it
            for j in range(n):
                cell[i, c] += a[i, j] * (c + 1)

    vals = np.ones((m, n), np.float32)
    vals[:, 0] = np.arange(m)  # row i: i + 1e8 + 1 + 1 + ...
    a.from_numpy(vals)
    row.from_numpy(np.full(m, 1.0e8, np.float32))
    shared.from_numpy(np.full(m, 1.0e8, np.float32))
    cell.from_numpy(np.full((m, 4), 1.0e8, np.float32))
    k()
    k2()
    np.testing.assert_array_equal(row.to_numpy(), [_seq_f32(vals[i], 1.0e8) for i in range(m)])
    inter = np.stack([vals, np.full_like(vals, -0.5)], axis=2).reshape(m, 2 * n)
    np.testing.assert_array_equal(shared.to_numpy(), [_seq_f32(inter[i], 1.0e8) for i in range(m)])
    want = [[_seq_f32(vals[i] * (c + 1), 1.0e8) for c in range(4)] for i in range(m)]
    np.testing.assert_array_equal(cell.to_numpy(), np.array(want, np.float32))


def test_contended_parallel_sums_stay_precise():
    """Many iterations adding into one element: the order is unspecified, vkdiff sums precisely
    (per thread in f64, then in order: README), here the exact 1e5."""
    t = ti.field(ti.f32, shape=())

    @ti.kernel
    def k():
        for i in range(1000000):
            t[None] += 0.1

    k()
    assert t[None] == np.float32(np.float64(np.float32(0.1)) * 1e6)
