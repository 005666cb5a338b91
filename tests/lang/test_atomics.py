"""Atomics: augmented assignment to fields, ti.atomic_* return values, contention, and the float
compare-exchange fallback when the device's float atomics are disabled."""
import numpy as np
import pytest

import vkdiff as ti

NO_FLOAT_ATOMICS = ['float32_atomic_add', 'float32_atomic_minmax']


@pytest.fixture(params=['native', 'cas'])
def float_atomics(request):
    """Run a test with the device's float atomics, then with the compare-exchange fallback."""
    if request.param == 'cas':
        ti.init(disable_features=NO_FLOAT_ATOMICS)
    elif not ti.device_features().get('float32_atomic_add'):
        pytest.skip('this device has no native float32 atomic add')
    return request.param


def test_augmented_assign_is_atomic():
    n = 1 << 16
    hist = ti.field(ti.i32, shape=16)
    total = ti.field(ti.i32, shape=())
    neg = ti.field(ti.i32, shape=())

    @ti.kernel
    def k():
        for i in range(n):
            hist[i % 16] += 1
            total[None] += i % 7
            neg[None] -= 2

    k()
    np.testing.assert_array_equal(hist.to_numpy(), np.full(16, n // 16))
    assert total[None] == int((np.arange(n) % 7).sum())
    assert neg[None] == -2 * n


def test_atomic_functions_return_old_value():
    n = 256
    counter = ti.field(ti.i32, shape=())
    slots = ti.field(ti.i32, shape=n)
    mn = ti.field(ti.i32, shape=())
    mx = ti.field(ti.i32, shape=())
    bits_and = ti.field(ti.i32, shape=())
    bits_or = ti.field(ti.i32, shape=())
    bits_xor = ti.field(ti.i32, shape=())
    sub = ti.field(ti.i32, shape=())

    @ti.kernel
    def k():
        mn[None] = 1000
        mx[None] = -1000
        bits_and[None] = -1
        for i in range(n):
            old = ti.atomic_add(counter[None], 1)
            slots[old] = 1  # every old value is distinct: a permutation of 0..n-1
            ti.atomic_min(mn[None], i - 50)
            ti.atomic_max(mx[None], i * 2)
            ti.atomic_and(bits_and[None], ~(1 << (i % 31)))
            ti.atomic_or(bits_or[None], 1 << (i % 8))
            ti.atomic_xor(bits_xor[None], i)
            ti.atomic_sub(sub[None], 3)

    k()
    assert counter[None] == n
    np.testing.assert_array_equal(slots.to_numpy(), np.ones(n))
    assert mn[None] == -50 and mx[None] == 2 * (n - 1)
    assert bits_and[None] == -2 ** 31  # every bit below 31 cleared
    assert bits_or[None] == 0xff
    x = 0
    for i in range(n):
        x ^= i
    assert bits_xor[None] == x
    assert sub[None] == -3 * n


def test_atomic_old_values_serial():
    out = ti.field(ti.i32, shape=8)
    a = ti.field(ti.i32, shape=())
    f = ti.field(ti.f32, shape=())

    @ti.kernel
    def k():
        a[None] = 5
        out[0] = ti.atomic_add(a[None], 3)
        out[1] = ti.atomic_sub(a[None], 1)
        out[2] = ti.atomic_max(a[None], 100)
        out[3] = ti.atomic_min(a[None], -4)
        out[4] = ti.atomic_or(a[None], 3)
        out[5] = ti.atomic_and(a[None], 6)
        out[6] = ti.atomic_xor(a[None], 5)
        out[7] = a[None]
        f[None] = 1.5
        o = ti.atomic_add(f[None], 2.0)
        f[None] += o

    k()
    np.testing.assert_array_equal(out.to_numpy(), [5, 8, 7, 100, -4, -1, 6, 3])
    assert f[None] == 5.0


def test_atomic_on_vector_field_component():
    v = ti.Vector.field(2, ti.i32, shape=4)

    @ti.kernel
    def k():
        for i in range(400):
            v[i % 4] += ti.Vector([1, 2])
            ti.atomic_add(v[i % 2][1], 1)

    k()
    np.testing.assert_array_equal(v.to_numpy(), [[100, 400], [100, 400], [100, 200], [100, 200]])


def test_i64_and_u32_atomics():
    a = ti.field(ti.i64, shape=())
    u = ti.field(ti.u32, shape=())

    @ti.kernel
    def k():
        for i in range(1000):
            a[None] += ti.cast(1 << 20, ti.i64) * 4096
            u[None] += ti.cast(4000000, ti.u32)

    k()
    assert a[None] == 1000 * (1 << 32)
    assert u[None] == (1000 * 4000000) % (1 << 32)


def test_float_atomic_add_contention(float_atomics):
    n = 1 << 20
    s = ti.field(ti.f32, shape=())

    @ti.kernel
    def k():
        for i in range(n):
            s[None] += 1.0

    k()
    assert s[None] == float(n)
    asm = k.spirv()
    if float_atomics == 'native':
        assert 'OpAtomicFAddEXT' in asm and 'OpAtomicCompareExchange' not in asm
    else:
        assert 'OpAtomicCompareExchange' in asm and 'OpAtomicFAddEXT' not in asm


def test_float_atomics_all_ops(float_atomics):
    n = 4096
    x = ti.field(ti.f32, shape=n)
    x.from_numpy(np.sin(np.arange(n)).astype(np.float32) * 100)
    acc = ti.field(ti.f32, shape=4)
    sub = ti.field(ti.f32, shape=())
    mn = ti.field(ti.f32, shape=())
    mx = ti.field(ti.f32, shape=())
    olds = ti.field(ti.f32, shape=n)

    @ti.kernel
    def k():
        mn[None] = 1e9
        mx[None] = -1e9
        for i in x:
            acc[i % 4] += 0.25
            sub[None] -= 0.5
            ti.atomic_min(mn[None], x[i])
            ti.atomic_max(mx[None], x[i])
            olds[i] = ti.atomic_add(acc[i % 4], 0.0)

    k()
    a = np.sin(np.arange(n)).astype(np.float32) * 100
    np.testing.assert_array_equal(acc.to_numpy(), np.full(4, n / 4 * 0.25))
    assert sub[None] == -0.5 * n
    assert mn[None] == a.min() and mx[None] == a.max()
    o = olds.to_numpy()
    assert o.min() >= 0 and o.max() <= n / 4 * 0.25  # every old value is a partial sum
    asm = k.spirv()
    if float_atomics == 'native':
        assert 'OpAtomicFMinEXT' in asm and 'OpAtomicFMaxEXT' in asm
    else:
        assert 'OpAtomicFMinEXT' not in asm and 'OpAtomicFAddEXT' not in asm
        assert 'OpAtomicCompareExchange' in asm


def test_float_atomic_vector_field(float_atomics):
    g = ti.Vector.field(2, ti.f32, shape=8)

    @ti.kernel
    def k():
        for i in range(8000):
            g[i % 8] += ti.Vector([1.0, -0.5])

    k()
    np.testing.assert_array_equal(g.to_numpy(), np.tile([1000.0, -500.0], (8, 1)))


def test_f64_atomic_add():
    if not ti.device_features().get('float64'):
        pytest.skip('no f64')
    s = ti.field(ti.f64, shape=())

    @ti.kernel
    def k():
        for i in range(10000):
            s[None] += 0.1

    k()
    # 0.1 is an f32 constant (default_fp), as in Taichi 1.7.4: it prints 1000.0000149011612
    assert s[None] == pytest.approx(10000 * float(np.float32(0.1)), rel=1e-12)


def test_local_reduction_in_parallel_loop():
    x = ti.field(ti.f32, shape=1000)
    x.from_numpy(np.arange(1000, dtype=np.float32))
    out = ti.field(ti.f32, shape=())
    cnt = ti.field(ti.i32, shape=())

    @ti.kernel
    def k():
        s = 0.0
        c = 0
        for i in x:
            s += x[i]
            if x[i] > 500:
                c += 1
        out[None] = s
        cnt[None] = c

    k()
    assert out[None] == 499500.0
    assert cnt[None] == 499


def test_atomic_functions_on_shared_locals():
    """ti.atomic_* on a kernel-level local used in a parallel loop is atomic, and returns the
    old value; on a thread's own local it is a plain update."""
    n = 4096
    x = ti.field(ti.f32, shape=n)
    x.from_numpy(np.arange(n, dtype=np.float32))
    slots = ti.field(ti.i32, shape=n)
    out = ti.field(ti.f32, shape=3)
    own = ti.field(ti.i32, shape=(4, 3))

    @ti.kernel
    def k():
        s = 0.0
        m = -1.0
        c = 0
        for i in x:
            ti.atomic_add(s, x[i])
            ti.atomic_max(m, x[i])
            slot = ti.atomic_add(c, 1)
            slots[slot] += 1
        out[0] = s
        out[1] = m
        out[2] = c
        for i in range(4):
            d = 0
            for j in range(3):
                own[i, j] = ti.atomic_add(d, 2)

    k()
    np.testing.assert_array_equal(out.to_numpy(), [n * (n - 1) / 2, n - 1, n])
    np.testing.assert_array_equal(slots.to_numpy(), np.ones(n))
    np.testing.assert_array_equal(own.to_numpy(), [[0, 2, 4]] * 4)



def test_atomic_on_a_value_is_taichis_syntax_error():
    """The first operand of an atomic must be writable (a local, a field or ndarray element):
    Taichi's TaichiSyntaxError 'cannot use a non-writable target as the first operand of ...'."""
    @ti.kernel
    def on_list():
        y = ti.Vector([1, 2, 3])
        ti.atomic_min([3, 2, 1], y)

    @ti.kernel
    def on_expression():
        y = 1
        ti.atomic_add(y + 1, 2)

    @ti.kernel
    def on_constant():
        ti.atomic_max(5, 2)

    for k, name in ((on_list, 'atomic_min'), (on_expression, 'atomic_add'),
                    (on_constant, 'atomic_max')):
        with pytest.raises(ti.TaichiSyntaxError, match="non-writable target as the first "
                                                       f"operand of '{name}'"):
            k()


def test_augmented_assign_to_runtime_component_is_atomic():
    """`v[i][d] += x` with a run-time component index d is an atomic add, as in Taichi (was a
    load-add-store, losing updates under contention: Taichi's implicit_fem example computed a
    wrong stiffness product, ret[verts[u]][d] += ...). Matrix fields too, and `-=`."""
    n = 4096
    v = ti.Vector.field(3, ti.f32, shape=2)
    m = ti.Matrix.field(2, 2, ti.i32, shape=())
    w = ti.Vector.field(3, ti.i32, shape=())

    @ti.kernel
    def k():
        for i in range(n):
            for d in range(3):
                v[i % 2][d] += d + 1.0
                w[None][d] -= 1
            for a in range(2):
                for b in range(2):
                    m[None][a, b] += a * 2 + b + 1

    k()
    np.testing.assert_array_equal(v.to_numpy(), [[n // 2, n, 3 * n // 2]] * 2)
    np.testing.assert_array_equal(w.to_numpy(), [-n] * 3)
    np.testing.assert_array_equal(m.to_numpy(), [[n, 2 * n], [3 * n, 4 * n]])


def test_atomic_add_on_runtime_component_returns_distinct_old_values():
    """`ti.atomic_add(c[None][d], 1)` with a run-time d returns the value the atomic replaced
    (slot allocation: every old value distinct), not a load made before it."""
    n = 512
    c = ti.Vector.field(2, ti.i32, shape=())
    slots = ti.field(ti.i32, shape=(2, n))

    @ti.kernel
    def k():
        for i in range(2 * n):
            d = i % 2
            old = ti.atomic_add(c[None][d], 1)
            slots[d, old] += 1

    k()
    np.testing.assert_array_equal(c.to_numpy(), [n, n])
    np.testing.assert_array_equal(slots.to_numpy(), np.ones((2, n)))


def test_local_vector_reduction_with_runtime_index_in_parallel_loop():
    """`acc[d] += x` on a kernel-scope local vector, d a run-time index, inside the parallel
    loop: atomic like `acc[0] += x` (was a load-add-store: 1890 of 20000; Taichi gives 20000)."""
    @ti.kernel
    def k() -> ti.f32:
        acc = ti.Vector([0.0, 0.0])
        for i in range(10000):
            for d in range(2):
                acc[d] += 1.0
        return acc[0] + acc[1]

    out = ti.Vector.field(3, ti.i32, shape=())

    @ti.kernel
    def hist():
        acc = ti.Vector([0, 0, 0])
        for i in range(9999):
            acc[i % 3] -= 1
        out[None] = acc

    assert k() == 20000.0
    hist()
    np.testing.assert_array_equal(out.to_numpy(), [-3333] * 3)


def test_runtime_component_accumulation_is_differentiable():
    """`y[j][d] += x[i] * w` with a run-time d is an atomic add, so its adjoint is Taichi's (it
    was a load and a store: refused by global data access rule 1)."""
    x = ti.field(ti.f32, shape=8, needs_grad=True)
    y = ti.Vector.field(3, ti.f32, shape=2, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)
    x.from_numpy(np.arange(8, dtype=np.float32))

    @ti.kernel
    def f():
        for i in x:
            for d in range(3):
                y[i % 2][d] += x[i] * (d + 1)

    @ti.kernel
    def sq():
        for i in y:
            for d in ti.static(range(3)):
                loss[None] += y[i][d] ** 2

    with ti.ad.Tape(loss):
        f()
        sq()
    xs, w = np.arange(8.0), np.arange(1.0, 4.0)
    yv = np.stack([w * xs[0::2].sum(), w * xs[1::2].sum()])
    np.testing.assert_allclose(y.to_numpy(), yv)
    want = [2 * (yv[i % 2] * w).sum() for i in range(8)]  # d loss / d x[i]
    np.testing.assert_allclose(x.grad.to_numpy(), want, rtol=1e-6)
