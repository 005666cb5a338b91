"""Struct fields (`ti.Struct.field`, `ti.types.struct(...).field`), struct values in kernels and
funcs, and gradients through struct members; checked against numpy."""
import numpy as np
import pytest

import vkdiff as ti

vec2 = ti.math.vec2


def _particles(n, **kw):
    return ti.Struct.field({'pos': vec2, 'vel': ti.types.vector(2, ti.f32), 'mass': ti.f32,
                            'id': ti.i32}, shape=n, **kw)


def test_python_scope_access():
    n = 5
    s = _particles(n)
    assert s.shape == (n,) and s.keys() == ['pos', 'vel', 'mass', 'id']
    assert isinstance(s.pos, ti.Field) and s.pos.shape == (n,) and s.pos.n == 2
    assert s.mass.dtype is ti.f32 and s.id.dtype is ti.i32
    s[1].mass = 2.0
    s[1].pos = [3.0, 4.0]
    s[2] = {'pos': [1.0, 2.0], 'mass': 3.0, 'id': 7}
    s[3] = ti.Struct(mass=5.0, vel=ti.Vector([1.0, -1.0]))
    assert s[1].mass == 2.0 and s[2].id == 7 and s[3].mass == 5.0
    np.testing.assert_allclose(s[1].pos.to_numpy(), [3, 4])
    np.testing.assert_allclose(s[3].vel.to_numpy(), [1, -1])
    d = s.to_numpy()
    assert set(d) == {'pos', 'vel', 'mass', 'id'}
    np.testing.assert_allclose(d['mass'], [0, 2, 3, 5, 0])
    np.testing.assert_allclose(d['pos'], [[0, 0], [3, 4], [1, 2], [0, 0], [0, 0]])
    assert s[2].to_dict()['id'] == 7
    with pytest.raises(AttributeError):
        s[0].nonexistent
    with pytest.raises(IndexError):
        s[n]

    rng = np.random.default_rng(0)
    arrs = {'pos': rng.random((n, 2), dtype=np.float32), 'mass': rng.random(n, dtype=np.float32)}
    s.from_numpy(arrs)
    np.testing.assert_array_equal(s.pos.to_numpy(), arrs['pos'])
    np.testing.assert_array_equal(s.to_numpy()['mass'], arrs['mass'])
    s.fill(0)
    assert all(not a.any() for a in s.to_numpy().values())
    s.fill({'mass': 1.5})
    np.testing.assert_allclose(s.mass.to_numpy(), 1.5)


def test_kernel_member_access_and_struct_for():
    n = 16
    s = _particles(n)
    rng = np.random.default_rng(1)
    pos = rng.random((n, 2), dtype=np.float32)
    vel = rng.random((n, 2), dtype=np.float32)
    mass = rng.random(n, dtype=np.float32) + 1
    s.from_numpy({'pos': pos, 'vel': vel, 'mass': mass})
    total = ti.field(ti.f32, shape=())

    @ti.kernel
    def step(dt: ti.f32):
        for i in s:
            s[i].pos += s[i].vel * dt          # atomic member update
            s[i].mass = s[i].mass * 2.0
            s.id[i] = i * 3
            s[i].vel.x = s.vel[i][0] + 1.0
            s[i].vel[1] *= 0.5
            total[None] += s[i].mass

    step(0.1)
    np.testing.assert_allclose(s.pos.to_numpy(), pos + vel * np.float32(0.1), rtol=1e-6)
    np.testing.assert_allclose(s.mass.to_numpy(), mass * 2, rtol=1e-6)
    np.testing.assert_array_equal(s.id.to_numpy(), np.arange(n) * 3)
    np.testing.assert_allclose(s.vel.to_numpy(), np.stack([vel[:, 0] + 1, vel[:, 1] * 0.5], 1),
                               rtol=1e-6)
    assert total[None] == pytest.approx(float((mass * 2).sum()), rel=1e-5)


def test_whole_element_to_local_and_back():
    n = 8
    s = _particles(n)
    pos = np.arange(2 * n, dtype=np.float32).reshape(n, 2)
    s.pos.from_numpy(pos)
    s.mass.fill(2.0)
    out = ti.field(ti.f32, shape=n)

    @ti.kernel
    def k():
        for i in range(n):
            p = s[i]                            # a local copy of every member
            p.vel = p.pos * p.mass
            p.mass += 1.0
            if i % 2 == 0:
                p.pos.y = -1.0
            out[i] = p.pos.x + p.mass + s[i].mass   # s[i] itself is unchanged so far
            s[i] = p

    k()
    want_pos = pos.copy()
    want_pos[::2, 1] = -1
    np.testing.assert_allclose(s.pos.to_numpy(), want_pos)
    np.testing.assert_allclose(s.vel.to_numpy(), pos * 2)
    np.testing.assert_allclose(s.mass.to_numpy(), 3.0)
    np.testing.assert_allclose(out.to_numpy(), pos[:, 0] + 3 + 2)


def test_struct_type_values_and_funcs():
    Particle = ti.types.struct(pos=vec2, mass=ti.f32)
    n = 6
    s = Particle.field(shape=n)
    s.pos.from_numpy(np.arange(2 * n, dtype=np.float32).reshape(n, 2))
    s.mass.from_numpy(np.arange(n, dtype=np.float32))
    e = ti.field(ti.f32, shape=n)

    @ti.func
    def moved(p: Particle, d):
        p.pos += d                              # a copy: the caller's value is not changed
        return p

    @ti.func
    def heavier(p, k):
        q = ti.Struct(pos=p.pos, mass=p.mass * k)
        if k > 2.5:                             # returns in run-time branches
            return q
        else:
            return Particle(pos=q.pos, mass=0)

    @ti.func
    def energy(p: Particle) -> ti.f32:
        return 0.5 * p.mass * p.pos.norm_sqr()

    @ti.kernel
    def k(kk: ti.f32):
        for i in s:
            a = s[i]
            b = moved(a, ti.Vector([1.0, 1.0]))
            c = heavier(b, kk)
            e[i] = energy(c) + a.pos.x         # a still holds the old position
            s[i] = c

    pos0, m0 = s.pos.to_numpy(), s.mass.to_numpy()
    k(3.0)
    pos1 = pos0 + 1
    np.testing.assert_allclose(s.pos.to_numpy(), pos1)
    np.testing.assert_allclose(s.mass.to_numpy(), m0 * 3)
    np.testing.assert_allclose(e.to_numpy(), 0.5 * m0 * 3 * (pos1 ** 2).sum(1) + pos0[:, 0],
                               rtol=1e-5)
    k(2.0)
    np.testing.assert_allclose(s.mass.to_numpy(), 0)

    v = Particle(pos=[1.0, 2.0], mass=3)        # Python scope: members are cast
    assert isinstance(v.mass, float) and v.mass == 3.0
    np.testing.assert_allclose(v.pos.to_numpy(), [1, 2])
    assert Particle().mass == 0.0
    with pytest.raises(Exception):
        Particle(velocity=1.0)


def test_root_dense_place_nested_and_2d():
    Inner = ti.types.struct(a=ti.f32, b=ti.types.vector(3, ti.i32))
    s = ti.Struct.field({'inner': Inner, 'w': ti.f64})
    ti.root.dense(ti.ij, (4, 3)).place(s)
    assert s.shape == (4, 3) and s.inner.a.shape == (4, 3) and s.w.dtype is ti.f64

    @ti.kernel
    def k():
        for I in ti.grouped(s):
            s[I].inner.a = I[0] * 10.0 + I[1]
            s.inner[I].b = ti.Vector([I[0], I[1], I[0] + I[1]])
        for i, j in s:
            s[i, j].w = s[i, j].inner.a * 0.5

    k()
    ii, jj = np.meshgrid(np.arange(4), np.arange(3), indexing='ij')
    d = s.to_numpy()
    np.testing.assert_allclose(d['inner']['a'], ii * 10 + jj)
    np.testing.assert_array_equal(d['inner']['b'], np.stack([ii, jj, ii + jj], -1))
    np.testing.assert_allclose(d['w'], (ii * 10 + jj) * 0.5)
    assert s[2, 1].inner.a == 21.0
    s[2, 1].inner.a = 5.0
    assert s.inner.a[2, 1] == 5.0


def test_grad_through_struct_members():
    n = 10
    s = ti.Struct.field({'pos': vec2, 'mass': ti.f32}, shape=n, needs_grad=True)
    assert s.pos.grad is not None and s.mass.grad is not None
    assert s.grad.pos is s.pos.grad and s.grad.keys() == ['pos', 'mass']
    loss = ti.field(ti.f32, shape=(), needs_grad=True)
    rng = np.random.default_rng(2)
    pos = rng.random((n, 2)).astype(np.float32)
    mass = (rng.random(n) + 0.5).astype(np.float32)
    s.from_numpy({'pos': pos, 'mass': mass})

    @ti.kernel
    def compute():
        for i in s:
            p = s[i]
            loss[None] += 0.5 * p.mass * p.pos.norm_sqr() + ti.sin(s[i].pos.x)

    with ti.Tape(loss):
        compute()
    want = (0.5 * mass * (pos ** 2).sum(1) + np.sin(pos[:, 0])).sum()
    assert loss[None] == pytest.approx(float(want), rel=1e-5)
    gpos = mass[:, None] * pos
    gpos[:, 0] += np.cos(pos[:, 0])
    np.testing.assert_allclose(s.pos.grad.to_numpy(), gpos, rtol=1e-5)
    np.testing.assert_allclose(s.grad.mass.to_numpy(), 0.5 * (pos ** 2).sum(1), rtol=1e-5)
    np.testing.assert_allclose(s.grad.to_numpy()['pos'], gpos, rtol=1e-5)


def test_grad_through_struct_writes():
    """A kernel writing struct members, then one reading them: the adjoint flows back."""
    n = 4
    State = ti.types.struct(x=ti.f32, v=ti.f32)
    s0 = State.field(shape=n, needs_grad=True)
    s1 = State.field(shape=n, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)
    x = np.array([1, 2, 3, 4], np.float32)
    v = np.array([0.5, -1, 2, 0], np.float32)
    s0.from_numpy({'x': x, 'v': v})

    @ti.kernel
    def step(dt: ti.f32):
        for i in s0:
            s1[i] = State(x=s0[i].x + dt * s0[i].v, v=s0[i].v * 0.9)

    @ti.kernel
    def f():
        for i in s1:
            loss[None] += s1[i].x ** 2 + s1[i].v

    with ti.Tape(loss):
        step(0.1)
        f()
    x1 = x + np.float32(0.1) * v
    np.testing.assert_allclose(s0.x.grad.to_numpy(), 2 * x1, rtol=1e-5)
    np.testing.assert_allclose(s0.v.grad.to_numpy(), 2 * x1 * 0.1 + 0.9, rtol=1e-5)


def test_dataclass_methods():
    @ti.dataclass
    class Sphere:
        center: vec2
        radius: ti.f32

        @ti.func
        def area(self):
            return 3.0 * self.radius * self.radius

    s = Sphere.field(shape=3)
    s.radius.from_numpy(np.array([1, 2, 3], np.float32))
    out = ti.field(ti.f32, shape=3)

    @ti.kernel
    def k():
        for i in s:
            out[i] = s[i].area()
            b = Sphere(radius=2.0)
            out[i] += b.area()

    k()
    np.testing.assert_allclose(out.to_numpy(), 3 * np.array([1, 4, 9]) + 12)


def test_dataclass_method_assigns_through_self():
    """Taichi 1.7.4 passes `self` to a struct method by reference (a ti.func defined in a class
    body takes its first parameter as a ti.template()): assigning to `self.x` changes the field
    element or the local struct it was called on. Values are Taichi 1.7.4 CPU's."""
    @ti.dataclass
    class P:
        a: vec2
        b: ti.f32

        @ti.func
        def shifted(self, d):
            self.a = self.a + d
            self.b *= 2.0
            return self.a[0] + self.a[1] + self.b

        @ti.func
        def bump(self):
            self.b += 1.0

        @ti.func
        def seta(self):
            self.b = 5.0

    f = P.field(shape=2)
    f.b.from_numpy(np.array([1, 3], np.float32))
    out = ti.field(ti.f32, shape=2)

    @ti.kernel
    def k():
        for i in f:
            out[i] = f[i].shifted(ti.Vector([1.0, 2.0]))
            loc = P(a=[1.0, 1.0], b=1.0)
            out[i] += loc.shifted(ti.Vector([0.0, 1.0])) * 100 + loc.b * 1000

    @ti.kernel
    def k2():
        for i in f:
            f[i].bump()

    @ti.kernel
    def k3():
        for i in f:
            f[i].seta()

    k()
    np.testing.assert_allclose(out.to_numpy(), [2505, 2509])
    np.testing.assert_allclose(f.b.to_numpy(), [2, 6])
    np.testing.assert_allclose(f.a.to_numpy(), [[1, 2], [1, 2]])
    k2()
    np.testing.assert_allclose(f.b.to_numpy(), [3, 7])
    k3()
    np.testing.assert_allclose(f.b.to_numpy(), [5, 5])


def test_dataclass_default_values_are_refused():
    with pytest.raises(ti.TaichiSyntaxError, match='Default value in @dataclass is not supported'):
        @ti.dataclass
        class Foo:
            a: int
            b: float = 3.14


def test_struct_errors():
    s = ti.Struct.field({'a': ti.f32}, shape=2)

    @ti.kernel
    def bad():
        for i in s:
            s[i].b = 1.0

    with pytest.raises(ti.CompileError, match="no member 'b'"):
        bad()
    n_fields = len(ti.lang.state.fields)
    with pytest.raises(RuntimeError, match='i32 is not supported for field with `needs_grad=True`'):
        ti.Struct.field({'x': ti.f32, 'k': ti.i32}, shape=2, needs_grad=True)  # as Taichi
    assert len(ti.lang.state.fields) == n_fields  # refused before any member field was made


def test_struct_kernel_argument_of_another_shape_is_refused():
    sphere = ti.types.struct(center=ti.math.vec3, radius=float)
    circle = ti.types.struct(center=ti.math.vec2, radius=float)

    @ti.kernel
    def top(s: sphere) -> ti.f32:
        return s.center[2] + s.radius

    assert top(sphere(center=ti.math.vec3([1, 2, 3]), radius=2.0)) == 5.0
    for bad in (circle(center=ti.math.vec2([1, 2]), radius=2.33), ti.Struct(radius=1.0, center=ti.math.vec3(0)),
                {'center': ti.math.vec3(0), 'radius': 1.0}, 3.0):
        with pytest.raises(ti.TaichiRuntimeTypeError, match='cannot be converted into required type'):
            top(bad)


def test_struct_kernel_argument_is_a_run_time_value():
    """A struct-typed kernel parameter is passed by value as Taichi does (its members as run-time
    arguments): one compiled kernel for every value; another struct type is a
    TaichiRuntimeTypeError."""
    sphere = ti.types.struct(center=ti.math.vec3, radius=ti.f32, tag=ti.i32)
    circle = ti.types.struct(center=ti.math.vec2, radius=ti.f32, tag=ti.i32)

    @ti.kernel
    def volume(s: sphere) -> ti.f32:
        return 4.0 / 3.0 * s.radius ** 3 + s.center[2] * 100 + s.tag * 1000

    assert volume(sphere(center=[0, 0, 1], radius=1.5, tag=2)) == pytest.approx(4.5 + 100 + 2000)
    assert volume(sphere(center=[0, 0, -1], radius=3.0, tag=0)) == pytest.approx(36.0 - 100)
    assert len(volume.instances) == 1
    with pytest.raises(ti.TaichiRuntimeTypeError, match='cannot be converted'):
        volume(circle(center=[1, 2], radius=1.0, tag=0))
    with pytest.raises(ti.TaichiRuntimeTypeError, match='cannot be converted'):
        volume(3.0)


def test_unknown_member_names_the_members():
    """A struct, a struct field and an argument pack say which members they have."""
    st = ti.types.struct(a=ti.i32, b=ti.f32)
    s = st.field(shape=2, name='s')
    pack = ti.types.argpack(a=ti.i32, c=ti.f32)(a=1, c=2.0)
    for obj, what in ((st(a=1, b=2.0), 'struct'), (s, 'struct field s'),
                      (pack, 'argument pack')):
        with pytest.raises(AttributeError) as e:
            obj.z
        assert str(e.value).startswith(f"{what} has no member 'z' (members: a, "), str(e.value)


def test_dataclass_python_methods_on_returned_values():
    """A plain Python method of a @ti.dataclass works on its values in Python scope, including
    a kernel's returned struct (test_struct.py::test_func_of_data_class_as_kernel_return under
    ALL_ARCHS: Taichi gives c.x == 4, c.y == 8; vkdiff raised AttributeError 'add_python')."""
    @ti.dataclass
    class Foo:
        x: ti.f32
        y: ti.f32

        @ti.func
        def add(self, other: ti.template()):
            return Foo(self.x + other.x, self.y + other.y)

        def add_python(self, other):
            return Foo(self.x + other.x, self.y + other.y)

    @ti.kernel
    def foo(x: Foo) -> Foo:
        return x.add(x)

    b = foo(Foo(1, 2))
    assert (b.x, b.y) == (2, 4)
    c = b.add_python(b)
    assert (c.x, c.y) == (4, 8)
    assert Foo(1, 5).add_python(Foo(2, 3)).y == 8
