"""Taichi-style programs, written as a Taichi user would, checked against numpy references."""
import numpy as np
import pytest

import vkdiff as ti


# ---------------------------------------------------------------- ti.loop_config
def test_loop_config_serialize_prefix_sum():
    B = 16
    data = ti.field(ti.i32, shape=1000)
    hist = ti.field(ti.i32, shape=B)
    pre = ti.field(ti.i32, shape=B + 1)

    @ti.kernel
    def histogram():
        for i in data:
            ti.atomic_add(hist[data[i] % B], 1)

    @ti.kernel
    def prefix():
        pre[0] = 0
        ti.loop_config(serialize=True)
        for i in range(B):  # each iteration reads the previous one's result: must run in order
            pre[i + 1] = pre[i] + hist[i]

    d = np.random.default_rng(1).integers(0, 1000, 1000).astype(np.int32)
    data.from_numpy(d)
    histogram()
    prefix()
    h = np.bincount(d % B, minlength=B)
    np.testing.assert_array_equal(hist.to_numpy(), h)
    np.testing.assert_array_equal(pre.to_numpy(), np.concatenate([[0], np.cumsum(h)]))


def test_loop_config_serialize_break_and_grad():
    x = ti.field(ti.f32, shape=8, needs_grad=True)
    c = ti.field(ti.f32, shape=9, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def cumsum():
        ti.loop_config(serialize=True)
        for i in range(8):
            c[i + 1] = c[i] + x[i] * x[i]

    @ti.kernel
    def total():
        for i in c:
            loss[None] += c[i]

    @ti.kernel
    def first_square_above(t: ti.i32) -> ti.i32:
        r = -1
        ti.loop_config(serialize=True, block_dim=64)
        for i in range(100):
            if i * i > t:
                r = i
                break
        return r

    xs = np.arange(8, dtype=np.float32)
    x.from_numpy(xs)
    with ti.Tape(loss):
        cumsum()
        total()
    np.testing.assert_allclose(c.to_numpy(), np.concatenate([[0], np.cumsum(xs ** 2)]))
    np.testing.assert_allclose(x.grad.to_numpy(), 2 * xs * (8 - np.arange(8)))
    assert first_square_above(50) == 8


# ---------------------------------------------------------------- @ti.data_oriented classes
def test_data_oriented_class_kernels_funcs_and_grad():
    @ti.data_oriented
    class Sim:
        def __init__(self, n):
            self.n = n
            self.x = ti.field(ti.f32, shape=n, needs_grad=True)
            self.loss = ti.field(ti.f32, shape=(), needs_grad=True)

        @ti.func
        def weight(self, i):
            return ti.cast(i, ti.f32) * self.n

        @ti.kernel
        def step(self, a: ti.f32):
            for i in self.x:
                self.x[i] += a * self.weight(i)

        @ti.kernel
        def total(self) -> ti.f32:
            s = 0.0
            for i in range(self.n):
                s += self.x[i]
            return s

        @ti.kernel
        def compute_loss(self):
            for i in self.x:
                self.loss[None] += self.x[i] ** 2

    a, b = Sim(8), Sim(4)  # two instances: one compiled kernel each
    a.step(2.0)
    a.step(1.0)
    b.step(1.0)
    want = 3.0 * 8 * np.arange(8)
    np.testing.assert_allclose(a.x.to_numpy(), want)
    np.testing.assert_allclose(b.x.to_numpy(), 4.0 * np.arange(4))
    assert a.total() == want.sum()
    with ti.Tape(a.loss):
        a.compute_loss()
    np.testing.assert_allclose(a.x.grad.to_numpy(), 2 * want)
    a.x.grad.fill(0)
    a.loss.grad[None] = 1
    a.compute_loss.grad()
    np.testing.assert_allclose(a.x.grad.to_numpy(), 2 * want)


# ---------------------------------------------------------------- Julia set (Taichi's hello world)
def test_julia_set_any_arch_name():
    for arch in (ti.cuda, ti.metal, ti.opengl, ti.x64, ti.cpu, ti.gpu):
        assert arch == ti.vulkan
    ti.init(arch=ti.cuda)
    n = 32
    pixels = ti.field(dtype=float, shape=(n * 2, n))

    @ti.func
    def complex_sqr(z):
        return ti.Vector([z[0] ** 2 - z[1] ** 2, z[1] * z[0] * 2])

    @ti.kernel
    def paint(t: float):
        for i, j in pixels:
            c = ti.Vector([-0.8, ti.cos(t) * 0.2])
            z = ti.Vector([i / n - 1, j / n - 0.5]) * 2
            iterations = 0
            while z.norm() < 20 and iterations < 50:
                z = complex_sqr(z) + c
                iterations += 1
            pixels[i, j] = 1 - iterations * 0.02

    paint(0.03)
    c = complex(-0.8, np.cos(np.float32(0.03)) * 0.2)
    ii, jj = np.meshgrid(np.arange(2 * n), np.arange(n), indexing='ij')
    z = ((ii / n - 1) * 2 + 1j * (jj / n - 0.5) * 2).astype(np.complex64)
    it = np.zeros(z.shape, np.int32)
    for _ in range(50):
        alive = np.abs(z) < 20
        z = np.where(alive, z * z + np.complex64(c), z)
        it += alive
    got = pixels.to_numpy()
    # iteration counts may differ where |z| lands within rounding of 20: allow a few pixels
    assert (np.abs(got - (1 - it * 0.02)) > 1e-5).sum() <= 2


# ---------------------------------------------------------------- kernel arguments
def test_kernel_default_and_keyword_arguments():
    v = ti.Vector.field(3, ti.f32, shape=(2, 3))

    @ti.kernel
    def fill(scale: ti.f32 = 2.0, offset: ti.i32 = 0):
        for I in ti.grouped(v):
            v[I] = ti.Vector([I[0], I[1], I[0] * I[1]]) * scale + offset

    ii, jj = np.meshgrid(np.arange(2), np.arange(3), indexing='ij')
    base = np.stack([ii, jj, ii * jj], -1).astype(np.float32)
    fill()
    np.testing.assert_allclose(v.to_numpy(), base * 2)
    fill(offset=1)
    np.testing.assert_allclose(v.to_numpy(), base * 2 + 1)
    fill(3.0)
    np.testing.assert_allclose(v.to_numpy(), base * 3)
    with pytest.raises(ti.VkdiffError, match="Unexpected argument 'bogus'"):
        fill(bogus=1)


# ---------------------------------------------------------------- n-body with funcs, ti.static
def test_nbody_vector_fields_funcs_static_dims():
    N, dim, dt = 32, 2, 1e-3
    x = ti.Vector.field(dim, dtype=ti.f32, shape=N)
    v = ti.Vector.field(dim, dtype=ti.f32, shape=N)
    f = ti.Vector.field(dim, dtype=ti.f32, shape=N)
    m = ti.field(ti.f32, shape=N)

    @ti.func
    def pair_force(xi, xj):
        r = xj - xi
        d2 = r.dot(r) + 1e-2
        return r / (d2 * ti.sqrt(d2))

    @ti.kernel
    def compute_force():
        for i in range(N):
            acc = ti.Vector([0.0, 0.0])
            for j in range(N):
                if i != j:
                    acc += m[j] * pair_force(x[i], x[j])
            f[i] = acc

    @ti.kernel
    def step():
        for i in x:
            for d in ti.static(range(dim)):
                v[i][d] += dt * f[i][d]
            x[i] += dt * v[i]

    @ti.kernel
    def kinetic() -> ti.f32:
        e = 0.0
        for i in x:
            e += 0.5 * m[i] * v[i].norm_sqr()
        return e

    rng = np.random.default_rng(0)
    X = rng.random((N, dim)).astype(np.float32)
    M = (rng.random(N) + 0.5).astype(np.float32)
    x.from_numpy(X)
    m.from_numpy(M)
    v.fill(0)
    X, V = X.astype(np.float64), np.zeros((N, dim))
    for _ in range(10):
        compute_force()
        step()
        r = X[None, :, :] - X[:, None, :]
        d2 = (r ** 2).sum(-1) + 1e-2
        F = M[None, :, None] * r / (d2 * np.sqrt(d2))[..., None]
        F[np.arange(N), np.arange(N)] = 0
        V += dt * F.sum(1)
        X += dt * V
    np.testing.assert_allclose(x.to_numpy(), X, atol=1e-5)
    np.testing.assert_allclose(v.to_numpy(), V, atol=1e-4)
    np.testing.assert_allclose(kinetic(), 0.5 * (M * (V ** 2).sum(1)).sum(), rtol=1e-5)


# ---------------------------------------------------------------- heat equation stencil
def test_heat_equation_ndrange_stencil():
    n, alpha = 32, 0.2
    T = ti.field(ti.f32, shape=(n, n))
    Tn = ti.field(ti.f32, shape=(n, n))

    @ti.kernel
    def init():
        for i, j in T:
            T[i, j] = 0.0
            if i == n // 2 and j == n // 2:
                T[i, j] = 100.0
        for i, j in Tn:
            Tn[i, j] = T[i, j]

    @ti.kernel
    def diffuse():
        for i, j in ti.ndrange((1, n - 1), (1, n - 1)):
            Tn[i, j] = T[i, j] + alpha * (T[i + 1, j] + T[i - 1, j] + T[i, j + 1] + T[i, j - 1]
                                          - 4 * T[i, j])

    @ti.kernel
    def copy_back():
        for I in ti.grouped(Tn):
            T[I] = Tn[I]

    init()
    A = np.zeros((n, n)); A[n // 2, n // 2] = 100
    for _ in range(20):
        diffuse()
        copy_back()
        B = A.copy()
        B[1:-1, 1:-1] += alpha * (A[2:, 1:-1] + A[:-2, 1:-1] + A[1:-1, 2:] + A[1:-1, :-2]
                                  - 4 * A[1:-1, 1:-1])
        A = B
    np.testing.assert_allclose(T.to_numpy(), A, atol=1e-4)
    assert abs(T.to_numpy().sum() - 100) < 1e-3


# ---------------------------------------------------------------- matrices
def test_matrix_field_linear_algebra():
    N = 8
    A = ti.Matrix.field(3, 3, dtype=ti.f32, shape=N)
    B = ti.Matrix.field(3, 3, dtype=ti.f32, shape=N)
    C = ti.Matrix.field(3, 3, dtype=ti.f32, shape=N)
    Ainv = ti.Matrix.field(3, 3, dtype=ti.f32, shape=N)
    det = ti.field(ti.f32, shape=N)
    v = ti.Vector.field(3, dtype=ti.f32, shape=N)
    w = ti.Vector.field(3, dtype=ti.f32, shape=N)
    tr = ti.field(ti.f32, shape=N)
    D = ti.Matrix.field(2, 2, dtype=ti.f64, shape=())

    @ti.kernel
    def compute():
        for i in A:
            M = A[i]
            C[i] = M @ B[i].transpose() + ti.Matrix.identity(ti.f32, 3) * 2.0
            Ainv[i] = M.inverse()
            det[i] = M.determinant()
            w[i] = M @ v[i]
            tr[i] = M.trace() + v[i].cross(w[i]).norm()
        m = ti.Matrix([[1.0, 2.0], [3.0, 4.0]])
        D[None] = m.inverse() + m.transpose() @ m

    rng = np.random.default_rng(0)
    a = rng.random((N, 3, 3)).astype(np.float32) + 2 * np.eye(3, dtype=np.float32)
    b = rng.random((N, 3, 3)).astype(np.float32)
    vv = rng.random((N, 3)).astype(np.float32)
    A.from_numpy(a); B.from_numpy(b); v.from_numpy(vv)
    compute()
    np.testing.assert_allclose(C.to_numpy(), a @ b.transpose(0, 2, 1) + 2 * np.eye(3), atol=1e-5)
    np.testing.assert_allclose(Ainv.to_numpy(), np.linalg.inv(a), atol=1e-5)
    np.testing.assert_allclose(det.to_numpy(), np.linalg.det(a), rtol=1e-5)
    ww = np.einsum('nij,nj->ni', a, vv)
    np.testing.assert_allclose(w.to_numpy(), ww, rtol=1e-6)
    np.testing.assert_allclose(tr.to_numpy(), np.trace(a, axis1=1, axis2=2)
                               + np.linalg.norm(np.cross(vv, ww), axis=1), rtol=1e-5)
    m = np.array([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_allclose(D.to_numpy(), np.linalg.inv(m) + m.T @ m, rtol=1e-12)


# ---------------------------------------------------------------- templates, dense layouts
def test_template_kernels_on_dense_placed_fields():
    n, m = 6, 5
    a = ti.field(ti.f32)
    b = ti.field(ti.i32)
    ti.root.dense(ti.ij, (n, m)).place(a, b)

    @ti.kernel
    def fill(x: ti.template(), val: ti.template()):
        for I in ti.grouped(x):
            x[I] = val + I[0] * 10 + I[1]

    @ti.kernel
    def total(x: ti.template()) -> ti.f32:
        s = 0.0
        for i, j in x:
            s += x[i, j]
        return s

    fill(a, 1.5)
    fill(b, 3)
    I, J = np.meshgrid(np.arange(n), np.arange(m), indexing='ij')
    assert a.shape == b.shape == (n, m)
    np.testing.assert_array_equal(a.to_numpy(), 1.5 + I * 10 + J)
    np.testing.assert_array_equal(b.to_numpy(), 3 + I * 10 + J)
    assert total(a) == (1.5 + I * 10 + J).sum() and total(b) == (3 + I * 10 + J).sum()


# ---------------------------------------------------------------- Monte Carlo, integers
def test_monte_carlo_pi():
    @ti.kernel
    def mc_pi(N: ti.i32) -> ti.f32:
        inside = 0
        for i in range(N):
            x = ti.random()
            y = ti.random(ti.f32)
            if x * x + y * y < 1.0:
                inside += 1
        return 4.0 * inside / N

    assert abs(mc_pi(200000) - np.pi) < 0.02


def test_integer_arithmetic_and_wide_types():
    @ti.kernel
    def ints(x: ti.i32, y: ti.i32) -> ti.i32:
        return (x // y) * 1000000 + (x % y) * 10000 + ((x & 0xff) ^ (y | 3)) + (x << 2) - (x >> 1)

    for x, y in [(17, 5), (-17, 5), (17, -5), (-17, -5), (12345, 7)]:
        assert ints(x, y) == (x // y) * 1000000 + (x % y) * 10000 + ((x & 0xff) ^ (y | 3)) \
            + (x << 2) - (x >> 1)

    big = ti.field(ti.i64, shape=4)
    u = ti.field(ti.u32, shape=4)

    @ti.kernel
    def wide():
        for i in big:
            big[i] = ti.i64(1) << (31 + i)
            u[i] = ti.u32(0xffffffff) - ti.u32(i)
            u[i] = u[i] >> 1

    @ti.kernel
    def ret64(x: ti.i64) -> ti.i64:
        return x * 3

    @ti.kernel
    def retu(x: ti.u32) -> ti.u32:
        return x + ti.u32(1)

    wide()
    np.testing.assert_array_equal(big.to_numpy(), [1 << (31 + i) for i in range(4)])
    np.testing.assert_array_equal(u.to_numpy(), [(0xffffffff - i) >> 1 for i in range(4)])
    assert ret64(2 ** 40) == 3 * 2 ** 40
    assert retu(0xfffffffe) == 0xffffffff


def test_mixed_arithmetic_funcs_and_atomics():
    cnt = ti.field(ti.i32, shape=())
    r = ti.field(ti.f32, shape=16)
    ri = ti.field(ti.i32, shape=16)
    mn = ti.field(ti.i32, shape=())
    mx = ti.field(ti.f32, shape=())

    @ti.func
    def sgn(x):
        if x > 0:
            return 1
        elif x < 0:
            return -1
        else:
            return 0

    @ti.kernel
    def k():
        for i in range(cnt[None]):  # run-time bound read from a field
            r[i] = i / 4 + ti.floor(i * 0.7) + (i - 7.5) // 2 + (i - 7.5) % 3
            ri[i] = (i - 8) // 3 * 100 + (i - 8) % 3 * 10 + ti.abs(i - 8) + (i - 8) ** 2 \
                + min(i, 5) + 2 * sgn(i - 8)
            ti.atomic_min(mn[None], i * 7 % 5 - 3)
            ti.atomic_max(mx[None], ti.sin(i * 1.0))

    cnt[None] = 10
    mn[None] = 100
    mx[None] = -2
    k()
    i = np.arange(10)
    np.testing.assert_allclose(r.to_numpy()[:10], i / 4 + np.floor(i * 0.7) + (i - 7.5) // 2
                               + (i - 7.5) % 3, atol=1e-6)
    np.testing.assert_array_equal(ri.to_numpy()[:10], (i - 8) // 3 * 100 + (i - 8) % 3 * 10
                                  + abs(i - 8) + (i - 8) ** 2 + np.minimum(i, 5) + 2 * np.sign(i - 8))
    assert mn[None] == (i * 7 % 5 - 3).min()
    assert abs(mx[None] - np.sin(i).max()) < 1e-6


# ---------------------------------------------------------------- differentiable programs
def test_tape_lazy_grad_and_manual_grad():
    N = 16
    x = ti.field(ti.f32, shape=N, needs_grad=True)
    w = ti.field(ti.f32, shape=N, needs_grad=True)
    y = ti.field(ti.f32)
    loss = ti.field(ti.f32)
    ti.root.dense(ti.i, N).place(y)
    ti.root.place(loss)
    ti.root.lazy_grad()

    @ti.kernel
    def forward():
        for i in x:
            y[i] = ti.sin(x[i]) * w[i] + x[i] ** 2

    @ti.kernel
    def compute_loss():
        for i in y:
            loss[None] += 0.5 * y[i] ** 2

    rng = np.random.default_rng(0)
    X = rng.random(N).astype(np.float32); W = rng.random(N).astype(np.float32)
    x.from_numpy(X); w.from_numpy(W)
    with ti.Tape(loss=loss):
        forward()
        compute_loss()
    Y = np.sin(X) * W + X ** 2
    np.testing.assert_allclose(loss[None], 0.5 * (Y ** 2).sum(), rtol=1e-5)
    np.testing.assert_allclose(x.grad.to_numpy(), Y * (np.cos(X) * W + 2 * X), rtol=1e-5)
    np.testing.assert_allclose(w.grad.to_numpy(), Y * np.sin(X), rtol=1e-5)

    for f in (x, w, y, loss):
        f.grad.fill(0)
    loss[None] = 0
    forward()
    compute_loss()
    loss.grad[None] = 1
    compute_loss.grad()
    forward.grad()
    np.testing.assert_allclose(x.grad.to_numpy(), Y * (np.cos(X) * W + 2 * X), rtol=1e-5)


def test_gradient_descent_to_captured_vector():
    pos = ti.Vector.field(2, ti.f32, shape=4, needs_grad=True)
    L = ti.field(ti.f32, shape=(), needs_grad=True)
    target = ti.Vector([1.0, 2.0])  # a Python-scope vector captured as a constant

    @ti.kernel
    def energy():
        for i in pos:
            L[None] += (pos[i] - target).norm_sqr()

    @ti.kernel
    def update():
        for i in pos:
            pos[i] -= 0.1 * pos.grad[i]

    pos.fill(0)
    for _ in range(50):
        with ti.Tape(L):
            energy()
        update()
    np.testing.assert_allclose(pos.to_numpy(), np.tile([1.0, 2.0], (4, 1)), atol=1e-4)


# ---------------------------------------------------------------- MPM88 (Taichi's example)
def test_mpm88_against_numpy():
    n_particles = 512
    n_grid = 32
    dx = 1 / n_grid
    dt = 2e-4
    p_rho = 1
    p_vol = (dx * 0.5)**2
    p_mass = p_vol * p_rho
    gravity = 9.8
    bound = 3
    E = 400
    x = ti.Vector.field(2, float, n_particles)
    v = ti.Vector.field(2, float, n_particles)
    C = ti.Matrix.field(2, 2, float, n_particles)
    J = ti.field(float, n_particles)
    grid_v = ti.Vector.field(2, float, (n_grid, n_grid))
    grid_m = ti.field(float, (n_grid, n_grid))

    @ti.kernel
    def substep():
        for i, j in grid_m:
            grid_v[i, j] = [0, 0]
            grid_m[i, j] = 0
        for p in x:
            Xp = x[p] / dx
            base = int(Xp - 0.5)
            fx = Xp - base
            w = [0.5 * (1.5 - fx)**2, 0.75 - (fx - 1)**2, 0.5 * (fx - 0.5)**2]
            stress = -dt * 4 * E * p_vol * (J[p] - 1) / dx**2
            affine = ti.Matrix([[stress, 0], [0, stress]]) + p_mass * C[p]
            for i, j in ti.static(ti.ndrange(3, 3)):
                offset = ti.Vector([i, j])
                dpos = (offset - fx) * dx
                weight = w[i].x * w[j].y
                grid_v[base + offset] += weight * (p_mass * v[p] + affine @ dpos)
                grid_m[base + offset] += weight * p_mass
        for i, j in grid_m:
            if grid_m[i, j] > 0:
                grid_v[i, j] /= grid_m[i, j]
            grid_v[i, j].y -= dt * gravity
            if i < bound and grid_v[i, j].x < 0:
                grid_v[i, j].x = 0
            if i > n_grid - bound and grid_v[i, j].x > 0:
                grid_v[i, j].x = 0
            if j < bound and grid_v[i, j].y < 0:
                grid_v[i, j].y = 0
            if j > n_grid - bound and grid_v[i, j].y > 0:
                grid_v[i, j].y = 0
        for p in x:
            Xp = x[p] / dx
            base = int(Xp - 0.5)
            fx = Xp - base
            w = [0.5 * (1.5 - fx)**2, 0.75 - (fx - 1)**2, 0.5 * (fx - 0.5)**2]
            new_v = ti.Vector.zero(float, 2)
            new_C = ti.Matrix.zero(float, 2, 2)
            for i, j in ti.static(ti.ndrange(3, 3)):
                offset = ti.Vector([i, j])
                dpos = (offset - fx) * dx
                weight = w[i].x * w[j].y
                g_v = grid_v[base + offset]
                new_v += weight * g_v
                new_C += 4 * weight * g_v.outer_product(dpos) / dx**2
            v[p] = new_v
            x[p] += dt * v[p]
            J[p] *= 1 + dt * new_C.trace()
            C[p] = new_C

    @ti.kernel
    def init():
        for i in range(n_particles):
            x[i] = [ti.random() * 0.4 + 0.2, ti.random() * 0.4 + 0.2]
            v[i] = [0, -1]
            J[i] = 1

    def numpy_substep(X, V, Cm, Jp):
        gv = np.zeros((n_grid, n_grid, 2), np.float64); gm = np.zeros((n_grid, n_grid))
        Xp = X / dx; base = (Xp - 0.5).astype(int); fx = Xp - base
        w = [0.5 * (1.5 - fx)**2, 0.75 - (fx - 1)**2, 0.5 * (fx - 0.5)**2]
        stress = -dt * 4 * E * p_vol * (Jp - 1) / dx**2
        affine = stress[:, None, None] * np.eye(2) + p_mass * Cm
        for i in range(3):
            for j in range(3):
                off = np.array([i, j]); dpos = (off - fx) * dx
                weight = w[i][:, 0] * w[j][:, 1]
                idx = base + off
                np.add.at(gv, (idx[:, 0], idx[:, 1]), weight[:, None] * (p_mass * V + np.einsum('pij,pj->pi', affine, dpos)))
                np.add.at(gm, (idx[:, 0], idx[:, 1]), weight * p_mass)
        nz = gm > 0
        gv[nz] /= gm[nz][:, None]
        gv[:, :, 1] -= dt * gravity
        I = np.arange(n_grid)[:, None] * np.ones((1, n_grid), int); Jg = I.T
        gv[:, :, 0][(I < bound) & (gv[:, :, 0] < 0)] = 0
        gv[:, :, 0][(I > n_grid - bound) & (gv[:, :, 0] > 0)] = 0
        gv[:, :, 1][(Jg < bound) & (gv[:, :, 1] < 0)] = 0
        gv[:, :, 1][(Jg > n_grid - bound) & (gv[:, :, 1] > 0)] = 0
        nv = np.zeros_like(V); nC = np.zeros_like(Cm)
        for i in range(3):
            for j in range(3):
                off = np.array([i, j]); dpos = (off - fx) * dx
                weight = w[i][:, 0] * w[j][:, 1]
                g = gv[base[:, 0] + i, base[:, 1] + j]
                nv += weight[:, None] * g
                nC += 4 * weight[:, None, None] * np.einsum('pi,pj->pij', g, dpos) / dx**2
        X = X + dt * nv
        Jp = Jp * (1 + dt * (nC[:, 0, 0] + nC[:, 1, 1]))
        return X, nv, nC, Jp

    init()
    X, V, Cm, Jp = x.to_numpy().astype(np.float64), v.to_numpy().astype(np.float64), C.to_numpy().astype(np.float64), J.to_numpy().astype(np.float64)
    for s in range(10):
        substep()
        X, V, Cm, Jp = numpy_substep(X, V, Cm, Jp)
    np.testing.assert_allclose(x.to_numpy(), X, atol=1e-5)
    np.testing.assert_allclose(v.to_numpy(), V, atol=1e-4)
    np.testing.assert_allclose(J.to_numpy(), Jp, atol=1e-5)


# ---------------------------------------------------------------- ti.math (modern Taichi style)
def test_ti_math_vector_types_and_helpers():
    import vkdiff.math as tm
    P = ti.field(ti.math.vec3, shape=4)
    Q = tm.vec2.field(shape=4)
    R = ti.field(tm.mat2, shape=2)
    S = ti.field(ti.types.vector(3, ti.f32), shape=4)

    @ti.func
    def twice(v: tm.vec3):
        return v * 2

    @ti.kernel
    def k():
        for i in P:
            a = tm.vec3(i, 1.0, -2.0)
            P[i] = tm.normalize(a) * tm.length(a) + tm.sign(a) + tm.mix(a, tm.vec3(0), 0.5) \
                + tm.clamp(a, -1.0, 1.0)
            Q[i] = tm.cmul(tm.vec2(1, i), tm.vec2(2, 3)) + tm.vec2(tm.pi, tm.fract(2.75)
                                                                   + tm.dot(a, a))
            S[i] = twice(ti.Vector([1, 2, i]))
        R[0] = tm.rotation2d(tm.pi / 2)
        R[1] = tm.mat2(1, 2, 3, 4) @ tm.mat2([[1, 0], [0, 1]])

    k()
    i = np.arange(4.0)
    a = np.stack([i, np.ones(4), -2 * np.ones(4)], 1)
    np.testing.assert_allclose(P.to_numpy(), a + np.sign(a) + a / 2 + np.clip(a, -1, 1), atol=1e-6)
    np.testing.assert_allclose(Q.to_numpy(), np.stack([2 - 3 * i + np.pi,
                                                       3 + 2 * i + 0.75 + (a * a).sum(1)], 1),
                               rtol=1e-6)
    np.testing.assert_allclose(R.to_numpy(), [[[0, -1], [1, 0]], [[1, 2], [3, 4]]], atol=1e-7)
    np.testing.assert_allclose(S.to_numpy(), np.stack([2 * np.ones(4), 4 * np.ones(4), 2 * i], 1))

    @ti.kernel
    def vec_arg(v: tm.vec3):
        P[0] = v

    vec_arg(tm.vec3(1, 2, 3))  # vector kernel arguments are passed as their entries
    assert P[0].to_list() == [1.0, 2.0, 3.0]


def test_list_of_fields_indexed_statically_as_assignment_target():
    accs = [ti.field(ti.f32, shape=()) for _ in range(3)]
    x = ti.field(ti.f32, shape=8)

    @ti.kernel
    def k():
        for i in x:
            for c in ti.static(range(3)):
                accs[c][None] += x[i] * (c + 1)

    x.fill(1)
    k()
    assert [a[None] for a in accs] == [8, 16, 24]
