"""`x op= v` / ti.atomic_op(x, v) on locals converts v to x's type first, then computes in x's
type (Taichi 1.7.4: AtomicOpExpression's value is cast to the destination type), for scalar
locals, local vector entries (static and run-time index), struct members, local arrays and
kernel-scope locals shared with a parallel loop. Expected values are Taichi 1.7.4 CPU's."""
import numpy as np

import vkdiff as ti


def test_int_locals_convert_the_float_operand_first():
    S = ti.types.struct(a=ti.i32, b=ti.f32)

    @ti.kernel
    def k(nd: ti.types.ndarray(dtype=ti.i32, ndim=1)) -> ti.types.vector(8, ti.i32):
        a = 2
        a += -1.75          # a += i32(-1.75) = -1
        b = 2
        o = ti.atomic_add(b, -1.75)
        c = ti.Vector([-4, -4])
        c[0] += 1.75
        c += 0.5            # += 0
        p = S(a=2, b=0.0)
        p.a += -1.75
        nd[0] += -1.75
        d = 5
        d -= 1.75           # -= i32(1.75) = 1
        return ti.Vector([a, b, o, c[0], c[1], p.a, nd[0], d])

    arr = np.array([2], dtype=np.int32)
    assert [int(v) for v in k(arr)] == [1, 1, 2, -3, -4, 1, 1, 4]


def test_run_time_index_and_parallel_loop_locals():
    m = 8
    out = ti.field(ti.i32, shape=(m, 6))

    @ti.kernel
    def k():
        for i in range(m):
            a = i - 4
            a += -1.75
            b = i - 4
            b -= 1.75
            c = ti.Vector([i - 4, i - 4])
            c[i % 2] += 1.75
            c += 0.5
            d = i - 4
            o = ti.atomic_add(d, -1.75)
            out[i, 0] = a
            out[i, 1] = b
            out[i, 2] = c[0]
            out[i, 3] = c[1]
            out[i, 4] = d
            out[i, 5] = o

    @ti.kernel
    def shared() -> ti.i32:
        s = -100
        for i in range(10):  # s is shared by the parallel loop: its += is atomic
            s += 1.5
        return s

    k()
    i = np.arange(m) - 4
    c0 = i + np.where(np.arange(m) % 2 == 0, 1, 0)
    c1 = i + np.where(np.arange(m) % 2 == 1, 1, 0)
    want = np.stack([i - 1, i - 1, c0, c1, i - 1, i], axis=1)
    np.testing.assert_array_equal(out.to_numpy(), want)
    assert shared() == -90


def test_local_array_entries_convert_first():
    @ti.kernel
    def k(i: ti.i32) -> ti.i32:
        a = ti.Vector([2] * 70)  # over 64 entries: one function-local array
        a[i] += -1.75
        a[3] += -1.75
        ti.atomic_sub(a[4], 1.75)
        return a[i] * 100 + a[3] * 10 + a[4]

    assert k(5) == 111


def test_f32_local_adds_an_f64_operand_in_f32():
    x = ti.field(ti.f64, shape=1000)
    out = ti.field(ti.f32, shape=())

    @ti.kernel
    def k() -> ti.f32:
        for _ in range(1):
            s = 0.0
            for j in range(1000):
                s += x[j]  # s += f32(x[j]), in f32
            out[None] = s
        return out[None]

    @ti.kernel
    def k2() -> ti.f32:
        a = 1.0
        a += ti.f64(2.0 ** -24 + 2.0 ** -50)  # f32(operand) = 2**-24: a tie, 1.0 stays
        return (a - 1.0) * 2.0 ** 24

    xs = np.full(1000, 0.1) + np.arange(1000) * 1e-9
    x.from_numpy(xs)
    want = np.float32(0)
    for v in xs.astype(np.float32):
        want = np.float32(want + v)
    assert k() == float(want)
    assert k2() == 0.0
