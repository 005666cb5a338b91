"""ndarray kernel parameters: ndarrays, numpy arrays and torch tensors passed to kernels, one
compiled kernel per (dtype, ndim, element shape), shapes read at launch."""
import numpy as np
import pytest

import vkdiff as ti


def _instances(k):
    return len(k.instances)


def test_ndarray_arg_read_write_and_struct_for():
    @ti.kernel
    def axpy(a: ti.f32, x: ti.types.ndarray(), y: ti.types.ndarray()):
        for i in x:
            y[i] = a * x[i] + y[i]

    x = ti.ndarray(ti.f32, 7)
    y = ti.ndarray(ti.f32, 7)
    x.from_numpy(np.arange(7, dtype=np.float32))
    y.fill(1.0)
    axpy(2.0, x, y)
    np.testing.assert_allclose(y.to_numpy(), 2 * np.arange(7) + 1)


@pytest.mark.requires('float64')
def test_one_compile_for_every_shape():
    @ti.kernel
    def fill2(arr: ti.types.ndarray(), d: ti.f32):
        for i, j in arr:
            arr[i, j] = d + i * 10 + j

    for n, m in [(2, 3), (5, 4), (1, 9), (33, 2)]:
        a = ti.ndarray(ti.f32, (n, m))
        fill2(a, 0.5)
        ref = 0.5 + np.arange(n)[:, None] * 10 + np.arange(m)[None, :]
        np.testing.assert_allclose(a.to_numpy(), ref)
    assert _instances(fill2) == 1
    b = np.zeros((3, 3), np.float32)     # a numpy array of the same dtype and ndim: same kernel
    fill2(b, 1.0)
    np.testing.assert_allclose(b, 1 + np.arange(3)[:, None] * 10 + np.arange(3)[None, :])
    assert _instances(fill2) == 1
    fill2(np.zeros((3, 3)), 1.0)          # f64: another kernel
    assert _instances(fill2) == 2


@pytest.mark.requires('float64')
def test_shape_in_kernel_and_range_loops():
    @ti.kernel
    def rowsum(a: ti.types.ndarray(dtype=ti.f64, ndim=2), out: ti.types.ndarray(dtype=ti.f64, ndim=1)):
        for i in range(a.shape[0]):
            s = ti.f64(0.0)            # (0.0 alone is the default f32, as in Taichi)
            for j in range(a.shape[1]):
                s += a[i, j]
            out[i] = s

    rng = np.random.default_rng(1)
    for n, m in [(4, 3), (9, 17)]:
        a = rng.standard_normal((n, m))
        out = np.zeros(n)
        rowsum(a, out)
        np.testing.assert_allclose(out, a.sum(1), rtol=1e-12)
    assert _instances(rowsum) == 1


def test_numpy_arrays_see_data_and_get_writes():
    @ti.kernel
    def run(x: ti.types.ndarray(), y: ti.types.ndarray()):
        for i in range(4):
            x[i] += i + y[i]

    a = ti.ndarray(ti.i32, 4)
    a.from_numpy(np.array([0, 1, 4, 9], np.int32))
    b = np.ones(4, np.int32)
    run(a, b)
    np.testing.assert_array_equal(a.to_numpy(), [0 + 0 + 1, 1 + 1 + 1, 4 + 2 + 1, 9 + 3 + 1])
    run(b, a)
    np.testing.assert_array_equal(b, 1 + np.arange(4) + a.to_numpy())


def test_vector_and_matrix_elements():
    @ti.kernel
    def f(v: ti.types.ndarray(dtype=ti.math.vec3), m: ti.types.ndarray(dtype=ti.math.mat2)):
        for i in v:
            v[i] = ti.Vector([i, 2 * i, 3 * i]) + v[i]
            m[i][0, 1] = v[i].norm()
            m[i][1, 0] = v[i][2]

    v = ti.Vector.ndarray(3, ti.f32, 4)
    v.fill(1.0)
    m = ti.Matrix.ndarray(2, 2, ti.f32, 4)
    f(v, m)
    ref = 1 + np.arange(4)[:, None] * np.array([1, 2, 3])
    np.testing.assert_allclose(v.to_numpy(), ref)
    np.testing.assert_allclose(m.to_numpy()[:, 0, 1], np.linalg.norm(ref, axis=1), rtol=1e-6)
    np.testing.assert_allclose(m.to_numpy()[:, 1, 0], ref[:, 2])
    vn = np.ones((5, 3), np.float32)      # a numpy array whose last axis is the vector
    mn = np.zeros((5, 2, 2), np.float32)
    f(vn, mn)
    np.testing.assert_allclose(vn, 1 + np.arange(5)[:, None] * np.array([1, 2, 3]))
    assert _instances(f) == 1


def test_grouped_and_0d():
    @ti.kernel
    def g(a: ti.types.ndarray(), s: ti.types.ndarray(dtype=ti.f32, ndim=0)):
        for I in ti.grouped(a):
            a[I] = I[0] * 100 + I[1] * 10 + I[2]
            s[None] += 1.0

    a = ti.ndarray(ti.i32, (2, 3, 4))
    s = ti.ndarray(ti.f32, ())
    g(a, s)
    i, j, k = np.indices((2, 3, 4))
    np.testing.assert_array_equal(a.to_numpy(), i * 100 + j * 10 + k)
    assert s[None] == 24.0


def test_return_and_func_taking_ndarray():
    @ti.func
    def second(w: ti.types.ndarray(ti.f32, ndim=1)) -> ti.f32:
        return w[1]

    @ti.kernel
    def k(w: ti.types.ndarray(ti.f32, ndim=1)) -> ti.f32:
        return second(w) + w.shape[0]

    w = ti.ndarray(ti.f32, 5)
    w[1] = 2.5
    assert k(w) == 7.5


def test_clamp_boundary():
    @ti.kernel
    def at(x: ti.types.ndarray(boundary='clamp'), i: ti.i32) -> ti.f32:
        return x[i]

    x = ti.ndarray(ti.f32, 3)
    x.from_numpy(np.array([5, 6, 7], np.float32))
    assert [at(x, i) for i in (-2, 0, 2, 9)] == [5, 5, 7, 7]


def test_bad_arguments_are_clear_errors():
    @ti.kernel
    def k1(a: ti.types.ndarray(dtype=ti.f32, ndim=1)):
        for i in a:
            a[i] = 1.0

    with pytest.raises(TypeError, match='Expect element type f32'):
        k1(ti.ndarray(ti.i32, 4))
    with pytest.raises(ValueError, match='required ndim=1'):
        k1(ti.ndarray(ti.f32, (4, 4)))
    with pytest.raises(ValueError, match='required array has dtype=f32, array with dtype=f64'):
        k1(np.zeros(4))                       # f64 data for an f32 parameter: never a silent copy
    base = np.zeros(8, np.float32)
    with pytest.raises(ValueError, match='Non contiguous'):
        k1(base[::2])
    assert (base == 0).all()
    with pytest.raises(TypeError):
        k1([1.0, 2.0])

    @ti.kernel
    def k2(a: ti.types.ndarray(dtype=ti.math.vec2)):
        pass

    with pytest.raises(ValueError, match='required element type'):
        k2(ti.Matrix.ndarray(2, 3, ti.f32, 4))

    @ti.kernel
    def k3(a: ti.template()):
        pass

    with pytest.raises(TypeError, match="Ndarray shouldn't be passed in via"):
        k3(ti.ndarray(ti.f32, 3))


def test_read_only_numpy_array():
    @ti.kernel
    def total(a: ti.types.ndarray(), out: ti.types.ndarray()):
        for i in a:
            out[0] += a[i]

    a = np.arange(5, dtype=np.float32)
    a.flags.writeable = False
    out = np.zeros(1, np.float32)
    total(a, out)                          # read-only input: fine
    assert out[0] == 10
    with pytest.raises(ValueError, match='read-only'):
        total(np.zeros(2, np.float32), a)
    np.testing.assert_array_equal(a, np.arange(5))


def test_many_fresh_arrays_reuse_the_pipeline():
    @ti.kernel
    def inc(a: ti.types.ndarray()):
        for i in a:
            a[i] += 1

    for n in range(1, 40):
        x = np.full(n, n, np.int32)
        inc(x)
        assert (x == n + 1).all()
    assert _instances(inc) == 1


@ti.kernel
def _advance(a: ti.types.ndarray(), b: ti.types.ndarray()):
    for i in a:
        b[i] = ti.sin(a[i]) + a[i]


@ti.kernel
def _total(a: ti.types.ndarray(), out: ti.types.ndarray()):
    for i in a:
        out[None] += a[i] * a[i]


@pytest.mark.requires('float64')
def test_kernel_grad_and_tape_over_ndarrays_match_finite_differences():
    n = 6
    rng = np.random.default_rng(3)
    x0 = rng.standard_normal(n)
    xs = [ti.ndarray(ti.f64, n, needs_grad=True) for _ in range(4)]
    loss = ti.ndarray(ti.f64, (), needs_grad=True)
    xs[0].from_numpy(x0)

    def f(v):
        for _ in range(3):
            v = np.sin(v) + v
        return (v * v).sum()

    with ti.ad.Tape(loss=loss):        # the same kernel on new arrays: one array per step
        for k in range(3):
            _advance(xs[k], xs[k + 1])
        _total(xs[3], loss)
    assert loss[None] == pytest.approx(f(x0), rel=1e-13)
    fd = np.array([(f(x0 + e) - f(x0 - e)) / 2e-6 for e in np.eye(n) * 1e-6])
    np.testing.assert_allclose(xs[0].grad.to_numpy(), fd, rtol=1e-7, atol=1e-7)
    assert len(_advance.instances) == 1


@pytest.mark.requires('float64')
def test_tape_sees_overwrites_through_ndarray_arguments():
    """The Tape's access check follows arrays, not parameters: overwriting an array that an
    earlier launch read (passed to another parameter) is an AutodiffError."""
    a = ti.ndarray(ti.f64, 4, needs_grad=True)
    b = ti.ndarray(ti.f64, 4, needs_grad=True)
    loss = ti.ndarray(ti.f64, (), needs_grad=True)
    a.fill(0.5)
    for validation in (False, True):   # validation=True checks ndarrays element by element
        with pytest.raises(ti.AutodiffError, match='overwr'):
            with ti.ad.Tape(loss=loss, validation=validation):
                _advance(a, b)       # reads a
                _advance(b, a)       # overwrites a
                _total(a, loss)
    a.fill(0.5)                                    # (the launches above changed it)
    with ti.ad.Tape(loss=loss, validation=True):   # and passes what is right
        _advance(a, b)
        _total(b, loss)
    v = 0.5
    np.testing.assert_allclose(a.grad.to_numpy(), 2 * (np.sin(v) + v) * (np.cos(v) + 1))


def test_needs_grad_false_grad_in_kernel_and_tape_loss_of_shape_1():
    @ti.kernel
    def f(x: ti.types.ndarray(needs_grad=False), y: ti.types.ndarray()):
        for i in x:
            y[0] += x[i] * x[i]

    x = ti.ndarray(ti.f32, 3, needs_grad=True)
    y = ti.ndarray(ti.f32, 1, needs_grad=True)
    x.fill(2.0)
    with ti.ad.Tape(loss=y):            # a (1,)-shaped ndarray loss, as Taichi takes it
        f(x, y)
    assert y[0] == 12.0
    assert (x.grad.to_numpy() == 0).all()   # needs_grad=False: a constant for autodiff

    @ti.kernel
    def g(x: ti.types.ndarray(), b: ti.types.ndarray()):
        for i in x:
            b[None] += x.grad[i]

    b = ti.ndarray(ti.f32, (), needs_grad=True)
    x.grad.fill(1.5)
    g(x, b)
    assert b[None] == 4.5
    with pytest.raises(RuntimeError, match='differentiate through a grad tensor'):
        g.grad(x, b)                    # as in Taichi: no adjoint of a kernel reading a gradient


@pytest.mark.requires('float64')
def test_tape_starts_ndarray_gradients_from_zero():
    x = ti.ndarray(ti.f64, 4, needs_grad=True)
    y = ti.ndarray(ti.f64, 4, needs_grad=True)
    loss = ti.ndarray(ti.f64, (), needs_grad=True)
    x.from_numpy(np.arange(4.0))
    for _ in range(2):                  # the second Tape does not add to the first's gradients
        with ti.ad.Tape(loss=loss):
            _advance(x, y)
            _total(y, loss)
    v = np.arange(4.0)
    np.testing.assert_allclose(x.grad.to_numpy(), 2 * (np.sin(v) + v) * (np.cos(v) + 1),
                               rtol=1e-12)


def test_no_adjoint_of_a_kernel_reading_a_field_gradient():
    x = ti.field(ti.f32, 4, needs_grad=True)
    s = ti.field(ti.f32, (), needs_grad=True)

    @ti.kernel
    def grad_norm():
        for i in x:
            s[None] += x.grad[i] * x.grad[i]

    x.grad.fill(0.5)
    grad_norm()                         # reading gradients is fine
    assert s[None] == 1.0
    with pytest.raises(RuntimeError, match='differentiate through a grad tensor'):
        grad_norm.grad()


def test_assigning_a_list_of_the_wrong_length_is_taichis_type_error():
    """`arr[I] = [1, 2]` into 3-vectors: Taichi's TaichiTypeError and message, for an ndarray
    and a field, and nothing is written (test_ndarray.py::test_ndarray_bad_assign)."""
    ivec3 = ti.types.vector(3, ti.i32)
    y = ti.ndarray(ivec3, shape=(2, 2))
    y.fill(7)
    f = ti.Vector.field(3, ti.i32, shape=2)

    @ti.kernel
    def into_array(arr: ti.types.ndarray(dtype=ivec3)):
        for I in ti.grouped(arr):
            arr[I] = [1, 2]

    @ti.kernel
    def into_field():
        for i in f:
            f[i] = [[1, 2], [3, 4]]

    with pytest.raises(ti.TaichiTypeError, match=r"cannot assign '\[Tensor \(2\) i32\]' to "
                                                 r"'\[Tensor \(3\) i32\]'"):
        into_array(y)
    with pytest.raises(TypeError, match=r"cannot assign '\[Tensor \(2, 2\) i32\]' to "
                                        r"'\[Tensor \(3\) i32\]'"):
        into_field()
    assert (y.to_numpy() == 7).all()


def test_boundary_clamp_also_clamps_component_indices():
    """boundary='clamp' clamps a run-time index into an element's entries too, as Taichi does:
    the flat entry index i * m + j into [0, n * m) (test_ndarray.py::test_ndarray_oob_clamp)."""
    @ti.kernel
    def vec_get(x: ti.types.ndarray(boundary='clamp'), y: ti.i32) -> ti.f32:
        return x[1, 2][y]

    @ti.kernel
    def mat_get(x: ti.types.ndarray(boundary='clamp'), i: ti.i32, j: ti.i32) -> ti.f32:
        return x[1, 2][i, j]

    @ti.kernel
    def vec_set(x: ti.types.ndarray(boundary='clamp'), y: ti.i32, v: ti.f32):
        x[0, 0][y] = v

    a = ti.ndarray(ti.math.vec2, shape=(3, 3))
    a.from_numpy(np.arange(18, dtype=np.float32).reshape(3, 3, 2))  # a[1, 2] = [10, 11]
    assert [vec_get(a, y) for y in (-5, -1, 0, 1, 2, 7)] == [10, 10, 10, 11, 11, 11]
    m = ti.ndarray(ti.math.mat2, shape=(3, 3))
    m.from_numpy(np.arange(36, dtype=np.float32).reshape(3, 3, 2, 2))  # m[1, 2] = [[20, 21], [22, 23]]
    got = [mat_get(m, i, j) for i, j in ((-1, 0), (1, -1), (2, 0), (1, 2), (0, 1), (5, 5))]
    assert got == [20, 21, 23, 23, 21, 23]
    vec_set(a, -3, 100.0)
    vec_set(a, 9, 200.0)
    np.testing.assert_array_equal(a.to_numpy()[0, 0], [100, 200])


def test_fortran_ordered_numpy_array_is_read_and_written_back_in_place():
    @ti.kernel
    def swap_in(val: ti.types.ndarray(), arr: ti.types.ndarray()):
        for i, j in arr:
            val[i, j] = arr[i, j]
            arr[i, j] = i * 10 + j

    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    b = a.T  # Fortran-ordered view of a: b[i, j] == a[j, i]
    assert b.flags.f_contiguous and not b.flags.c_contiguous
    seen = np.zeros((4, 3), np.int32)
    swap_in(seen, b)
    np.testing.assert_array_equal(seen, np.arange(12).reshape(3, 4).T)
    want = np.add.outer(np.arange(4) * 10, np.arange(3))
    np.testing.assert_array_equal(b, want)
    np.testing.assert_array_equal(a, want.T)  # written through the view into a
    with pytest.raises(ValueError, match='Non contiguous numpy arrays are not supported'):
        swap_in(seen, np.zeros((4, 6), np.int32)[:, ::2])


def test_numpy_array_for_a_matrix_annotation_keeps_its_own_scalar_type():
    @ti.kernel
    def fill(a: ti.types.ndarray(dtype=ti.math.mat2)):
        for i in range(a.shape[0]):
            for j, k in ti.ndrange(2, 2):
                a[i][j, k] = j * 3 + k + i * 0.5  # i32 array: stored truncated

    m = np.zeros((3, 2, 2), np.int32)
    fill(m)
    want = (np.arange(3)[:, None, None] * 0.5 + np.arange(2)[:, None] * 3 + np.arange(2)).astype(np.int32)
    np.testing.assert_array_equal(m, want)

    @ti.kernel
    def g(arr: ti.types.ndarray(dtype=ti.math.mat3, ndim=2)):
        pass

    with pytest.raises(ValueError, match=r'required element_shape=\(3, 3\), array with element shape of \(2, 3\)'):
        g(np.zeros((2, 2, 2, 3), np.float32))
    with pytest.raises(ValueError, match='required array has ndim=2 element_dim=2, array with 3 dimensions'):
        g(np.zeros((2, 2, 3), np.float32))


def test_ndarray_argument_element_shape_in_kernel():
    """Taichi's AnyArray.element_shape() in kernel scope: [] for scalars, [n] for vectors,
    [n, m] for matrices -- compile-time, so ti.static can branch on it."""
    @ti.func
    def total(a: ti.template()):
        s = 0.0
        for i in range(a.shape[0]):
            if ti.static(a.element_shape() == [2]):
                s += a[i][0] + 10 * a[i][1]
            elif ti.static(a.element_shape() == [2, 2]):
                s += a[i][1, 0]
            else:
                ti.static_assert(a.element_shape() == [])
                s += a[i]
        return s

    @ti.kernel
    def run(v: ti.types.ndarray(ndim=1), m: ti.types.ndarray(ndim=1),
            x: ti.types.ndarray(ndim=1)) -> ti.math.vec3:
        return ti.Vector([total(v), total(m), total(x)])

    v = ti.ndarray(ti.math.vec2, shape=3)
    v.from_numpy(np.arange(6, dtype=np.float32).reshape(3, 2))
    m = ti.ndarray(ti.math.mat2, shape=2)
    m.from_numpy(np.arange(8, dtype=np.float32).reshape(2, 2, 2))
    x = ti.ndarray(ti.f32, shape=4)
    x.from_numpy(np.array([1, 2, 3, 4], np.float32))
    got = run(v, m, x)
    assert np.allclose(got.to_numpy() if hasattr(got, 'to_numpy') else got,
                       [(0 + 2 + 4) + 10 * (1 + 3 + 5), 2 + 6, 10])
