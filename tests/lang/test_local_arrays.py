"""Local vectors/matrices of more than 64 entries are one function-local array (run-time indices
are one access; shared between a kernel's serial code and its parallel loops, one temporary):
Taichi's test_ret_4k shape of program, checked against numpy."""
import numpy as np
import pytest

import vkdiff as ti


def test_1024_entry_vector_written_in_a_parallel_loop_and_returned():
    vec = ti.types.vector(1024, ti.i32)

    @ti.kernel
    def f(k: ti.i32) -> vec:
        ret = vec(0)
        for i in range(1024):
            ret[i] = i * k
        return ret

    np.testing.assert_array_equal(f(3).to_numpy(), np.arange(1024) * 3)


def test_histogram_in_a_local_vector_is_atomic_across_the_parallel_loop():
    x = ti.field(ti.i32, shape=5000)
    vals = np.random.default_rng(0).integers(0, 100, 5000).astype(np.int32)
    x.from_numpy(vals)

    @ti.kernel
    def hist() -> ti.types.vector(100, ti.i32):
        h = ti.Vector.zero(ti.i32, 100)
        for i in x:
            h[x[i]] += 1
        return h

    np.testing.assert_array_equal(hist().to_numpy(), np.bincount(vals, minlength=100))


def test_per_iteration_array_with_run_time_indices():
    n, m = 64, 80
    out = ti.field(ti.f32, shape=(n, m))

    @ti.kernel
    def prefix():
        for r in range(n):
            a = ti.Vector.zero(ti.f32, m)
            for j in range(m):
                a[(j * 7) % m] = r + j  # a permutation of the entries
            for j in range(1, m):
                a[j] += a[j - 1]
            for j in range(m):
                out[r, j] = a[j]

    prefix()
    j = np.arange(m)
    perm = np.empty(m)
    perm[(j * 7) % m] = j
    want = np.cumsum(np.arange(n)[:, None] + perm[None, :], axis=1)
    np.testing.assert_allclose(out.to_numpy(), want)


def test_matrix_of_100_entries_with_two_run_time_indices():
    @ti.kernel
    def f(i: ti.i32, j: ti.i32) -> ti.f32:
        M = ti.Matrix.zero(ti.f32, 10, 10)
        for a, b in ti.ndrange(10, 10):
            M[a, b] = a * 10 + b
        M[i, j] += 0.5
        return M[i, j] + M[j, i] * 1000

    assert f(2, 7) == pytest.approx(27.5 + 72 * 1000)


def test_differentiating_a_big_float_local_vector_is_a_clear_error():
    x = ti.field(ti.f32, shape=4, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def f():
        a = ti.Vector.zero(ti.f32, 100)
        for i in range(4):
            a[i] = x[i]
        loss[None] = a[0] + a[3]

    with pytest.raises(ti.AutodiffError, match='more than 64'):
        with ti.ad.Tape(loss):
            f()
