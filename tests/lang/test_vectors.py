"""ti.Vector / ti.Matrix: construction, arithmetic and linear algebra, in kernels and in Python
scope, on Vector/Matrix fields."""
import numpy as np
import pytest

import vkdiff as ti


def test_python_scope_vectors():
    a = ti.Vector([1.0, 2.0, 3.0])
    b = ti.Vector([4.0, -5.0, 6.0])
    assert a.n == 3 and a[1] == 2.0 and a.x == 1.0 and a.z == 3.0
    np.testing.assert_allclose((a + b).to_numpy(), [5, -3, 9])
    np.testing.assert_allclose((a * b).to_numpy(), [4, -10, 18])
    np.testing.assert_allclose((2 * a - 1).to_numpy(), [1, 3, 5])
    assert a.dot(b) == pytest.approx(12.0)
    np.testing.assert_allclose(a.cross(b).to_numpy(), np.cross([1, 2, 3], [4, -5, 6]))
    assert ti.Vector([1.0, 2.0]).cross(ti.Vector([3.0, 4.0])) == pytest.approx(-2.0)
    assert a.norm() == pytest.approx(np.sqrt(14))
    assert a.norm_sqr() == pytest.approx(14)
    np.testing.assert_allclose(a.normalized().to_numpy(), np.array([1, 2, 3]) / np.sqrt(14))
    assert a.sum() == 6.0
    np.testing.assert_allclose(a.outer_product(b).to_numpy(), np.outer([1, 2, 3], [4, -5, 6]))


def test_python_scope_matrices():
    m = ti.Matrix([[1.0, 2.0], [3.0, 4.0]])
    v = ti.Vector([1.0, -1.0])
    assert m.n == 2 and m.m == 2 and m[1, 0] == 3.0
    np.testing.assert_allclose(m.transpose().to_numpy(), [[1, 3], [2, 4]])
    np.testing.assert_allclose((m @ m).to_numpy(), np.array([[1, 2], [3, 4]]) @ [[1, 2], [3, 4]])
    np.testing.assert_allclose((m @ v).to_numpy(), [-1, -1])
    assert m.determinant() == pytest.approx(-2.0)
    np.testing.assert_allclose(m.inverse().to_numpy(), np.linalg.inv([[1, 2], [3, 4]]))
    np.testing.assert_allclose(ti.Matrix.identity(ti.f32, 3).to_numpy(), np.eye(3))


def test_kernel_vector_arithmetic():
    out = ti.Vector.field(3, ti.f32, shape=8)

    @ti.kernel
    def k():
        a = ti.Vector([1.0, 2.0, 3.0])
        b = ti.Vector([0.5, -1.0, 2.0])
        out[0] = a + b
        out[1] = a - b
        out[2] = a * b
        out[3] = a / b
        out[4] = a * 2 + 1
        out[5] = -a
        c = a
        c += b
        c *= 2
        out[6] = c
        out[7] = ti.max(a, b) + ti.min(a, 1.5)

    k()
    a, b = np.array([1.0, 2, 3]), np.array([0.5, -1, 2])
    want = [a + b, a - b, a * b, a / b, a * 2 + 1, -a, (a + b) * 2,
            np.maximum(a, b) + np.minimum(a, 1.5)]
    np.testing.assert_allclose(out.to_numpy(), want, rtol=1e-6)


def test_kernel_indexing_and_swizzle():
    out = ti.field(ti.f32, shape=8)

    @ti.kernel
    def k():
        v = ti.Vector([1.0, 2.0, 3.0, 4.0])
        v[2] = 10.0
        v.x = -1.0
        out[0] = v[0]
        out[1] = v[2]
        out[2] = v.y + v.w
        m = ti.Matrix([[1.0, 2.0], [3.0, 4.0]])
        m[0, 1] = 7.0
        out[3] = m[0, 1]
        out[4] = m[1, 0] + m[1, 1]
        s = 0.0
        for i in ti.static(range(4)):
            s += v[i]
        out[5] = s
        out[6] = v.sum()
        out[7] = m.trace()

    k()
    np.testing.assert_allclose(out.to_numpy(), [-1, 10, 6, 7, 7, 15, 15, 5])


def test_kernel_linear_algebra():
    out = ti.field(ti.f32, shape=12)
    vo = ti.Vector.field(3, ti.f32, shape=4)
    mo = ti.Matrix.field(3, 3, ti.f32, shape=3)

    @ti.kernel
    def k():
        a = ti.Vector([1.0, 2.0, 3.0])
        b = ti.Vector([4.0, -5.0, 6.0])
        out[0] = a.dot(b)
        out[1] = ti.Vector([1.0, 2.0]).cross(ti.Vector([3.0, 4.0]))
        out[2] = a.norm()
        out[3] = a.norm_sqr()
        out[4] = ti.Vector([0.0, 0.0]).norm(1e-6)
        out[5] = a.norm(1e-2)
        out[6] = a.sum()
        vo[0] = a.cross(b)
        vo[1] = a.normalized()
        m = ti.Matrix([[1.0, 2.0, 0.0], [0.0, 1.0, 3.0], [2.0, 0.0, 1.0]])
        vo[2] = m @ a
        vo[3] = m.transpose() @ b
        mo[0] = m @ m
        mo[1] = a.outer_product(b)
        mo[2] = m.transpose()
        out[7] = m.determinant()

    k()
    a, b = np.array([1.0, 2, 3]), np.array([4.0, -5, 6])
    m = np.array([[1.0, 2, 0], [0, 1, 3], [2, 0, 1]])
    o = out.to_numpy()
    np.testing.assert_allclose(o[:8], [a @ b, -2, np.sqrt(14), 14, np.sqrt(1e-6),
                                       np.sqrt(14 + 1e-2), 6, np.linalg.det(m)], rtol=1e-5)
    np.testing.assert_allclose(vo.to_numpy(), [np.cross(a, b), a / np.sqrt(14), m @ a, m.T @ b],
                               rtol=1e-5)
    np.testing.assert_allclose(mo.to_numpy(), [m @ m, np.outer(a, b), m.T], rtol=1e-6)


def test_vector_fields_in_kernels():
    n = 64
    pos = ti.Vector.field(3, ti.f32, shape=n)
    vel = ti.Vector.field(3, ti.f32, shape=n)
    rot = ti.Matrix.field(3, 3, ti.f32, shape=n)
    dist = ti.field(ti.f32, shape=n)
    rng = np.random.default_rng(0)
    p0 = rng.standard_normal((n, 3)).astype(np.float32)
    v0 = rng.standard_normal((n, 3)).astype(np.float32)
    r0 = rng.standard_normal((n, 3, 3)).astype(np.float32)
    pos.from_numpy(p0)
    vel.from_numpy(v0)
    rot.from_numpy(r0)

    @ti.kernel
    def step(dt: ti.f32):
        for i in pos:
            p = pos[i] + vel[i] * dt
            pos[i] = rot[i] @ p
            dist[i] = (pos[i] - vel[i]).norm()
            vel[i][1] = pos[i].dot(vel[i])

    step(0.1)
    p = np.einsum('nij,nj->ni', r0, p0 + v0 * 0.1)
    np.testing.assert_allclose(pos.to_numpy(), p, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dist.to_numpy(), np.linalg.norm(p - v0, axis=1), rtol=1e-5)
    v = v0.copy()
    v[:, 1] = (p * v0).sum(1)
    np.testing.assert_allclose(vel.to_numpy(), v, rtol=1e-5, atol=1e-5)


def test_vector_field_component_loop_and_list_assign():
    v = ti.Vector.field(2, ti.i32, shape=(3, 3))

    @ti.kernel
    def k():
        for i, j in v:
            v[i, j] = [i, j]
            v[i, j][0] += 10 * j

    k()
    ii, jj = np.indices((3, 3))
    np.testing.assert_array_equal(v.to_numpy(), np.stack([ii + 10 * jj, jj], -1))


def test_vector_typed_construction():
    out = ti.Vector.field(2, ti.i32, shape=())

    @ti.kernel
    def k():
        a = ti.Vector([1.7, -2.7], ti.i32)
        out[None] = a

    k()
    np.testing.assert_array_equal(out.to_numpy(), [1, -2])


@ti.func
def rotate90(v):
    return ti.Vector([-v[1], v[0]])


def test_func_with_vectors():
    v = ti.Vector.field(2, ti.f32, shape=4)

    @ti.kernel
    def k():
        for i in v:
            v[i] = rotate90(ti.Vector([i * 1.0, 1.0]))

    k()
    np.testing.assert_array_equal(v.to_numpy(), [[-1, i] for i in range(4)])


@pytest.fixture
def vector_views():
    """Texel reads off: on lavapipe they would read these read-only fields instead of the vector
    views under test (tests/pipeline/test_texel_reads.py)."""
    from vkdiff.lang import state
    if state.runtime().features.get('texel_reads'):
        ti.reset()
        ti.init(disable_features=['texel_reads'])


def test_vector_field_element_is_read_with_one_vector_load(vector_views):
    """Both components of v[i] come from one vec2 load (a second, read-only vec2 view of the
    binding); the result is the same."""
    v = ti.Vector.field(2, ti.f32, shape=64)
    out = ti.field(ti.f32, shape=64)

    @ti.kernel
    def k():
        for i in v:
            out[i] = v[i][0] * 10 + v[i][1]

    a = np.random.default_rng(0).random((64, 2)).astype(np.float32)
    v.from_numpy(a)
    k()
    np.testing.assert_allclose(out.to_numpy(), a[:, 0] * 10 + a[:, 1], rtol=1e-6)
    spv = k.spirv()
    # a CPU driver with 64-bit integers reads the pair as one 64-bit word (codegen/memory.py)
    assert 'OpTypeRuntimeArray %v2float' in spv or 'OpTypeRuntimeArray %ulong' in spv


@pytest.mark.parametrize('dtype', [ti.f32, ti.i32, ti.u32])
def test_vector_loads_of_pairs_keep_component_order(dtype, vector_views):
    """vec2 and 2x2 elements read through the vector view (64-bit words on a CPU driver) give
    each component its own value, negative integers and the upper words included."""
    v = ti.Vector.field(2, dtype, shape=40)
    m = ti.Matrix.field(2, 2, dtype, shape=40)
    out = ti.field(dtype, shape=(40, 6))

    @ti.kernel
    def k():
        for i in v:
            a, b = v[i], m[i]
            out[i, 0] = a[0]
            out[i, 1] = a[1]
            out[i, 2] = b[0, 0]
            out[i, 3] = b[0, 1]
            out[i, 4] = b[1, 0]
            out[i, 5] = b[1, 1]

    rng = np.random.default_rng(1)
    if dtype == ti.f32:
        av, am = rng.normal(size=(40, 2)), rng.normal(size=(40, 2, 2))
    elif dtype == ti.i32:
        av, am = rng.integers(-2**31, 2**31, (40, 2)), rng.integers(-2**31, 2**31, (40, 2, 2))
    else:
        av, am = rng.integers(0, 2**32, (40, 2)), rng.integers(0, 2**32, (40, 2, 2))
    av, am = av.astype(dtype.np), am.astype(dtype.np)
    v.from_numpy(av)
    m.from_numpy(am)
    k()
    want = np.concatenate([av, am.reshape(40, 4)], axis=1)
    np.testing.assert_array_equal(out.to_numpy(), want)
    from vkdiff.lang import state
    if state.runtime().driver_id == 'mesa-llvmpipe':  # the 64-bit word views are what ran
        spv = k.spirv()
        assert 'OpTypeRuntimeArray %ulong' in spv and 'OpTypeRuntimeArray %v2ulong' in spv


def test_vector_loads_of_a_field_the_loop_also_writes():
    """Reads through the vector view and writes through the scalar one, in one task: a read
    after a write (in the same block, in a branch, in an inner loop) sees the written value."""
    v = ti.Vector.field(2, ti.f32, shape=48)
    out = ti.field(ti.f32, shape=(48, 4))

    @ti.kernel
    def k():
        for i in v:
            a = v[i]
            v[i][1] = a[0] + a[1]
            out[i, 0] = v[i][0] * 10 + v[i][1]
            if i % 3 == 0:
                v[i][0] = -1.0
            out[i, 1] = v[i][0] + v[i][1]
            for _ in range(2):
                v[i] += ti.Vector([1.0, 2.0])
                out[i, 2] += v[i][1]
            out[i, 3] = v[i][0] - v[i][1]

    a = np.random.default_rng(2).normal(size=(48, 2)).astype(np.float32)
    v.from_numpy(a)
    k()
    x, y = a[:, 0].astype(np.float64), (a[:, 0] + a[:, 1]).astype(np.float32).astype(np.float64)
    want = np.zeros((48, 4))
    want[:, 0] = x * 10 + y
    x = np.where(np.arange(48) % 3 == 0, -1.0, x)
    want[:, 1] = x + y
    want[:, 2] = (y + 2) + (y + 4)
    want[:, 3] = (x + 2) - (y + 4)
    np.testing.assert_allclose(out.to_numpy(), want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(v.to_numpy(), np.stack([x + 2, y + 4], 1), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize('dtype', [ti.f32, ti.i32])
def test_component_pairs_stored_together_land_in_their_places(dtype):
    """Stores of components 2k and 2k+1 of one element (one 64-bit store on a CPU driver):
    either order, arithmetic between them, a read of the field between them (not paired),
    vec2 and 2x2 elements; the other elements stay untouched."""
    v = ti.Vector.field(2, dtype, shape=40)
    m = ti.Matrix.field(2, 2, dtype, shape=40)
    w = ti.Vector.field(2, dtype, shape=40)

    @ti.kernel
    def k():
        for i in range(1, 39):
            v[i][1] = i * 3
            v[i][0] = -i
            m[i] = ti.Matrix([[i, i + 1], [2 * i, -i]])
            a = w[i][1]
            w[i][1] = i
            b = w[i + 1][0] + w[i][1] * 0
            w[i][0] = a + b * 0 + 7

    for f, shape in ((v, (40, 2)), (m, (40, 2, 2)), (w, (40, 2))):
        f.from_numpy(np.full(shape, 5, dtype.np))
    k()
    i = np.arange(40)
    inner = (i >= 1) & (i < 39)
    want_v = np.where(inner[:, None], np.stack([-i, 3 * i], 1), 5)
    want_m = np.where(inner[:, None, None],
                      np.stack([np.stack([i, i + 1], 1), np.stack([2 * i, -i], 1)], 1), 5)
    want_w = np.where(inner[:, None], np.stack([np.full(40, 12), i], 1), 5)
    np.testing.assert_array_equal(v.to_numpy(), want_v.astype(dtype.np))
    np.testing.assert_array_equal(m.to_numpy(), want_m.astype(dtype.np))
    np.testing.assert_array_equal(w.to_numpy(), want_w.astype(dtype.np))
    from vkdiff.lang import state
    if state.runtime().driver_id == 'mesa-llvmpipe':
        assert k.spirv().count('OpStore') >= 3  # (the pairs, as 64-bit words)
        assert 'Aliased' in k.spirv()
