"""Taichi public names vkdiff provides for compatibility (issue 11): each checked against values."""
import numpy as np
import pytest

import vkdiff as ti


def test_grad_placed_explicitly_next_to_its_field():
    x = ti.field(ti.f32)
    loss = ti.field(ti.f32)
    ti.root.dense(ti.i, 4).place(x, x.grad)
    ti.root.place(loss, loss.grad)

    @ti.kernel
    def f():
        for i in x:
            loss[None] += x[i] ** 2

    x.from_numpy(np.arange(4, dtype=np.float32))
    with ti.ad.Tape(loss):
        f()
    assert loss[None] == 14.0
    np.testing.assert_array_equal(x.grad.to_numpy(), 2 * np.arange(4))


def test_grad_placed_after_its_field_in_another_statement():
    """DiffTaichi's wave.py and smoke_taichi_cpu.py: `place(p)`, then `place(p.grad)` under a
    node of its own (Taichi creates a real field's gradient at declaration; placing it later is
    fine). Values as Taichi 1.7.4 CPU prints them: loss 27.0, p.grad = 3 p^2."""
    p, loss, q = ti.field(ti.f32), ti.field(ti.f32), ti.field(ti.f32)
    ti.root.dense(ti.i, 2).dense(ti.jk, 2).place(p)
    ti.root.dense(ti.i, 2).place(q)
    ti.root.dense(ti.i, 2).dense(ti.jk, 2).place(p.grad)
    ti.root.place(loss)
    ti.root.place(loss.grad)
    assert p.grad.shape == (2, 2, 2) and p.grad is p.grad

    @ti.kernel
    def f():
        for i, j, k in p:
            loss[None] += p[i, j, k] ** 3 + q[i]

    p.from_numpy(np.array([0, 1, 1, 0, 2, 0, 1, 2], np.float32).reshape(2, 2, 2))
    q.fill(1.0)
    with ti.ad.Tape(loss):
        f()
    assert loss[None] == 27.0
    np.testing.assert_array_equal(p.grad.to_numpy(), 3 * p.to_numpy() ** 2)
    # q.grad named after q was placed and never placed itself: q has no gradient (as in Taichi,
    # where it stays an incomplete field); the Tape ignores q and a kernel naming it fails
    assert q.grad is not None and q.grad is q.grad
    with ti.ad.Tape(loss):
        f()
    assert loss[None] == 27.0

    @ti.kernel
    def g():
        q.grad[0] = 1.0

    with pytest.raises(Exception, match='has not been placed'):
        g()
    # (Taichi accepts a gradient of another shape, and then reads past it; vkdiff refuses)
    with pytest.raises(ti.VkdiffError, match='shape'):
        ti.root.dense(ti.i, 3).place(q.grad)


def test_dual_placed_explicitly_and_grad_placed_first():
    a, b = ti.field(float), ti.field(float)
    ti.root.dense(ti.i, 2).place(a.dual, a, b, b.dual)
    assert a.dual.shape == b.dual.shape == (2,)

    @ti.kernel
    def f():
        for i in a:
            b[i] = 3 * a[i] * a[i]

    a.from_numpy(np.array([1.0, 2.0], np.float32))
    with ti.ad.FwdMode(loss=b, param=a, seed=[1.0, 1.0]):
        f()
    np.testing.assert_allclose(b.dual.to_numpy(), [6.0, 12.0])


def test_field_without_grad_stays_without_one_once_placed():
    x = ti.field(ti.f32, shape=3)
    assert x.grad is None and x.dual is None
    n = ti.field(ti.i32)
    assert n.grad is None  # integer fields have no gradient


def test_atomic_mul_on_fields_and_locals_returns_the_old_value():
    c, f = ti.field(ti.i32, shape=()), ti.field(ti.f32, shape=())
    old = ti.field(ti.i32, shape=16)

    @ti.kernel
    def k():
        c[None] = 1
        f[None] = 1.0
        for i in range(16):
            old[i] = ti.atomic_mul(c[None], 2)
            ti.atomic_mul(f[None], 1.5)

    @ti.kernel
    def local() -> ti.i32:
        x = 1
        for i in range(1, 8):
            ti.atomic_mul(x, i)
        return x

    k()
    assert c[None] == 2 ** 16
    assert f[None] == pytest.approx(1.5 ** 16, rel=1e-6)
    assert sorted(old.to_numpy()) == [2 ** i for i in range(16)]  # each saw a distinct old value
    assert local() == 5040


def test_math_extras_match_numpy():
    inf, nan = float('inf'), float('nan')
    v = ti.Vector([inf, -inf, nan, 1.0])
    assert list(ti.math.isinf(v)) == [1, 1, 0, 0] and list(ti.math.isnan(v)) == [0, 0, 1, 0]
    out = ti.Vector.field(4, ti.i32, shape=2)
    r = ti.Matrix.field(4, 4, ti.f32, shape=3)
    bits = ti.field(ti.i32, shape=4)

    @ti.kernel
    def k(x: ti.f32, y: ti.f32, n: ti.i32):
        out[0] = ti.math.isinf(ti.Vector([x, -x, y, 1.0]))
        out[1] = ti.math.isnan(ti.Vector([y, x, 1.0, -y]))
        r[0] = ti.math.translate(1.0, 2.0, 3.0) @ ti.math.scale(2.0, 3.0, 4.0)
        r[1] = ti.math.rot_by_axis(ti.math.vec3(0.0, 0.0, 1.0), 0.5)
        r[2] = ti.math.rotation3d(0.3, 0.2, 0.1)
        bits[0] = ti.math.popcnt(n)
        bits[1] = ti.math.clz(n)
        bits[2] = ti.math.popcnt(-1)
        bits[3] = ti.math.clz(0)

    k(inf, nan, 0x00F0F000)
    assert out[0].to_list() == [1, 1, 0, 0] and out[1].to_list() == [1, 0, 0, 1]
    T = np.eye(4)
    T[:3, 3] = [1, 2, 3]
    np.testing.assert_allclose(r[0].to_numpy(), T @ np.diag([2, 3, 4, 1]))
    c, s = np.cos(0.5), np.sin(0.5)
    np.testing.assert_allclose(r[1].to_numpy()[:2, :2], [[c, s], [-s, c]], atol=1e-6)
    ref = ti.math.rot_yaw_pitch_roll(0.1, 0.3, 0.2).to_numpy()  # Python scope, f32
    np.testing.assert_allclose(r[2].to_numpy(), ref, atol=1e-6)
    R = ref[:3, :3]
    np.testing.assert_allclose(R @ R.T, np.eye(3), atol=1e-6)
    assert bits.to_numpy().tolist() == [8, 8, 32, 32]
    assert ti.math.vdir(np.pi / 2).to_list() == pytest.approx([0, 1], abs=1e-7)
    assert ti.math.mod(-1.5, 1.0) == 0.5


def test_complex_helpers():
    z, w = ti.Vector([1.0, 2.0]), ti.Vector([-0.5, 3.0])
    zc, wc = 1 + 2j, -0.5 + 3j
    for got, want in ((ti.math.cdiv(z, w), zc / wc), (ti.math.cinv(z), 1 / zc),
                      (ti.math.cexp(z), np.exp(zc)), (ti.math.clog(w), np.log(wc)),
                      (ti.math.cpow(z, 2.5), zc ** 2.5), (ti.math.csqrt(w), np.sqrt(wc)),
                      (ti.math.cconj(z), zc.conjugate())):
        assert got.to_list() == pytest.approx([want.real, want.imag], rel=1e-5)
    assert ti.math.csqrt(ti.Vector([0.0, 0.0])).to_list() == [0.0, 0.0]


@pytest.mark.parametrize('n', [2, 3])
def test_solve_matches_numpy_in_a_kernel(n):
    rng = np.random.default_rng(n)
    A_np = rng.normal(size=(20, n, n)).astype(np.float32)
    A_np[0, 0, 0] = 0.0  # needs pivoting
    b_np = rng.normal(size=(20, n)).astype(np.float32)
    A = ti.Matrix.field(n, n, ti.f32, shape=20)
    b, x = ti.Vector.field(n, ti.f32, shape=20), ti.Vector.field(n, ti.f32, shape=20)
    A.from_numpy(A_np)
    b.from_numpy(b_np)

    @ti.kernel
    def k():
        for i in A:
            x[i] = ti.solve(A[i], b[i])

    k()
    np.testing.assert_allclose(x.to_numpy(), np.linalg.solve(A_np.astype(np.float64), b_np[..., None])[..., 0],
                               rtol=1e-3, atol=1e-3)


def test_eig_2x2_real_and_complex_match_numpy():
    out_vals, out_vecs = ti.Matrix.field(2, 2, ti.f32, shape=2), ti.Matrix.field(4, 2, ti.f32, shape=2)
    M = ti.Matrix.field(2, 2, ti.f32, shape=2)
    mats = np.array([[[1.0, 2.0], [3.0, 4.0]], [[1.0, -2.0], [3.0, 0.5]]], np.float32)
    M.from_numpy(mats)

    @ti.kernel
    def k():
        for i in M:
            out_vals[i], out_vecs[i] = ti.eig(M[i])

    k()
    for i in range(2):
        vals = out_vals[i].to_numpy()
        lam = vals[:, 0] + 1j * vals[:, 1]
        vecs = out_vecs[i].to_numpy()
        V = vecs[0::2] + 1j * vecs[1::2]
        np.testing.assert_allclose(sorted(lam, key=lambda c: (c.real, c.imag)),
                                   sorted(np.linalg.eigvals(mats[i]), key=lambda c: (c.real, c.imag)),
                                   rtol=1e-5)
        np.testing.assert_allclose(mats[i] @ V, V * lam, atol=1e-5)  # A v = lambda v
        np.testing.assert_allclose(np.linalg.norm(V, axis=0), [1, 1], rtol=1e-5)
    vals, vecs = ti.eig(ti.Matrix([[2.0, 0.0], [0.0, 2.0]]))
    assert vals.to_list() == [[2.0, 0.0], [2.0, 0.0]]
    assert np.isnan(vecs.to_numpy()).all()  # a double eigenvalue: NaN vectors, as in Taichi


def test_zero_one_rows_cols_diag():
    m = ti.Matrix.field(2, 2, ti.f32, shape=3)

    @ti.kernel
    def k():
        a, b = ti.Vector([1.0, 2.0]), ti.Vector([3.0, 4.0])
        m[0] = ti.Matrix.rows([a, b])
        m[1] = ti.Matrix.cols([a, b]) + ti.zero(m[0])
        m[2] = ti.Matrix.diag(2, 1.5) + ti.one(m[0])

    k()
    assert m[0].to_list() == [[1, 2], [3, 4]] and m[1].to_list() == [[1, 3], [2, 4]]
    assert m[2].to_list() == [[2.5, 1], [1, 2.5]]
    assert ti.zero(ti.Vector([1, 2])).to_list() == [0, 0] and ti.one(3.0) == 1.0


def test_stop_grad_only_in_the_loop_it_is_called_in():
    x, loss = ti.field(ti.f32), ti.field(ti.f32)
    ti.root.dense(ti.i, 8).place(x, x.grad)
    ti.root.place(loss, loss.grad)

    @ti.kernel
    def f():
        for i in range(8):
            ti.stop_grad(x)
            loss[None] += x[i] ** 2
        for i in range(8):
            loss[None] += 3 * x[i]

    x.from_numpy(np.arange(8, dtype=np.float32))
    with ti.ad.Tape(loss):
        f()
    assert loss[None] == 140 + 84
    np.testing.assert_array_equal(x.grad.to_numpy(), [3] * 8)


def test_no_grad_function_contributes_no_gradient():
    x, y, loss = (ti.field(ti.f32, shape=(), needs_grad=True) for _ in range(3))

    @ti.kernel
    def double():
        y[None] = 2 * x[None]

    @ti.kernel
    def square():
        loss[None] = y[None] ** 2 + x[None]

    @ti.ad.no_grad
    def run_double():
        double()

    x[None] = 3.0
    with ti.ad.Tape(loss):
        run_double()
        square()
    assert loss[None] == 39.0
    assert y.grad[None] == 12.0 and x.grad[None] == 1.0  # nothing flowed through double


def test_type_predicates_and_u1_arguments():
    assert ti.types.is_integral(ti.i32) and ti.types.is_integral(ti.u1)
    assert not ti.types.is_integral(ti.f32) and ti.types.is_real(ti.f64)
    assert ti.types.is_signed(ti.i64) and not ti.types.is_signed(ti.u32)
    with pytest.raises(TypeError):
        ti.types.is_signed(ti.f32)
    assert ti.types.is_tensor(ti.math.vec3) and not ti.types.is_tensor(ti.f32)

    @ti.kernel
    def neg(x: ti.u1) -> ti.u1:
        return not x

    assert neg(True) == 0 and neg(0) == 1


def test_integer_power_with_run_time_exponent_matches_taichi():
    @ti.kernel
    def p32(a: ti.i32, b: ti.i32) -> ti.i32:
        return a ** b

    @ti.kernel
    def p64(a: ti.i64, b: ti.i32) -> ti.i64:
        return a ** b

    # values from Taichi 1.7.4 (x64): wraps like repeated multiplication; b < 0 uses |b|
    cases = [(2, 10, 1024, 1024), (-3, 3, -27, -27), (7, 0, 1, 1), (0, 0, 1, 1),
             (2, 31, -2147483648, 2147483648), (3, 40, 689956897, -6289078614652622815),
             (5, -2, 25, 25)]
    for a, b, want32, want64 in cases:
        assert (p32(a, b), p64(a, b)) == (want32, want64), (a, b)


def test_kernels_return_vectors_and_matrices():
    @ti.kernel
    def v(x: ti.i32) -> ti.types.vector(4, ti.i32):
        return ti.Vector([x, x * 2, 0, -x])

    @ti.kernel
    def m(s: ti.f32) -> ti.types.matrix(2, 3, ti.f32):
        return ti.Matrix([[1, 2, 3], [4, 5, 6]]) * s

    assert v(7).to_list() == [7, 14, 0, -7]
    assert m(0.5).to_list() == [[0.5, 1.0, 1.5], [2.0, 2.5, 3.0]]


def test_field_offsets_in_kernels_and_python_scope():
    e = ti.field(ti.i32, shape=(4, 3), offset=(4, -4))
    v = ti.Vector.field(2, ti.f32, shape=5, offset=-2)
    a = ti.field(ti.i32)
    ti.root.dense(ti.ij, 2).place(a, offset=(100, -7))

    @ti.kernel
    def k():
        for i, j in e:
            e[i, j] = i * 10 + j
        for I in ti.grouped(v):
            v[I] = ti.Vector([I[0], 2 * I[0]])
        for i, j in a:
            a[i, j] = i + j
        e[7, -2] += 1000  # constant indices count from the offset too

    k()
    want = np.array([[i * 10 + j for j in range(-4, -1)] for i in range(4, 8)])
    want[3, 2] += 1000
    np.testing.assert_array_equal(e.to_numpy(), want)
    assert e[4, -4] == 36 and e[7, -2] == 1068
    np.testing.assert_array_equal(v.to_numpy()[:, 0], [-2, -1, 0, 1, 2])
    assert a.to_numpy().tolist() == [[93, 94], [94, 95]] and a[101, -6] == 95
    assert list(ti.grouped(v)) == [(-2,), (-1,), (0,), (1,), (2,)]
    with pytest.raises(IndexError):
        e[0, 0]  # below the offset
    # Taichi's type for both (test_offset.py::test_offset_must_throw_*); also a ValueError
    with pytest.raises(ti.TaichiCompilationError, match='dimensionality'):
        ti.field(ti.f32, shape=3, offset=(1, 2))
    with pytest.raises(ti.TaichiCompilationError, match='shape cannot be None'):
        ti.field(ti.f32, offset=(1, 2))
    with pytest.raises(ValueError, match='dimensionality'):
        ti.Vector.field(2, ti.f32, shape=(3,), offset=(1, 2))


def test_fields_builder_places_fields_and_destroys_them():
    x = ti.field(ti.f32, shape=3)
    x.fill(1.0)
    fb = ti.FieldsBuilder()
    y, z = ti.field(ti.f32), ti.field(ti.i32)
    fb.dense(ti.i, 4).place(y, y.grad)
    fb.dense(ti.i, 2).dense(ti.j, 3).place(z)
    tree = fb.finalize()
    with pytest.raises(ti.VkdiffError, match='finalized'):
        fb.dense(ti.i, 2).place(ti.field(ti.f32))

    @ti.kernel
    def k():
        for i in y:
            y[i] = x[i % 3] * i
        for i, j in z:
            z[i, j] = i * 3 + j

    k()
    assert y.to_numpy().tolist() == [0, 1, 2, 3] and y.grad.shape == (4,)
    assert z.to_numpy().tolist() == [[0, 1, 2], [3, 4, 5]]
    tree.destroy()
    with pytest.raises(ti.VkdiffError):
        y[0]
    with pytest.raises(ti.VkdiffError):
        tree.destroy()
    assert x.to_numpy().tolist() == [1, 1, 1]  # fields of other trees are untouched


def test_destroying_a_tree_recompiles_kernels_that_captured_its_fields():
    """A data-oriented object's kernel reads `self.x`; after the tree holding x is destroyed and
    a new x is placed, the next launch uses the new field (Taichi's SNodeTree.destroy clears the
    compiled kernels). vkdiff kept the kernel compiled for the destroyed field and wrote
    nothing: [0]*8 instead of Taichi's [0, 2, 4, ..., 14] (test_classfunc.py::
    test_class_with_field)."""
    @ti.data_oriented
    class A:
        def init(self):
            self.x = ti.field(int)
            fb = ti.FieldsBuilder()
            fb.dense(ti.i, 8).place(self.x)
            self.tree = fb.finalize()

        @ti.kernel
        def k(self, m: int):
            for i in range(8):
                self.x[i] = m * i

    a = A()
    a.init()
    a.k(1)
    assert a.x.to_numpy().tolist() == list(range(8))
    a.tree.destroy()
    a.init()
    a.k(2)
    assert a.x.to_numpy().tolist() == [2 * i for i in range(8)]


def test_to_numpy_keep_dims_and_vector_shapes_from_numpy():
    v = ti.Vector.field(3, ti.i32, shape=(2, 4))
    m = ti.Matrix.field(3, 1, ti.f32, shape=2)
    v.from_numpy(np.arange(24).reshape(2, 4, 1, 3))
    assert v.to_numpy().shape == (2, 4, 3) and v.to_numpy(keep_dims=True).shape == (2, 4, 3, 1)
    assert v[1, 2].to_list() == [18, 19, 20]
    m.from_numpy(np.arange(6, dtype=np.float32).reshape(2, 3))
    assert m.to_numpy().shape == (2, 3) and m.to_numpy(keep_dims=True).shape == (2, 3, 1)
    m2 = ti.Matrix.field(3, 1, ti.f32, shape=2)
    m2.copy_from(m)
    np.testing.assert_array_equal(m2.to_numpy(keep_dims=True), m.to_numpy(keep_dims=True))
    with pytest.raises(ValueError):
        v.from_numpy(np.zeros((2, 4, 2, 2)))


def test_matrix_comparisons_are_entrywise_with_all_any():
    a = ti.Vector([1, 2, 3])
    assert (a == [1, 2, 4]).to_list() == [True, True, False]
    assert (a == [1, 2, 3]).all() and not (a != [1, 2, 3]).any() and (a > 2).any()
    r = ti.field(ti.i32, shape=5)
    offsets = [ti.Vector([1, 2]), ti.Vector([2, 3])]

    @ti.kernel
    def k(x: ti.i32):
        v = ti.Vector([x, 2, 3])
        r[0] = (v == ti.Vector([1, 2, 3])).all()
        r[1] = (v != [1, 2, 3]).any()
        r[2] = all(v == [1, 2, 3])
        r[3] = any(v > 4)
        r[4] = (ti.Vector([x, x]) + ti.static(offsets)[1]).sum()

    k(1)
    assert r.to_numpy().tolist() == [1, 0, 1, 0, 7]
    k(5)
    assert r.to_numpy().tolist() == [0, 1, 0, 1, 15]


def test_list_comprehensions_unroll_in_kernels():
    m = ti.Matrix.field(3, 3, ti.f32, shape=())
    r = ti.field(ti.i32, shape=())

    @ti.kernel
    def k(x: ti.f32):
        m[None] = ti.Matrix([[x * i + j for j in range(3)] for i in range(3)])
        r[None] = sum([i * i for i in range(5) if i % 2 == 0])

    k(10.0)
    assert m[None].to_list() == [[0, 1, 2], [10, 11, 12], [20, 21, 22]] and r[None] == 20

    @ti.kernel
    def bad(n: ti.i32) -> ti.i32:
        return len([i for i in range(n)])

    with pytest.raises(ti.CompileError, match='compile-time'):
        bad(3)


def test_pyfunc_real_func_colors_and_log_levels():
    @ti.pyfunc
    def twice(x):
        return 2 * x

    @ti.real_func
    def add(a: ti.i32, b: ti.i32) -> ti.i32:
        return a + b

    @ti.kernel
    def k(x: ti.i32) -> ti.i32:
        return add(twice(x), 1)

    assert twice(21) == 42 and k(5) == 11
    assert ti.rgb_to_hex([1.0, 0.5, 0.0]) == 0xFF7F00
    np.testing.assert_array_equal(ti.rgb_to_hex(np.array([[0.0, 1.0], [0.0, 0.0], [1.0, 1.0]])),
                                  [0x0000FF, 0xFF00FF])
    assert ti.hex_to_rgb(0xFF8000) == (1.0, 128 / 255, 0.0)
    ti.set_logging_level(ti.WARN)
    try:
        assert ti.is_logging_effective(ti.ERROR) and not ti.is_logging_effective(ti.INFO)
        with pytest.raises(ValueError):
            ti.set_logging_level('loud')
    finally:
        ti.set_logging_level(ti.INFO)


def test_primitive_types_lists():
    pt = ti.types.primitive_types
    assert ti.f16 in pt.real_types and ti.u8 in pt.integer_types and float in pt.all_types
    assert len(pt.all_types) == 15 and pt.i16 is ti.i16
    assert all(ti.types.is_integral(t) for t in pt.integer_types if t not in (int, bool))


def test_block_local_is_a_checked_hint():
    a = ti.field(ti.f32, shape=8)
    out = ti.field(ti.f32, shape=8)
    a.from_numpy(np.arange(8, dtype=np.float32))

    @ti.kernel
    def k():
        ti.block_local(a)
        for i in out:
            out[i] = a[i] + a[(i + 1) % 8]

    k()
    np.testing.assert_array_equal(out.to_numpy(), np.arange(8) + np.roll(np.arange(8), -1))

    @ti.kernel
    def bad():
        ti.block_local(3)

    with pytest.raises(ti.CompileError, match='takes fields'):
        bad()
    assert ti.Layout.SOA != ti.Layout.AOS


def test_vector_and_matrix_kernel_arguments():
    @ti.kernel
    def f(v: ti.types.vector(3, ti.f32), m: ti.types.matrix(2, 2, ti.i32), s: ti.f32) -> ti.f32:
        return v.dot(ti.Vector([1.0, 2.0, 3.0])) + m[1, 0] * s

    assert f(ti.Vector([1.0, 1.0, 1.0]), [[1, 2], [3, 4]], 0.5) == 7.5
    assert f([0, 0, 1], ti.Matrix([[0, 0], [5, 0]]), 2.0) == 13.0  # same instance, new values
    assert len(f.instances) == 1
    with pytest.raises(ti.VkdiffError, match="'v'"):
        f([1.0, 2.0], [[1, 2], [3, 4]], 0.5)


def test_vector_types_build_from_numpy_arrays():
    a, b = np.array([1.0, 2.0, 3.0]), np.arange(9.0).reshape(3, 3)
    assert ti.math.mat3(a, a, a).to_list() == [[1, 2, 3]] * 3
    assert ti.math.mat3(b).to_list() == b.tolist() and ti.math.vec3(a).to_list() == [1, 2, 3]


def test_trace_needs_a_square_matrix():
    assert ti.Matrix([[0.5, 3.0], [5.0, 7.0]]).trace() == 7.5
    with pytest.raises(ti.CompileError, match=r'square matrix, got shape \(3, 2\)'):
        ti.Matrix([[0.1, 3.0], [5.0, 7.0], [1.0, 2.0]]).trace()


def test_lang_ops_by_name_and_lang_simt_module():
    from vkdiff.lang.simt import subgroup
    assert subgroup is ti.simt.subgroup
    ops = ti.lang.ops
    assert ops.add(ti.Vector([1, 2]), ti.Vector([3, 4])).to_list() == [4, 6]
    assert ops.logical_not(ti.Vector([0, 3])).to_list() == [1, 0]
    assert ops.abs(-2.5) == 2.5
    r = ti.field(ti.i32, shape=3)

    @ti.kernel
    def k(x: ti.i32):
        v = ti.Vector([x, 0])
        r[0], r[1] = ops.logical_not(v)
        r[2] = ops.add(x, 5)

    k(7)
    assert r.to_numpy().tolist() == [0, 1, 12]


def test_lang_ops_functions_carry_their_taichi_names():
    """ti.lang.ops.<name>.__name__ is <name>, as in Taichi (pytest ids of Taichi's own tests are
    built from it), and they act entrywise on Python-scope vectors."""
    ops = ti.lang.ops
    for name in ('abs', 'logical_not', 'bit_and', 'bit_shr', 'add', 'cmp_lt', 'neg', 'sqrt'):
        assert getattr(ops, name).__name__ == name
    np.testing.assert_allclose(ops.abs(ti.Vector([-0.2, 0.3])).to_numpy(), [0.2, 0.3])
    np.testing.assert_array_equal(ops.logical_not(ti.Vector([2, 0])).to_numpy(), [0, 1])


def test_scalar_and_matrix_field_classes_for_isinstance():
    """`isinstance(x, ti.ScalarField)` as DiffTaichi's smoke_taichi_cpu.py uses it to split a
    vector field into members (soa(): get_scalar_field(i) placed one by one); truth table from
    Taichi 1.7.4: scalar field, its gradient and a member are ScalarFields, a vector/matrix field
    a MatrixField, an ndarray neither."""
    a = ti.field(float, shape=2, needs_grad=True)
    b = ti.Vector.field(2, float, shape=2)
    m = ti.Matrix.field(2, 2, float, shape=2)
    n = ti.ndarray(float, 2)
    assert isinstance(a, ti.ScalarField) and isinstance(a.grad, ti.ScalarField)
    assert isinstance(b.get_scalar_field(1), ti.ScalarField)
    assert not isinstance(b, ti.ScalarField) and not isinstance(n, ti.ScalarField)
    assert isinstance(b, ti.MatrixField) and isinstance(m, ti.MatrixField)
    assert not isinstance(a, ti.MatrixField) and not isinstance(3.0, ti.ScalarField)
    assert isinstance(a, ti.Field) and isinstance(b, ti.Field)

    # smoke_taichi_cpu.py's layout: each member of v under a node of its own
    v = ti.Vector.field(2, float)
    block = ti.root.dense(ti.i, 3)

    def soa(x):
        if isinstance(x, ti.ScalarField):
            block.dense(ti.j, 4).place(x)
        else:
            for i in range(x.n):
                soa(x.get_scalar_field(i))
    soa(v)

    @ti.kernel
    def fill():
        for t, j in v:
            v[t, j] = [t, 10 * j]

    fill()
    want = np.stack(np.meshgrid(np.arange(3), 10 * np.arange(4), indexing='ij'), -1)
    np.testing.assert_array_equal(v.to_numpy(), want)


def test_ndarray_annotation_element_dim_takes_the_last_axes_as_the_element():
    """`ti.types.ndarray(element_dim=1)` (DiffTaichi's diffmpm3d.py init(x_)): a numpy (n, 3)
    array's rows are vectors, x_[i] a 3-vector, as in Taichi 1.7.4; element_dim=2: matrices."""
    x = ti.Vector.field(3, ti.f32, shape=4)
    m = ti.Matrix.field(2, 2, ti.f32, shape=3)

    @ti.kernel
    def init(x_: ti.types.ndarray(element_dim=1), m_: ti.types.ndarray(element_dim=2)):
        for i in range(4):
            x[i] = x_[i] * 2
        for i in range(3):
            m[i] = m_[i].transpose()

    a = np.arange(12, dtype=np.float32).reshape(4, 3)
    b = np.arange(12, dtype=np.float32).reshape(3, 2, 2)
    init(a, b)
    np.testing.assert_array_equal(x.to_numpy(), 2 * a)
    np.testing.assert_array_equal(m.to_numpy(), b.transpose(0, 2, 1))
