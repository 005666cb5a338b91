"""`ti.types.argpack`: a kernel parameter grouping scalars, vectors, structs, ndarrays and nested
argpacks, passed by value at each launch (Taichi 1.7.4 semantics)."""
import numpy as np
import pytest

import vkdiff as ti


def test_scalar_members_are_runtime_values():
    pack_type = ti.types.argpack(a=ti.i32, b=bool, c=ti.f32)

    @ti.kernel
    def f(p: pack_type) -> ti.f32:
        r = 0.0
        if p.b:
            r = p.a + p.c
        else:
            r = p.a * p.c
        return r

    assert f(pack_type(a=3, b=False, c=2.5)) == pytest.approx(7.5)
    assert f(pack_type(a=3, b=True, c=2.5)) == pytest.approx(5.5)
    assert f(pack_type(a=2, b=True, c=0.25)) == pytest.approx(2.25)
    assert f(pack_type(a=-4, b=False, c=0.25)) == pytest.approx(-1.0)
    assert len(f.instances) == 1  # one compiled kernel for every value


def test_python_scope_casts_and_access():
    pack_type = ti.types.argpack(a=ti.i32, c=ti.f32, v=ti.math.vec2)
    p = pack_type(a=2.7, c=3, v=[1, 2])
    assert p.a == 2 and isinstance(p.a, int)
    assert p.c == 3.0 and isinstance(p.c, float)
    assert p['v'][1] == 2.0
    assert p.keys == ['a', 'c', 'v']
    assert p.to_dict() == {'a': 2, 'c': 3.0, 'v': [1.0, 2.0]}
    assert str(pack_type) == '<ti.ArgPackType a=i32, c=f32, v=' + str(ti.math.vec2) + '>'


def test_struct_vector_and_nested_members():
    st = ti.types.struct(a=ti.i32, c=ti.f32)
    inner_t = ti.types.argpack(x=ti.i32, y=ti.f32)
    pack_type = ti.types.argpack(d=ti.f32, s=st, v=ti.types.vector(3, ti.f32), inner=inner_t)

    @ti.kernel
    def f(p: pack_type) -> ti.f32:
        return p.d + p.s.a * 10 + p.s.c * 100 + p.v[2] * 1000 + p.inner.x * 1e4 + p.inner.y

    p = pack_type(d=0.5, s=st(a=2, c=3.0), v=[0, 0, 4], inner=inner_t(x=1, y=0.25))
    assert f(p) == pytest.approx(0.5 + 20 + 300 + 4000 + 1e4 + 0.25)
    q = pack_type(d=1.0, s=st(a=1, c=0.0), v=[0, 0, 0], inner=inner_t(x=0, y=0.0))
    assert f(q) == pytest.approx(11.0)


def test_ndarray_members_read_and_written():
    a = ti.ndarray(dtype=ti.math.vec3, shape=(2, 3))
    a.from_numpy(np.arange(18, dtype=np.float32).reshape(2, 3, 3))
    b = ti.ndarray(dtype=ti.f32, shape=4)
    pt = ti.types.argpack(arr=ti.types.ndarray(dtype=ti.math.vec3, ndim=2), k=ti.i32,
                          out=ti.types.ndarray(dtype=ti.f32, ndim=1))

    @ti.kernel
    def f(p: pt) -> ti.math.vec3:
        for i in range(p.out.shape[0]):
            p.out[i] = p.arr[1, 2][i % 3] * p.k
        return p.arr[0, 1]

    r = f(pt(arr=a, k=2, out=b))
    np.testing.assert_allclose(r.to_numpy(), [3, 4, 5])
    np.testing.assert_allclose(b.to_numpy(), [30, 32, 34, 30])


def test_two_packs_and_plain_arguments():
    p1 = ti.types.argpack(a=ti.i32, c=ti.f32)
    p2 = ti.types.argpack(a=ti.types.ndarray(dtype=ti.f32, ndim=1))
    arr = ti.ndarray(ti.f32, shape=3)
    arr.from_numpy(np.array([5, 6, 7], np.float32))

    @ti.kernel
    def f(x: ti.f32, q1: p1, q2: p2, y: ti.i32) -> ti.f32:
        return x + q1.a * q1.c + q2.a[y]

    assert f(0.5, p1(a=2, c=1.5), p2(a=arr), 2) == pytest.approx(0.5 + 3 + 7)


def test_argpack_errors():
    pack_type = ti.types.argpack(a=ti.i32, b=bool)
    assert str(pack_type) == '<ti.ArgPackType a=i32, b=u1>'
    with pytest.raises(ValueError, match='Invalid data type <ti.ArgPackType a=i32, b=u1>'):
        ti.types.struct(element=pack_type)

    @ti.kernel
    def f(p: pack_type):
        pass

    with pytest.raises(ti.TaichiRuntimeTypeError, match='must be a argument pack'):
        f(3)

    @ti.kernel
    def g(p: pack_type) -> pack_type:
        return p

    with pytest.raises(ti.TaichiSyntaxError):
        g(pack_type(a=1, b=True))
