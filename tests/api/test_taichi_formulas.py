"""Vector/matrix helpers and ti.math follow Taichi 1.7.4's definitions operation for operation
(issue 10 items 2, 4): python/taichi/lang/matrix_ops.py and python/taichi/math/mathimpl.py,
transcribed below in numpy (f64) as the reference. Checked bit for bit against taichi==1.7.4
(x64, fast_math=False) on 64 random inputs each when written; here in f64 to 1e-14."""
import math

import numpy as np
import pytest

import vkdiff as ti
from vkdiff import math as tm

N = 32


@pytest.fixture
def data():
    # f64 kernels with default_fp=f64: float literals (eps, 0.5, ...) are f64 constants, as the
    # f64 references here assume (under default_fp=f32 Taichi rounds them to f32)
    ti.init(default_fp=ti.f64)
    rng = np.random.default_rng(7)
    s = rng.normal(size=N) * 2
    s[:5] = [0.0, -0.0, np.nan, 1.0, -3.0]
    return dict(a=rng.normal(size=(N, 3)), b=rng.normal(size=(N, 3)), s=s,
                m3=rng.normal(size=(N, 3, 3)), m4=rng.normal(size=(N, 4, 4)))


def _run(data, body, width):
    """Evaluate `body(v, w, x, m3, m4)` (returning `width` scalars) in an f64 kernel."""
    a = ti.Vector.field(3, ti.f64, shape=N)
    b = ti.Vector.field(3, ti.f64, shape=N)
    s = ti.field(ti.f64, shape=N)
    m3 = ti.Matrix.field(3, 3, ti.f64, shape=N)
    m4 = ti.Matrix.field(4, 4, ti.f64, shape=N)
    out = ti.Vector.field(width, ti.f64, shape=N)
    for f, k in ((a, 'a'), (b, 'b'), (s, 's'), (m3, 'm3'), (m4, 'm4')):
        f.from_numpy(data[k])

    @ti.kernel
    def k():
        for i in range(N):
            out[i] = ti.Vector(body(a[i], b[i], s[i], m3[i], m4[i]))

    k()
    return out.to_numpy()


def _norm(v):
    return np.sqrt(np.sum(v * v, axis=-1))


def test_normalized_is_taichis_formula(data):
    """v.normalized(eps) = (1 / (|v| + eps)) * v (was v * rsqrt(|v|^2 + eps): off by about
    eps / (2 |v|^2))."""
    got = _run(data, lambda v, w, x, m3, m4: [*v.normalized(1e-3), *tm.normalize(v)], 6)
    v = data['a']
    want = (1 / (_norm(v) + 1e-3))[:, None] * v
    np.testing.assert_allclose(got[:, :3], want, rtol=1e-14, atol=0)
    np.testing.assert_allclose(got[:, 3:], v / _norm(v)[:, None], rtol=1e-14, atol=0)
    old = v / np.sqrt(np.sum(v * v, axis=-1) + 1e-3)[:, None]
    assert np.max(np.abs(old - want) / np.abs(want)) > 1e-5  # the test tells the two apart
    # Python scope: exactly the same operations on Python floats
    p = ti.Vector([3.0, 4.0]).normalized(0.5)
    assert p.to_list() == [1 / (5.0 + 0.5) * 3.0, 1 / (5.0 + 0.5) * 4.0]


def test_scalar_helpers_are_taichis_formulas(data):
    got = _run(data, lambda v, w, x, m3, m4: [
        tm.sign(x), tm.step(0.1, x), tm.clamp(x, -0.5, 0.5), tm.mix(x, 2.0, 0.3),
        tm.smoothstep(-1.0, 1.0, x), tm.fract(x), tm.mod(x * 5, 1.3), tm.log2(abs(x) + 1.0)], 8)
    x = data['s']
    with np.errstate(invalid='ignore'):
        t = np.clip((x + 1.0) / 2.0, 0.0, 1.0)
        want = [(x >= 0.0).astype(float) - (x <= 0.0).astype(float),  # sign(nan) = 0
                (x >= 0.1).astype(float),                               # step(edge, nan) = 0
                np.minimum(0.5, np.maximum(-0.5, x)), x * (1.0 - 0.3) + 2.0 * 0.3,
                t * t * (3.0 - 2.0 * t), x - np.floor(x), x * 5 - 1.3 * np.floor(x * 5 / 1.3),
                np.log(np.abs(x) + 1.0) / math.log(2.0)]
    for j, w in enumerate(want):
        ok = ~np.isnan(x) if j >= 2 else slice(None)
        np.testing.assert_allclose(got[ok, j], w[ok], rtol=1e-14, atol=1e-300, err_msg=str(j))
    assert got[2, 0] == 0.0 and got[2, 1] == 0.0  # NaN: sign 0, step 0 (as Taichi)
    assert tm.step(0.0, float('nan')) == 0.0 and tm.sign(float('nan')) == 0.0
    assert tm.log2(10.0) == math.log(10.0) / math.log(2.0)


def test_vector_helpers_are_taichis_formulas(data):
    got = _run(data, lambda v, w, x, m3, m4: [
        *tm.reflect(v, w), *tm.refract(v.normalized(), w.normalized(), 1.5),
        tm.distance(v, w), v.norm_inv(1e-3), *v.cross(w), v.dot(w), tm.length(v)], 13)
    v, w = data['a'], data['b']
    k = np.sum(v * w, -1)[:, None]
    np.testing.assert_allclose(got[:, 0:3], v - 2.0 * k * w, rtol=1e-13, atol=1e-15)
    vn, wn = v / _norm(v)[:, None], w / _norm(w)[:, None]
    dxn = np.sum(vn * wn, -1)[:, None]
    kk = 1.0 - 1.5 * 1.5 * (1.0 - dxn * dxn)
    with np.errstate(invalid='ignore'):
        r = np.where(kk >= 0, 1.5 * vn - (1.5 * dxn + np.sqrt(kk)) * wn, 0.0)
    assert (kk < 0).any() and (kk >= 0).any()  # both branches are tested
    np.testing.assert_allclose(got[:, 3:6], r, rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(got[:, 6], _norm(v - w), rtol=1e-14)
    np.testing.assert_allclose(got[:, 7], 1 / np.sqrt(np.sum(v * v, -1) + 1e-3), rtol=1e-14)
    np.testing.assert_allclose(got[:, 8:11], np.cross(v, w), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(got[:, 11], np.sum(v * w, -1), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(got[:, 12], _norm(v), rtol=1e-14)


def _det3(m):
    return (m[..., 0, 0] * (m[..., 1, 1] * m[..., 2, 2] - m[..., 2, 1] * m[..., 1, 2])
            - m[..., 1, 0] * (m[..., 0, 1] * m[..., 2, 2] - m[..., 2, 1] * m[..., 0, 2])
            + m[..., 2, 0] * (m[..., 0, 1] * m[..., 1, 2] - m[..., 1, 1] * m[..., 0, 2]))


def test_determinant_and_inverse_up_to_4x4(data):
    """Taichi supports 1x1 to 4x4 (vkdiff had up to 3x3), with Taichi's cofactor formulas."""
    got = _run(data, lambda v, w, x, m3, m4: [
        m3.determinant(), m4.determinant(), *m4.inverse().entries, *m3.inverse().entries], 27)
    m3, m4 = data['m3'], data['m4']
    np.testing.assert_allclose(got[:, 0], _det3(m3), rtol=1e-14)
    np.testing.assert_allclose(got[:, 1], np.linalg.det(m4), rtol=1e-9)
    np.testing.assert_allclose(got[:, 2:18].reshape(N, 4, 4), np.linalg.inv(m4), rtol=1e-8,
                               atol=1e-10)
    np.testing.assert_allclose(got[:, 18:].reshape(N, 3, 3), np.linalg.inv(m3), rtol=1e-9,
                               atol=1e-11)
    # Python scope: Taichi's 3x3 formula exactly, and 1x1 / 4x4
    A = [[2.0, 1.0, 0.5], [0.25, 3.0, 1.0], [1.0, 0.5, 4.0]]
    assert ti.Matrix(A).determinant() == _det3(np.array(A))
    assert ti.Matrix([[4.0]]).inverse().to_list() == [[0.25]]
    B = np.array(A + [[0.0, 0.0, 0.0]])
    B = np.hstack([B, [[0.0], [0.0], [0.0], [2.0]]])
    np.testing.assert_allclose(ti.Matrix(B.tolist()).inverse().to_numpy(), np.linalg.inv(B),
                               rtol=1e-14, atol=1e-15)


def test_matrix_shape_errors_as_taichi():
    with pytest.raises(ti.TaichiCompilationError, match=r'expected a square matrix, got shape \(3, 2\)'):
        ti.Matrix([[0.1, 3.0], [5.0, 7.0], [1.0, 2.0]]).trace()
    with pytest.raises(ti.TaichiCompilationError, match='cannot apply to a vector'):
        ti.Vector([1, 2]).transpose()
    with pytest.raises(ti.TaichiCompilationError, match='only dimension < 5'):
        ti.Matrix([[1.0] * 5] * 5).determinant()

    @ti.kernel
    def k() -> ti.f32:
        x = ti.Vector([1.0, 2.0])
        return (x @ x.transpose())[0, 0]

    with pytest.raises(ti.TaichiCompilationError, match='outer_product'):
        k()


def test_any_all_both_scopes():
    assert ti.Vector([0, 0, 1]).any() and not ti.Vector([0, 0, 1]).all()
    assert ti.Vector([1, 2]).all() and not ti.Vector([0, 0]).any()
    out = ti.field(ti.i32, shape=4)

    @ti.kernel
    def k(a: ti.f32, b: ti.f32):
        v = ti.Vector([a, b])
        out[0] = 1 if v.any() else 0
        out[1] = 1 if v.all() else 0

    k(0.0, 2.0)
    assert out.to_numpy()[:2].tolist() == [1, 0]
    k(3.0, 2.0)
    assert out.to_numpy()[:2].tolist() == [1, 1]


def test_select_with_vector_condition_both_scopes():
    a, b = ti.Vector([1.0, 2.0]), ti.Vector([-1.0, -2.0])
    assert ti.select(ti.Vector([1, 0]), a, b).to_list() == [1.0, -2.0]
    assert ti.select(ti.Vector([0, 1]), a, 5.0).to_list() == [5.0, 2.0]
    out = ti.Vector.field(3, ti.f32, shape=())

    @ti.kernel
    def k(c0: ti.i32, c1: ti.i32):
        out[None] = ti.select(ti.Vector([c0, c1, 1]), ti.Vector([1.0, 2.0, 3.0]), -1.0)

    k(0, 1)
    assert out[None].to_list() == [-1.0, 2.0, 3.0]
    k(1, 0)
    assert out[None].to_list() == [1.0, -1.0, 3.0]


def test_static_index_errors_in_kernels_are_located_index_errors():
    @ti.kernel
    def two_indices():
        vec = ti.Vector([1, 2, 3, 4])
        print(vec[0, 0])

    @ti.kernel
    def out_of_range():
        vec = ti.Vector([1, 2, 3, 4])
        print(vec[5])

    with pytest.raises(ti.TaichiIndexError, match='Expected 1 indices, got 2') as e:
        two_indices()
    assert 'print(vec[0, 0])' in str(e.value) and isinstance(e.value, IndexError)
    with pytest.raises(ti.TaichiIndexError, match='out of range') as e:
        out_of_range()
    assert 'print(vec[5])' in str(e.value)
