"""DiffTaichi-style differentiable programs, every gradient checked against central finite
differences in f64: a mass-spring robot with a neural controller (DiffTaichi's mass_spring.py),
billiards with collision branches, a smoke/heat stencil over time slices, a kernel with several
outputs and vector/matrix ops, the same programs' JVPs (FwdMode) and Hessian-vector products, and
contended accumulations through the reduction pass. Also: the error paths are AutodiffErrors."""
import math

import numpy as np
import pytest

import vkdiff as ti

pytestmark = pytest.mark.requires('float64')  # every test here computes in f64


def fd_check(forward, loss, field, grad, entries, h=1e-6, rtol=1e-5, atol=1e-9):
    """Central differences of the loss at some flat `entries` of `field` vs `grad`."""
    a = field.to_numpy()
    g = grad.ravel()
    for k in entries:
        p = a.copy().ravel()
        p[k] += h
        field.from_numpy(p.reshape(a.shape))
        forward()
        lp = loss[None]
        p[k] -= 2 * h
        field.from_numpy(p.reshape(a.shape))
        forward()
        lm = loss[None]
        fd = (lp - lm) / (2 * h)
        assert g[k] == pytest.approx(fd, rel=rtol, abs=atol), (field.name, k)
    field.from_numpy(a)


def tape_grads(P):
    with ti.Tape(P['loss']):
        P['forward']()
    return {p: p.grad.to_numpy() for p in P['params']}


def jvp_matches(P, grads, rng):
    loss = P['loss']
    for p in P['params']:
        seed = rng.standard_normal(p.shape + p.elem_shape)
        with ti.ad.FwdMode(loss=loss, param=p, seed=list(seed.ravel())):
            P['forward']()
        assert loss.dual[None] == pytest.approx((grads[p] * seed).sum(), rel=1e-9, abs=1e-12), p.name


def hvp_matches(P, p, rng, h=1e-6, atol=1e-7):
    a = p.to_numpy()
    v = rng.standard_normal(a.shape)
    hv = ti.ad.hvp(P['loss'], p, v, P['forward'])

    def grad_at(q):
        p.from_numpy(q)
        return tape_grads(P)[p]
    fd = (grad_at(a + h * v) - grad_at(a - h * v)) / (2 * h)
    p.from_numpy(a)
    np.testing.assert_allclose(hv, fd, rtol=1e-5, atol=atol)


# ---------------------------------------------------------------- mass-spring robot

def build_mass_spring(steps=12, seed=0):
    ti.init(default_fp=ti.f64)
    real = ti.f64
    rng = np.random.default_rng(seed)
    objects = [[0.1, 0.12], [0.2, 0.12], [0.1, 0.22], [0.2, 0.22], [0.15, 0.32]]
    springs = [(0, 1, 0.1, 1.0), (0, 2, 0.1, 0.5), (1, 3, 0.1, 0.5), (2, 3, 0.1, 0.0),
               (0, 3, 0.1414, 0.3), (2, 4, 0.0707, 0.2), (3, 4, 0.0707, 0.2)]
    n_obj, n_spr = len(objects), len(springs)
    n_sin, n_hidden = 3, 4
    n_in = n_sin + 2 * n_obj
    dt, damping, stiffness, ground = 0.004, 15.0, 3000.0, 0.116
    head = 4
    x = ti.Vector.field(2, real, shape=(steps, n_obj), needs_grad=True, needs_dual=True)
    v = ti.Vector.field(2, real, shape=(steps, n_obj), needs_grad=True, needs_dual=True)
    v_inc = ti.Vector.field(2, real, shape=(steps, n_obj), needs_grad=True, needs_dual=True)
    center = ti.Vector.field(2, real, shape=steps, needs_grad=True, needs_dual=True)
    hidden_pre = ti.field(real, shape=(steps, n_hidden), needs_grad=True, needs_dual=True)
    hidden = ti.field(real, shape=(steps, n_hidden), needs_grad=True, needs_dual=True)
    act = ti.field(real, shape=(steps, n_spr), needs_grad=True, needs_dual=True)
    w1 = ti.field(real, shape=(n_hidden, n_in), needs_grad=True, needs_dual=True)
    b1 = ti.field(real, shape=n_hidden, needs_grad=True, needs_dual=True)
    w2 = ti.field(real, shape=(n_spr, n_hidden), needs_grad=True, needs_dual=True)
    b2 = ti.field(real, shape=n_spr, needs_grad=True, needs_dual=True)
    anchor_a = ti.field(ti.i32, shape=n_spr)
    anchor_b = ti.field(ti.i32, shape=n_spr)
    rest = ti.field(real, shape=n_spr)
    spr_act = ti.field(real, shape=n_spr)
    loss = ti.field(real, shape=(), needs_grad=True, needs_dual=True)

    @ti.kernel
    def compute_center(t: ti.i32):
        for _ in range(1):
            c = ti.Vector([0.0, 0.0])
            for i in ti.static(range(n_obj)):
                c += x[t, i]
            center[t] = (1.0 / n_obj) * c

    @ti.kernel
    def nn1(t: ti.i32):
        for j in range(n_hidden):
            for k in ti.static(range(n_sin)):
                ti.atomic_add(hidden_pre[t, j], w1[j, k] * ti.sin(30.0 * t * dt + 2 * math.pi / n_sin * k))
            for k in ti.static(range(n_obj)):
                off = x[t, k] - center[t]
                hidden_pre[t, j] += w1[j, n_sin + 2 * k] * off[0] * 5.0
                hidden_pre[t, j] += w1[j, n_sin + 2 * k + 1] * off[1] * 5.0

    @ti.kernel
    def nn1_act(t: ti.i32):
        for j in range(n_hidden):
            hidden[t, j] = ti.tanh(hidden_pre[t, j] + b1[j])

    @ti.kernel
    def nn2(t: ti.i32):
        for i in range(n_spr):
            a = 0.0
            for j in ti.static(range(n_hidden)):
                a += w2[i, j] * hidden[t, j]
            act[t, i] = ti.tanh(a + b2[i])

    @ti.kernel
    def apply_spring_force(t: ti.i32):
        for i in range(n_spr):
            a = anchor_a[i]
            b = anchor_b[i]
            d = x[t, a] - x[t, b]
            length = d.norm() + 1e-4
            target = rest[i] * (1.0 + spr_act[i] * act[t, i])
            impulse = dt * (length - target) * stiffness / length * d
            ti.atomic_add(v_inc[t + 1, a], -impulse)
            ti.atomic_add(v_inc[t + 1, b], impulse)

    @ti.kernel
    def advance(t: ti.i32):
        for i in range(n_obj):
            s = ti.exp(-dt * damping)
            old_v = s * v[t - 1, i] + dt * -9.8 * ti.Vector([0.0, 1.0]) + v_inc[t, i]
            old_x = x[t - 1, i]
            new_x = old_x + dt * old_v
            toi = 0.0
            new_v = old_v
            if new_x[1] < ground and old_v[1] < -1e-4:
                toi = -(old_x[1] - ground) / old_v[1]
                new_v = ti.Vector([0.0, 0.0])
            new_x = old_x + toi * old_v + (dt - toi) * new_v
            new_v[0] = ti.select(new_x[1] < ground + 1e-9, new_v[0] * 0.5, new_v[0])
            v[t, i] = new_v
            x[t, i] = new_x

    @ti.kernel
    def compute_loss(t: ti.i32):
        loss[None] = -x[t, head][0]

    @ti.kernel
    def clear():
        for t, i in ti.ndrange(steps, n_obj):
            v_inc[t, i] = ti.Vector([0.0, 0.0])
        for t, j in ti.ndrange(steps, n_hidden):
            hidden_pre[t, j] = 0.0

    aa = np.array([s[0] for s in springs], np.int32); bb = np.array([s[1] for s in springs], np.int32)
    anchor_a.from_numpy(aa); anchor_b.from_numpy(bb)
    rest.from_numpy(np.array([s[2] for s in springs])); spr_act.from_numpy(np.array([s[3] for s in springs]))
    X0 = np.zeros((steps, n_obj, 2)); X0[0] = np.array(objects)
    x.from_numpy(X0)
    params = {w1: rng.standard_normal((n_hidden, n_in)) * math.sqrt(2 / (n_hidden + n_in)) * 2,
              b1: rng.standard_normal(n_hidden) * 0.3,
              w2: rng.standard_normal((n_spr, n_hidden)) * math.sqrt(2 / (n_hidden + n_spr)) * 2,
              b2: rng.standard_normal(n_spr) * 0.3}
    for f, a in params.items():
        f.from_numpy(a)

    def forward():
        clear()
        for t in range(1, steps):
            compute_center(t - 1)
            nn1(t - 1)
            nn1_act(t - 1)
            nn2(t - 1)
            apply_spring_force(t - 1)
            advance(t)
        compute_loss(steps - 1)
    return dict(forward=forward, loss=loss, params=list(params), x=x)


def _sample(rng, n, k=8):
    return rng.choice(n, min(n, k), replace=False)


def test_mass_spring_robot_gradient_vs_fd():
    P = build_mass_spring(steps=16)
    grads = tape_grads(P)
    xs = P['x'].to_numpy()
    assert (xs[1:, :, 1] <= 0.116 + 1e-9).sum() >= 2   # some nodes hit the ground
    rng = np.random.default_rng(0)
    for p in P['params']:
        assert np.abs(grads[p]).max() > 1e-4
        fd_check(P['forward'], P['loss'], p, grads[p], _sample(rng, grads[p].size))


def test_mass_spring_robot_jvp_and_hvp():
    P = build_mass_spring(steps=12)
    rng = np.random.default_rng(1)
    jvp_matches(P, tape_grads(P), rng)
    # forward-over-reverse of the controller: the tangent of nn1's adjoint has ~40 contended
    # accumulators (this crashed the device before the reduction pass shared its buffers)
    hvp_matches(P, P['params'][0], rng)
    hvp_matches(P, P['params'][3], rng)


# ---------------------------------------------------------------- billiards

def build_billiards(steps=60):
    ti.init(default_fp=ti.f64)
    real = ti.f64
    n_balls = 4
    dt = 0.003
    elasticity = 0.8
    radius = 0.03
    target_ball = 3
    goal = [0.9, 0.75]
    x = ti.Vector.field(2, real, shape=(steps, n_balls), needs_grad=True, needs_dual=True)
    x_inc = ti.Vector.field(2, real, shape=(steps, n_balls), needs_grad=True, needs_dual=True)
    v = ti.Vector.field(2, real, shape=(steps, n_balls), needs_grad=True, needs_dual=True)
    impulse = ti.Vector.field(2, real, shape=(steps, n_balls), needs_grad=True, needs_dual=True)
    init_x = ti.Vector.field(2, real, shape=(), needs_grad=True, needs_dual=True)
    init_v = ti.Vector.field(2, real, shape=(), needs_grad=True, needs_dual=True)
    loss = ti.field(real, shape=(), needs_grad=True, needs_dual=True)

    @ti.kernel
    def collide(t: ti.i32):
        for i in range(n_balls):
            for j in range(n_balls):
                imp = ti.Vector([0.0, 0.0])
                x_inc_contrib = ti.Vector([0.0, 0.0])
                if i != j:
                    dist = (x[t, i] + dt * v[t, i]) - (x[t, j] + dt * v[t, j])
                    dist_norm = dist.norm()
                    rela_v = v[t, i] - v[t, j]
                    if dist_norm < 2 * radius:
                        dir = ti.Vector.normalized(dist, 1e-6)
                        projected_v = dir.dot(rela_v)
                        if projected_v < 0:
                            imp = -(1 + elasticity) * 0.5 * projected_v * dir
                            toi = (dist_norm - 2 * radius) / min(-1e-3, projected_v)
                            x_inc_contrib = min(toi - dt, 0) * imp
                x_inc[t + 1, i] += x_inc_contrib
                impulse[t + 1, i] += imp

    @ti.kernel
    def advance(t: ti.i32):
        for i in range(n_balls):
            v[t, i] = v[t - 1, i] + impulse[t, i]
            x[t, i] = x[t - 1, i] + dt * v[t, i] + x_inc[t, i]

    @ti.kernel
    def compute_loss(t: ti.i32):
        loss[None] = (x[t, target_ball][0] - goal[0]) ** 2 + (x[t, target_ball][1] - goal[1]) ** 2

    @ti.kernel
    def initialize():
        x[0, 0] = init_x[None]
        v[0, 0] = init_v[None]

    @ti.kernel
    def clear():
        for t, i in ti.ndrange(steps, n_balls):
            impulse[t, i] = ti.Vector([0.0, 0.0])
            x_inc[t, i] = ti.Vector([0.0, 0.0])

    X = np.zeros((steps, n_balls, 2))
    X[0, 1] = [0.5, 0.5]; X[0, 2] = [0.5 + 2 * radius * 0.95, 0.5 + 0.5 * radius]; X[0, 3] = [0.5 + 4 * radius * 0.95, 0.5 + 1.2 * radius]
    x.from_numpy(X)
    init_x[None] = [0.1, 0.5 - 0.3 * radius]
    init_v[None] = [0.3, 0.0]

    def forward():
        clear()
        initialize()
        for t in range(steps - 1):
            collide(t)
            advance(t + 1)
        compute_loss(steps - 1)
    return dict(forward=forward, loss=loss, params=[init_x, init_v], x=x, impulse=impulse)


def test_billiards_gradient_vs_fd_jvp_hvp():
    P = build_billiards(steps=400)
    grads = tape_grads(P)
    assert (np.abs(P['impulse'].to_numpy()).sum(-1) > 0).sum(0)[3] >= 1  # the target ball was hit
    for p in P['params']:
        fd_check(P['forward'], P['loss'], p, grads[p], range(2), h=1e-5, rtol=1e-6)
    rng = np.random.default_rng(2)
    jvp_matches(P, grads, rng)
    hvp_matches(P, P['params'][1], rng, atol=1e-6)


# ---------------------------------------------------------------- smoke / heat diffusion

def build_smoke(steps=10, n=16):
    ti.init(default_fp=ti.f64)
    real = ti.f64
    u = ti.field(real, shape=(steps, n, n), needs_grad=True, needs_dual=True)
    vel = ti.Vector.field(2, real, shape=(n, n), needs_grad=True, needs_dual=True)
    src = ti.field(real, shape=(n, n), needs_grad=True, needs_dual=True)
    kappa = ti.field(real, shape=(), needs_grad=True, needs_dual=True)
    target = ti.field(real, shape=(n, n))
    loss = ti.field(real, shape=(), needs_grad=True, needs_dual=True)

    @ti.func
    def at(t, i, j):
        i = ti.max(0, ti.min(n - 1, i))   # clamped borders
        j = ti.max(0, ti.min(n - 1, j))
        return u[t, i, j]

    @ti.kernel
    def init():
        for i, j in src:
            u[0, i, j] = src[i, j]

    @ti.kernel
    def step(t: ti.i32):
        for i, j in ti.ndrange(n, n):
            lap = at(t - 1, i + 1, j) + at(t - 1, i - 1, j) + at(t - 1, i, j + 1) + at(t - 1, i, j - 1) - 4 * at(t - 1, i, j)
            # semi-Lagrangian-ish advection: bilinear sample at a backtraced point
            p = ti.Vector([i, j]) - 0.5 * vel[i, j]
            p = ti.max(ti.min(p, n - 1.001), 0.0)
            b = ti.cast(ti.floor(p), ti.i32)
            f = p - b
            s = (1 - f[0]) * (1 - f[1]) * u[t - 1, b[0], b[1]] + f[0] * (1 - f[1]) * u[t - 1, b[0] + 1, b[1]] \
                + (1 - f[0]) * f[1] * u[t - 1, b[0], b[1] + 1] + f[0] * f[1] * u[t - 1, b[0] + 1, b[1] + 1]
            u[t, i, j] = s + kappa[None] * lap

    @ti.kernel
    def compute_loss(t: ti.i32):
        for i, j in ti.ndrange(n, n):
            loss[None] += (u[t, i, j] - target[i, j]) ** 2 / (n * n)

    rng = np.random.default_rng(3)
    src.from_numpy(rng.uniform(0, 1, (n, n)))
    vel.from_numpy(rng.uniform(-1.3, 1.3, (n, n, 2)))
    target.from_numpy(rng.uniform(0, 1, (n, n)))
    kappa[None] = 0.15

    def forward():
        loss[None] = 0
        init()
        for t in range(1, steps):
            step(t)
        compute_loss(steps - 1)
    return dict(forward=forward, loss=loss, params=[src, vel, kappa], u=u)


def test_smoke_stencil_gradient_vs_fd_jvp_hvp():
    P = build_smoke()
    grads = tape_grads(P)
    rng = np.random.default_rng(3)
    for p in P['params']:
        fd_check(P['forward'], P['loss'], p, grads[p], _sample(rng, grads[p].size, 6))
    jvp_matches(P, grads, rng)
    for p in P['params']:
        hvp_matches(P, p, rng)


# ---------------------------------------------------------------- several outputs, linalg

def build_multi_output(n=8):
    ti.init(default_fp=ti.f64)
    real = ti.f64
    A = ti.Matrix.field(3, 3, real, shape=n, needs_grad=True, needs_dual=True)
    b = ti.Vector.field(3, real, shape=n, needs_grad=True, needs_dual=True)
    s = ti.field(real, shape=n, needs_grad=True, needs_dual=True)
    out_v = ti.Vector.field(3, real, shape=n, needs_grad=True, needs_dual=True)
    out_m = ti.Matrix.field(2, 2, real, shape=n, needs_grad=True, needs_dual=True)
    out_s = ti.field(real, shape=(), needs_grad=True, needs_dual=True)
    out_k = ti.field(real, shape=n, needs_grad=True, needs_dual=True)

    @ti.func
    def soft(xv):
        if xv > 0.5:
            return xv ** 1.5
        elif xv < -0.5:
            return -((-xv) ** 2.5)
        return 0.5 * xv

    @ti.func
    def bucket_weight(xv):
        k = ti.cast(ti.floor(xv * 4.0), ti.i32)  # int cast: piecewise-constant selector
        w = 0.0
        if k % 2 == 0:
            w = xv * ti.cast(k + 1, real)
        else:
            w = ti.sqrt(ti.abs(xv) + 1.0) * ti.cast(k, real)
        return w

    @ti.kernel
    def f():
        for i in range(n):
            M = A[i] + ti.Matrix.identity(real, 3) * 3.0
            Minv = M.inverse()
            y = Minv @ b[i]
            S = M.transpose() @ M
            z = S @ y.normalized() * y.norm()
            acc = 0.0
            for c in ti.static(range(3)):
                acc += soft(z[c]) * (c + 1)
            ang = ti.atan2(y[1], y[0] + 2.0)
            out_v[i] = ti.Vector([ang, acc, (ti.abs(s[i]) + 0.1) ** 0.7])
            R = ti.Matrix([[ti.cos(ang), -ti.sin(ang)], [ti.sin(ang), ti.cos(ang)]])
            out_m[i] = R @ ti.Matrix([[M[0, 0], M[0, 1]], [M[1, 0], M[1, 1]]]) @ R.transpose()
            out_k[i] = bucket_weight(s[i]) + y.dot(y) ** 0.5
            out_s[None] += (M @ y - b[i]).norm_sqr() * 1e3 + z.norm() ** 1.25

    rng = np.random.default_rng(5)
    A.from_numpy(rng.uniform(-1, 1, (n, 3, 3)))
    b.from_numpy(rng.uniform(-2, 2, (n, 3)))
    s.from_numpy(rng.uniform(-1, 1, n))
    outs = [out_v, out_m, out_s, out_k]
    return dict(f=f, params=[A, b, s], outs=outs)


def test_multi_output_kernel_grad_with_seeded_outputs_and_jvp():
    P = build_multi_output()
    f, outs, params = P['f'], P['outs'], P['params']
    rng = np.random.default_rng(1)
    seeds = {o: rng.standard_normal(o.shape + o.elem_shape) for o in outs}

    class Obj:   # <outputs, seeds> as a 0-D "loss" for fd_check
        val = 0.0

        def __getitem__(self, _):
            return self.val

    obj = Obj()

    def objective():
        for o in outs:
            o.fill(0)
        f()
        obj.val = sum((o.to_numpy() * seeds[o]).sum() for o in outs)

    objective()
    for o in outs:
        o.grad.from_numpy(seeds[o])
    for p in params:
        p.grad.fill(0)
    f.grad()
    grads = {p: p.grad.to_numpy() for p in params}
    for p in params:
        fd_check(objective, obj, p, grads[p], _sample(rng, grads[p].size), rtol=1e-6, atol=1e-7)
    for p in params:
        d = rng.standard_normal(p.shape + p.elem_shape)
        for o in outs:
            o.fill(0)
        with ti.ad.FwdMode(loss=outs, param=p, seed=list(d.ravel())):
            f()
        jvp = sum((o.dual.to_numpy() * seeds[o]).sum() for o in outs)
        assert jvp == pytest.approx((grads[p] * d).sum(), rel=1e-9), p.name


# ---------------------------------------------------------------- reduction pass

def test_contended_accumulations_and_histograms_1d_2d():
    ti.init(default_fp=ti.f64)
    N, M, B = 300, 7, 5
    x = ti.field(ti.f64, shape=N, needs_grad=True, needs_dual=True)
    y = ti.field(ti.f64, shape=(M, N // 10), needs_grad=True, needs_dual=True)
    hist = ti.field(ti.f64, shape=B, needs_grad=True, needs_dual=True)
    hist2 = ti.Vector.field(2, ti.f64, shape=(B, 3), needs_grad=True, needs_dual=True)
    tot = ti.field(ti.f64, shape=(), needs_grad=True, needs_dual=True)
    tot2 = ti.field(ti.f64, shape=(), needs_grad=True, needs_dual=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True, needs_dual=True)

    @ti.kernel
    def accumulate():
        for i in range(N):
            v = x[i]
            b = ti.cast(ti.abs(v) * 997, ti.i32) % B       # computed bin, piecewise constant
            hist[b] += ti.sin(v) * (i % 3 + 1)
            tot[None] += v * v
            ti.atomic_add(tot2[None], ti.exp(-v))
        for i, j in ti.ndrange(M, N // 10):
            w = y[i, j] * x[i * 3 + j]
            hist2[(i + j) % B, j % 3] += ti.Vector([w, w * w])
            hist[i % B] += 0.5 * w
            tot[None] -= w ** 3
            tot2[None] += ti.tanh(y[i, j])

    @ti.kernel
    def compute_loss():
        for b in range(B):
            loss[None] += (b + 1) * hist[b] ** 2
            for c in ti.static(range(3)):
                loss[None] += hist2[b, c].norm_sqr() * (c + 1)
        loss[None] += tot[None] * 0.3 + tot2[None] ** 2

    rng = np.random.default_rng(0)
    X = rng.uniform(-1, 1, N)
    Y = rng.uniform(-1, 1, (M, N // 10))

    def forward():
        for f in (hist, hist2, tot, tot2, loss):
            f.fill(0)
        accumulate()
        compute_loss()
    x.from_numpy(X)
    y.from_numpy(Y)
    with ti.Tape(loss):
        forward()
    gx, gy = x.grad.to_numpy(), y.grad.to_numpy()
    fd_check(forward, loss, x, gx, rng.choice(N, 8, replace=False), rtol=1e-7, atol=1e-6)
    fd_check(forward, loss, y, gy, rng.choice(Y.size, 8, replace=False), rtol=1e-7, atol=1e-6)
    sx = rng.standard_normal(N)
    with ti.ad.FwdMode(loss=loss, param=x, seed=list(sx)):
        forward()
    assert loss.dual[None] == pytest.approx((gx * sx).sum(), rel=1e-10)
    hv = ti.ad.hvp(loss, y, np.ones_like(Y), forward)

    def g_of(Yv):
        y.from_numpy(Yv)
        with ti.Tape(loss):
            forward()
        return y.grad.to_numpy()
    h = 1e-6
    fd = (g_of(Y + h) - g_of(Y - h)) / (2 * h)
    np.testing.assert_allclose(hv, fd, rtol=1e-6, atol=1e-5)


# ---------------------------------------------------------------- error paths


def _fields(n=4):
    x = ti.field(ti.f64, shape=n, needs_grad=True)
    y = ti.field(ti.f64, shape=n, needs_grad=True)
    l = ti.field(ti.f64, shape=(), needs_grad=True)
    return x, y, l


def _err_read_then_overwrite():
    x, y, l = _fields()

    @ti.kernel
    def k():
        for i in x:
            y[i] = x[i] * 2
            x[i] = y[i] + 1
    with ti.Tape(l):
        k()


def _err_non_atomic_contended():
    x, y, l = _fields()

    @ti.kernel
    def k():
        for i in x:
            l[None] = l[None] + x[i]
    with ti.Tape(l):
        k()


def _err_atomic_max():   # (atomic max itself differentiates: tests/autodiff/test_atomic_extremum.py)
    x, y, l = _fields()

    @ti.kernel
    def k():
        for i in x:
            ti.atomic_max(l[None], x[i])
            y[i] = l[None]   # reads the max while it is being taken
    with ti.Tape(l):
        k()


def _err_while():
    x, y, l = _fields()

    @ti.kernel
    def k():
        for i in x:
            v = x[i]
            while v < 10:
                v = v * 2 + 1
            y[i] = v
    k.grad()


def _err_atomic_return():
    x, y, l = _fields()

    @ti.kernel
    def k():
        for i in x:
            old = ti.atomic_add(l[None], x[i])
            y[i] = old * x[i]
    k.grad()


def _err_runtime_carried_loop():
    x, y, l = _fields()

    @ti.kernel
    def k(n: ti.i32):
        for i in x:
            v = x[i]
            for j in range(n):
                v = ti.sin(v)
            y[i] = v
    k.grad(40)  # more iterations than the default ad stack (32): an error after the launch


def _err_break():
    x, y, l = _fields()

    @ti.kernel
    def k():
        for i in x:
            v = x[i]
            for j in range(5):
                v = v * v
                if v > 3:
                    break
            y[i] = v
    k.grad()


def _err_random():
    x, y, l = _fields()

    @ti.kernel
    def k():
        for i in x:
            y[i] = x[i] * ti.random()
    k.grad()


def _err_tape_overwrite():
    x, y, l = _fields()

    @ti.kernel
    def a():
        for i in x:
            y[i] = x[i] ** 2

    @ti.kernel
    def b():
        for i in x:
            x[i] = 0.0

    @ti.kernel
    def c():
        for i in x:
            l[None] += y[i]
    with ti.Tape(l):
        a()
        b()
        c()


def _err_hvp_custom():
    x, y, l = _fields()

    @ti.kernel
    def k():
        for i in x:
            l[None] += x[i] ** 3

    @ti.ad.grad_replaced
    def g():
        k()

    @ti.ad.jvp_for(g)
    def gj():
        pass
    ti.ad.hvp(l, x, np.ones(4), g)


def _err_stack_overflow():
    ti.init(default_fp=ti.f64, ad_stack_size=4)
    x, y, l = _fields()

    @ti.kernel
    def k(n: ti.i32):
        for i in x:
            v = x[i]
            for j in range(n):
                v = ti.sin(v)
            y[i] = v
    k(8)
    k.grad(8)


@pytest.mark.parametrize('case', [
    _err_read_then_overwrite, _err_non_atomic_contended, _err_atomic_max, _err_while,
    _err_atomic_return, _err_runtime_carried_loop, _err_break, _err_random, _err_tape_overwrite,
    _err_hvp_custom, _err_stack_overflow,
    lambda: ti.Tape(_fields()[1]),
    lambda: ti.ad.FwdMode(loss=_fields()[2], param=_fields()[0], seed=[1, 0, 0, 0]),
], ids=lambda c: c.__name__.strip('_'))
def test_error_paths_are_autodiff_errors(case):
    ti.init(default_fp=ti.f64)
    with pytest.raises(ti.AutodiffError):
        case()
