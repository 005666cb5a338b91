"""Arguments of ti.template() parameters (and a @ti.dataclass method's `self`) are references in
Taichi 1.7.4: the func gets the caller's expression itself, so a field element (`f(x[i])`), a
local vector entry (`f(tmp[1])`), a struct-field element (`f(p[i])`) or a vector-field element
(`f(v[i])`) is read and written through. Other parameters stay copies. Every expected value is
what Taichi 1.7.4 (CPU) prints for the same program."""
import numpy as np

import vkdiff as ti


def test_template_element_assignment_writes_through():
    x = ti.field(ti.i32, shape=4)
    v = ti.Vector.field(2, ti.i32, shape=4)
    P = ti.types.struct(pos=ti.types.vector(2, ti.f32), vel=ti.types.vector(2, ti.f32), m=ti.i32)
    p = P.field(shape=4)
    out = ti.field(ti.i32, shape=4)

    @ti.func
    def set_to(e: ti.template(), val):
        e = val

    @ti.func
    def step(q: ti.template()):
        q.pos += q.vel
        q.m = 7

    @ti.func
    def fill3(w: ti.template()):
        w.fill(3)

    @ti.kernel
    def k():
        for i in range(4):
            set_to(x[i], i + 5)
            set_to(v[i][0], 1)
            tmp = ti.Vector([0, 0])
            set_to(tmp[1], 42)
            out[i] = tmp[1]
            p[i].vel = ti.Vector([1.0, 2.0])
            step(p[i])

    @ti.kernel
    def k2():
        for i in range(4):
            fill3(v[i])

    k()
    assert x.to_numpy().tolist() == [5, 6, 7, 8]
    assert v.to_numpy()[:, 0].tolist() == [1, 1, 1, 1]
    assert out.to_numpy().tolist() == [42] * 4
    assert p.pos.to_numpy().tolist() == [[1.0, 2.0]] * 4
    assert p.m.to_numpy().tolist() == [7] * 4
    k2()
    assert v.to_numpy().tolist() == [[3, 3]] * 4


def test_template_members_entries_and_vector_ops():
    """Member / entry / swizzle assignments and augmented assignments on a template argument
    bound to a struct-field or vector-field element (racehunt t44, t45)."""
    S = ti.types.struct(a=ti.i32, b=ti.types.vector(2, ti.i32))
    s = S.field(shape=4)
    v = ti.Vector.field(2, ti.i32, shape=4)

    @ti.func
    def f1(p: ti.template()):
        p.a = 5

    @ti.func
    def f2(p: ti.template()):
        p.b[1] = 6

    @ti.func
    def f3(w: ti.template()):
        w[0] = 7

    @ti.func
    def f4(w: ti.template()):
        w += ti.Vector([1, 1])

    @ti.func
    def f5(p: ti.template()):
        p.a += 9

    @ti.func
    def f6(w: ti.template()):
        w.fill(3)

    @ti.func
    def f7(w: ti.template()):
        w.y = 4

    @ti.func
    def f8(w: ti.template()):
        w = ti.Vector([7, 8])

    @ti.func
    def f9(w: ti.template()):
        w[1] = 9
        w.x += 100

    expected = {  # Taichi 1.7.4: (s.a, s.b[0], v[0])
        f1: (5, [0, 0], [0, 0]), f2: (0, [0, 6], [0, 0]), f3: (0, [0, 0], [7, 0]),
        f4: (0, [0, 0], [1, 1]), f5: (9, [0, 0], [0, 0]), f6: (0, [0, 0], [3, 3]),
        f7: (0, [0, 0], [0, 4]), f8: (0, [0, 0], [7, 8]), f9: (0, [0, 0], [100, 9]),
    }
    for f, (a, b, w) in expected.items():
        s.a.fill(0)
        s.b.fill(0)
        v.fill(0)
        on_struct = f in (f1, f2, f5)

        @ti.kernel
        def k():
            for i in range(4):
                if ti.static(on_struct):
                    f(s[i])
                else:
                    f(v[i])

        k()
        assert s.a.to_numpy().tolist() == [a] * 4, f.__name__
        assert s.b.to_numpy().tolist() == [b] * 4, f.__name__
        assert v.to_numpy().tolist() == [w] * 4, f.__name__


def test_template_element_reads_see_writes():
    """`e` names x[0]: it is read where it is used, after the func's own write (racehunt t50)."""
    x = ti.field(ti.i32, shape=4)

    @ti.func
    def f(e: ti.template()):
        x[0] = 5
        return e

    @ti.kernel
    def k() -> ti.i32:
        return f(x[0])

    assert k() == 5


def test_template_element_augmented_assignment_is_atomic():
    """`e += 1` and ti.atomic_add(e, 10) on a template argument bound to a field element are
    atomic adds into it, like `x[i] += 1` (1000 iterations contend on 4 elements)."""
    x = ti.field(ti.i32, shape=4)

    @ti.func
    def bump(e: ti.template()):
        e += 1

    @ti.func
    def bump2(e: ti.template()):
        ti.atomic_add(e, 10)

    @ti.kernel
    def k():
        for i in range(1000):
            bump(x[i % 4])
            bump2(x[i % 4])

    k()
    assert x.to_numpy().tolist() == [2750] * 4


def test_template_references_pass_on_and_take_run_time_indices():
    """A template argument passed on to another func's template parameter stays a reference;
    run-time indices into a local vector or a vector-field element, and matrix-field entries,
    are references too. A parameter without ti.template() still gets a copy."""
    x = ti.field(ti.i32, shape=4)
    v = ti.Vector.field(3, ti.i32, shape=4)
    m = ti.Matrix.field(2, 2, ti.f32, shape=2)
    out = ti.field(ti.i32, shape=8)

    @ti.func
    def inc(e: ti.template()):
        e += 1

    @ti.func
    def twice(e: ti.template()):
        inc(e)
        inc(e)

    @ti.func
    def setv(e: ti.template(), val):
        e = val

    @ti.func
    def val_only(e):
        e += 100
        return e

    @ti.kernel
    def k():
        for i in range(4):
            tmp = ti.Vector([0, 0, 0])
            j = i % 3
            twice(tmp[j])
            setv(v[i][j], 9)
            out[i] = tmp[0] * 100 + tmp[1] * 10 + tmp[2]
            a = val_only(x[i])
            out[4 + i] = a
        for i in range(2):
            setv(m[i][0, 1], 2.5)
            twice(m[i][1, 1])
            twice(x[i])

    k()
    assert out.to_numpy().tolist() == [200, 20, 2, 200, 100, 100, 100, 100]
    assert v.to_numpy().tolist() == [[9, 0, 0], [0, 9, 0], [0, 0, 9], [9, 0, 0]]
    assert m.to_numpy().tolist() == [[[0.0, 2.5], [0.0, 2.0]]] * 2
    assert x.to_numpy().tolist() == [2, 2, 0, 0]


def test_non_template_arguments_stay_copies():
    """Without ti.template() (unannotated or a struct type) the func gets its own copy of a field
    element, vector element or local (racehunt t48)."""
    S = ti.types.struct(a=ti.i32, b=ti.types.vector(2, ti.i32))
    s = S.field(shape=4)
    v = ti.Vector.field(2, ti.i32, shape=4)
    x = ti.field(ti.i32, shape=4)

    @ti.func
    def f(p, w, e):
        p.a = 5
        p.b[0] += 1
        w[1] = 3
        w += 1
        e += 2
        e = 9
        return p.a + w[1] + e

    @ti.func
    def g(p: S):
        p.a = 6

    @ti.kernel
    def k() -> ti.i32:
        r = 0
        for i in range(4):
            r += f(s[i], v[i], x[i])
            g(s[i])
            loc = S(a=1, b=ti.Vector([1, 1]))
            lv = ti.Vector([1, 1])
            le = 1
            r += f(loc, lv, le) * 0 + loc.a * 100 + lv[1] * 1000 + le * 10000
        return r

    assert k() == 44472
    assert s.a.to_numpy().tolist() == [0] * 4 and s.b.to_numpy().tolist() == [[0, 0]] * 4
    assert v.to_numpy().tolist() == [[0, 0]] * 4 and x.to_numpy().tolist() == [0] * 4


def test_gradients_through_template_element_arguments():
    """loss = sum(a^2 + a^3) accumulated through a template argument bound to loss[None], with
    a^3 read through one bound to a[i]: d loss / d a = 2a + 3a^2 (Taichi: 130, [5, 16, 33, 56])."""
    a = ti.field(ti.f32, shape=4, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.func
    def acc_sq(dst: ti.template(), s):
        dst += s * s

    @ti.func
    def cube(e: ti.template()):
        return e * e * e

    @ti.kernel
    def f():
        for i in a:
            acc_sq(loss[None], a[i])
            loss[None] += cube(a[i])

    a.from_numpy(np.array([1, 2, 3, 4], np.float32))
    with ti.ad.Tape(loss=loss):
        f()
    assert loss[None] == 130.0
    np.testing.assert_allclose(a.grad.to_numpy(), [5, 16, 33, 56])


def test_dataclass_method_self_is_a_reference():
    """Taichi 1.7.4 passes a struct method's `self` as a template (a func defined in a class
    body): `ps[i].step()` updates ps[i], `q.step()` updates the local q (racehunt d6)."""
    @ti.dataclass
    class Particle:
        pos: ti.math.vec2
        vel: ti.math.vec2

        @ti.func
        def step(self):
            self.pos += self.vel

        @ti.func
        def twice(self):
            self.step()
            self.step()

        @ti.func
        def speed(self):
            return self.vel.norm()

    ps = Particle.field(shape=4)
    out = ti.field(ti.f32, shape=(4, 3))

    @ti.kernel
    def k():
        for i in range(4):
            ps[i].vel = ti.Vector([1.0, 2.0])
            ps[i].step()
            q = Particle(pos=ti.Vector([0.0, 0.0]), vel=ti.Vector([3.0, 4.0]))
            q.step()
            q.twice()
            out[i, 0] = q.pos[0]
            out[i, 1] = ps[i].speed()
            out[i, 2] = q.pos[1]

    k()
    assert ps.pos.to_numpy().tolist() == [[1.0, 2.0]] * 4
    np.testing.assert_allclose(out.to_numpy(), [[9.0, np.sqrt(5.0), 12.0]] * 4, rtol=1e-6)


def test_template_references_by_keyword_ndarray_nested_struct_and_class_func():
    """Keyword template arguments, ndarray elements, a nested struct's method called through a
    template parameter, and a data_oriented class's func: all references (Taichi 1.7.4's
    values, racehunt-style programs e2/e4 run under both)."""
    @ti.dataclass
    class B:
        p: ti.math.vec2
        v: ti.math.vec2
        n: ti.i32

        @ti.func
        def step(self, dt):
            self.p += self.v * dt
            self.n += 1

    P = B.field(shape=3)
    x = ti.field(ti.f32, shape=(2, 3))
    y = ti.field(ti.i32, shape=3)
    out = ti.field(ti.f32, shape=3)

    @ti.func
    def setkw(e: ti.template(), val):
        e = val

    @ti.func
    def move(q: ti.template()):
        q.step(0.5)
        q.step(0.5)

    @ti.func
    def scale(w: ti.template(), s):
        w *= s

    @ti.func
    def readplus(e: ti.template()):
        return e + 1

    @ti.func
    def inc(e: ti.template()):
        e += 1

    @ti.data_oriented
    class C:
        def __init__(self):
            self.z = ti.field(ti.i32, shape=3)

        @ti.func
        def put(self, e: ti.template(), v):
            e = v

        @ti.kernel
        def run(self):
            for i in self.z:
                self.put(self.z[i], i * 7)

    @ti.kernel
    def k():
        for I in ti.grouped(x):
            setkw(val=I[0] * 10 + I[1], e=x[I])
        for i in P:
            P[i].v = ti.Vector([1.0, 2.0])
            move(P[i])
            scale(P[i].p, 3.0)
            out[i] = readplus(x[0, i] * 2)
            ti.atomic_max(y[i], i)
            setkw(y[i], readplus(y[i]))

    @ti.kernel
    def nd(a: ti.types.ndarray(), b: ti.types.ndarray(dtype=ti.math.vec2, ndim=1)):
        for i in range(a.shape[0]):
            setkw(a[i], i * 3)
            inc(a[i])
            setkw(b[i], ti.Vector([i, 2 * i]))
            inc(b[i][1])

    k()
    assert x.to_numpy().tolist() == [[0, 1, 2], [10, 11, 12]]
    assert P.p.to_numpy().tolist() == [[3, 6]] * 3 and P.n.to_numpy().tolist() == [2] * 3
    assert out.to_numpy().tolist() == [1, 3, 5] and y.to_numpy().tolist() == [1, 2, 3]
    c = C()
    c.run()
    assert c.z.to_numpy().tolist() == [0, 7, 14]
    a, b = np.zeros(4, np.int32), np.zeros((4, 2), np.float32)
    nd(a, b)
    assert a.tolist() == [1, 4, 7, 10]
    assert b.tolist() == [[0, 1], [1, 3], [2, 5], [3, 7]]
