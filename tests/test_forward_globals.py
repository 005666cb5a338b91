"""passes/forward_globals.py: global loads an invocation already has are reused and atomics whose
old value it has become stores -- the results stay those of the program as written (numpy),
including where forwarding must not happen (another index that may be the same element, writes
in branches and loops, atomics on shared elements)."""
import numpy as np

import vkdiff as ti


def _gloads(kernel, buf_name, *args):
    text = kernel.ir(*args, after='loop_limit')
    return sum(1 for line in text.splitlines() if 'gload' in line and f'buf={buf_name} ' in line)


def test_reloads_after_a_store_take_the_stored_value():
    x = ti.field(ti.f32, 64)
    y = ti.field(ti.f32, 64)

    @ti.kernel
    def k():
        for i in x:
            x[i] = x[i] * 2 + 1
            y[i] = x[i] + x[i] * x[i]

    a = np.arange(64, dtype=np.float32)
    x.from_numpy(a)
    k()
    b = a * 2 + 1
    np.testing.assert_array_equal(x.to_numpy(), b)
    np.testing.assert_array_equal(y.to_numpy(), b + b * b)
    assert _gloads(k, 'x') == 1


def test_a_store_at_another_index_forgets_the_value():
    """Serial code: x[j] with j == 0 at run time is the element x[0] the kernel read."""
    x = ti.field(ti.i32, 4)
    out = ti.field(ti.i32, 3)

    @ti.kernel
    def k(j: ti.i32):
        a = x[0]
        x[j] = 7
        out[0] = a
        out[1] = x[0]
        x[0] += 5          # an atomic in serial code, its old value known: a store
        out[2] = x[0]

    x.from_numpy(np.array([3, 1, 1, 1], np.int32))
    k(0)
    np.testing.assert_array_equal(out.to_numpy(), [3, 7, 12])
    np.testing.assert_array_equal(x.to_numpy(), [12, 1, 1, 1])


def test_writes_in_branches_and_loops_are_seen_after_them():
    x = ti.field(ti.f32, 32)
    y = ti.field(ti.f32, (32, 3))

    @ti.kernel
    def k():
        for i in x:
            v = x[i]
            if v > 10:
                x[i] = v - 10
            y[i, 0] = x[i]
            for _ in range(3):
                x[i] += 1.0
            y[i, 1] = x[i]
            if i % 2 == 0:
                x[i] = 0.5
            else:
                x[i] = 1.5
            y[i, 2] = x[i] + v

    a = np.arange(32, dtype=np.float32)
    x.from_numpy(a)
    k()
    first = np.where(a > 10, a - 10, a)
    want = np.stack([first, first + 3, np.where(np.arange(32) % 2 == 0, 0.5, 1.5) + a], 1)
    np.testing.assert_array_equal(y.to_numpy(), want)


def test_atomics_on_shared_elements_stay_atomic():
    """Every iteration adds into the same few elements: the atomics are not demoted even where
    the invocation read the element before (its value may have changed under it)."""
    x = ti.field(ti.i32, 4096)
    acc = ti.field(ti.i32, 4)
    olds = ti.field(ti.i32, 4096)

    @ti.kernel
    def k():
        for i in x:
            seen = acc[i % 4]
            olds[i] = ti.atomic_add(acc[i % 4], x[i]) - seen * 0

    x.from_numpy(np.ones(4096, np.int32))
    k()
    np.testing.assert_array_equal(acc.to_numpy(), [1024] * 4)
    # the old values of one element are all different: 0..1023 in some order
    o = olds.to_numpy()
    for r in range(4):
        np.testing.assert_array_equal(np.sort(o[r::4]), np.arange(1024))


def test_an_owned_atomic_with_a_known_value_returns_the_old_value():
    x = ti.field(ti.f32, (8, 16))
    old = ti.field(ti.f32, (8, 16))

    @ti.kernel
    def k():
        for i, j in x:
            v = x[i, j]
            old[i, j] = ti.atomic_add(x[i, j], v + 1.0)
            x[i, j] -= 0.25

    a = np.arange(128, dtype=np.float32).reshape(8, 16)
    x.from_numpy(a)
    k()
    np.testing.assert_array_equal(old.to_numpy(), a)
    np.testing.assert_array_equal(x.to_numpy(), a + a + 1.0 - 0.25)
    assert 'atomic' not in k.ir(after='loop_limit')
