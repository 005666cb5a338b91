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



def _run_counter(n, shape, index_func, index_py):
    """`v = x[idx]; x[idx] += 1` for every i in range(n), idx = index_func(i): every increment
    counts, however many iterations share an element."""
    x = ti.field(ti.i32, shape)
    s = ti.field(ti.i32, ())

    @ti.kernel
    def k():
        for i in range(n):
            idx = index_func(i)
            v = x[idx]
            x[idx] += 1
            s[None] += v * 0

    k()
    expect = np.zeros(shape, np.int64)
    for i in range(n):
        expect[index_py(i)] += 1
    np.testing.assert_array_equal(x.to_numpy(), expect)


@ti.func
def _scaled_mod(i):
    return ti.Vector([(2 * i) % 4, i // 4])


@ti.func
def _digit_scaled_mod(i):
    return ti.Vector([((i % 4) * 2) % 4, i // 4])


@ti.func
def _scaled_floordiv(i):
    return ti.Vector([i % 4, ((i * 2) // 4) % 2, i // 8])


@ti.func
def _unsigned_shift_mod(i):
    return ti.Vector([ti.cast(ti.cast(i - 5, ti.u32) % ti.u32(3), ti.i32), i // 3])


@ti.func
def _plain_digits(i):
    return ti.Vector([i % 4, i // 4])


def test_scaled_digits_that_share_elements_stay_atomic():
    """review2 defect 1: (k*i) % C with k and C not coprime, a scale before a floordiv, and a
    shifted digit cast to unsigned before a modulus looked loop-unique (with i // C) and the
    atomic became a store: 128 of 256 increments, Taichi 1.7.4 256."""
    _run_counter(256, (4, 64), _scaled_mod, lambda i: ((2 * i) % 4, i // 4))
    _run_counter(256, (4, 64), _digit_scaled_mod, lambda i: (((i % 4) * 2) % 4, i // 4))
    _run_counter(256, (4, 2, 32), _scaled_floordiv, lambda i: (i % 4, ((i * 2) // 4) % 2, i // 8))
    _run_counter(96, (3, 400), _unsigned_shift_mod, lambda i: (((i - 5) % 2**32) % 3, i // 3))


def test_guarded_counter_with_a_shared_bucket():
    """review2's lu4: `if cnt[b, r] < 100: cnt[b, r] += 1` with b = (i*4) % 8: four
    iterations share each (b, r) (Taichi 1.7.4: 256 counted, 4 per element)."""
    cnt = ti.field(ti.i32, (8, 32))

    @ti.kernel
    def k():
        for i in range(256):
            b = (i * 4) % 8
            r = i // 8
            if cnt[b, r] < 100:
                cnt[b, r] += 1

    k()
    c = cnt.to_numpy()
    assert c.sum() == 256
    assert c[0, :4].tolist() == [4, 4, 4, 4] and c[4, :4].tolist() == [4, 4, 4, 4]


def test_digits_of_the_loop_number_still_demote():
    """x[i % 4, i // 4] is loop-unique: the load-then-add stays correct (each element once)."""
    _run_counter(256, (4, 64), _plain_digits, lambda i: (i % 4, i // 4))
