"""`ti.ad.checkpointed`: a time loop inside a Tape whose backward pass recomputes each segment
from a snapshot. Its gradients are the full Tape's, bit for bit, where the forward pass is
deterministic (LP_NUM_THREADS=0 makes lavapipe's float atomics run in one order; the steps here
have no float atomics in their forward pass except the diffmpm scatter); what it cannot replay is
refused with a CheckpointError."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.errors import AutodiffError, CheckpointBudgetError, CheckpointError


# ---------------------------------------------------------------- a mass-spring step
def mass_spring(T, mode, every=None, fp=ti.f32, n=8, budget=None):
    """mode 'full': x[t] -> x[t + 1] under a full Tape; 'ck': the same step, checkpointed;
    'inplace': a ping-pong between two one-state fields, checkpointed (memory independent of T)."""
    ti.init(default_fp=fp)
    W = 1 if mode == 'inplace' else T + 1
    x = ti.Vector.field(2, float, shape=(W, n), needs_grad=True)
    v = ti.Vector.field(2, float, shape=(W, n), needs_grad=True)
    xb = ti.Vector.field(2, float, shape=(1, n), needs_grad=True)
    vb = ti.Vector.field(2, float, shape=(1, n), needs_grad=True)
    x0 = ti.Vector.field(2, float, shape=n, needs_grad=True)
    v0 = ti.Vector.field(2, float, shape=n, needs_grad=True)
    k = ti.field(float, shape=(), needs_grad=True)
    loss = ti.field(float, shape=(), needs_grad=True)
    dt = 1e-2

    @ti.kernel
    def init():
        for i in range(n):
            x[0, i] = x0[i]
            v[0, i] = v0[i]

    @ti.func
    def spring(xi, xj):
        d = xj - xi
        length = d.norm(1e-9)
        return k[None] * (length - 0.1) * d / length

    @ti.func
    def advance(xa: ti.template(), va: ti.template(), ta, xo: ti.template(),
                vo: ti.template(), to):
        for i in range(n):
            f = ti.Vector([0.0, -1.0])
            if i > 0:
                f += spring(xa[ta, i], xa[ta, i - 1])
            if i < n - 1:
                f += spring(xa[ta, i], xa[ta, i + 1])
            vn = va[ta, i] * 0.99 + dt * f
            vo[to, i] = vn
            xo[to, i] = xa[ta, i] + dt * vn

    @ti.kernel
    def step(t: ti.i32):
        advance(x, v, t, x, v, t + 1)

    @ti.kernel
    def step_pp(xa: ti.template(), va: ti.template(), xo: ti.template(), vo: ti.template()):
        advance(xa, va, 0, xo, vo, 0)

    @ti.kernel
    def compute_loss(xa: ti.template(), a: ti.i32):
        for i in range(n):
            loss[None] += (xa[a, i] - ti.Vector([0.5, 0.3])).norm_sqr()

    def pingpong(t):
        if t % 2 == 0:
            step_pp(x, v, xb, vb)
        else:
            step_pp(xb, vb, x, v)

    rng = np.random.default_rng(0)
    x0.from_numpy(np.stack([0.1 * np.arange(n), np.zeros(n)], 1))
    v0.from_numpy(rng.standard_normal((n, 2)))
    k[None] = 20.0
    block = None
    with ti.ad.Tape(loss):
        init()
        if mode == 'full':
            for t in range(T):
                step(t)
            compute_loss(x, T)
        elif mode == 'ck':
            block = ti.ad.checkpointed(step, steps=T, every=every, budget_bytes=budget)
            compute_loss(x, T)
        else:
            block = ti.ad.checkpointed(pingpong, steps=T, every=every, budget_bytes=budget)
            compute_loss(x if T % 2 == 0 else xb, 0)
    final = (x if mode == 'full' or T % 2 == 0 else xb).to_numpy()[T if mode != 'inplace' else 0]
    return dict(loss=loss[None], v0=v0.grad.to_numpy(), x0=x0.grad.to_numpy(), k=k.grad[None],
                final=final, block=block)


def _same(a, b):
    """Bit for bit: the forward pass has no float atomics; the adjoints' sums into k.grad (one
    workgroup) run in one order on the CPU drivers. On a GPU: within the full Tape's own
    run-to-run spread."""
    assert a['loss'] == b['loss']
    np.testing.assert_array_equal(a['final'], b['final'])
    if _deterministic() or ti.lang.state.runtime().device_type == 'cpu':
        assert a['k'] == b['k']
        np.testing.assert_array_equal(a['v0'], b['v0'])
        np.testing.assert_array_equal(a['x0'], b['x0'])
    else:
        np.testing.assert_allclose(a['k'], b['k'], rtol=1e-5)
        np.testing.assert_allclose(a['v0'], b['v0'], rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(a['x0'], b['x0'], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize('every', [None, 1, 4, 7, 30])
def test_mass_spring_bit_identical_f32(monkeypatch, every):
    full = mass_spring(30, 'full')
    ck = mass_spring(30, 'ck', every)
    assert ck['block'].every == (every or 6)
    _same(full, ck)
    assert np.abs(full['v0']).max() > 1e-3  # a real gradient


@pytest.mark.requires('float64')
@pytest.mark.parametrize('every', [None, 5])
def test_mass_spring_bit_identical_f64(every):
    _same(mass_spring(30, 'full', fp=ti.f64), mass_spring(30, 'ck', every, fp=ti.f64))


def test_in_place_state_any_segment_length():
    """One-state fields overwritten every step (a ping-pong): no full Tape can take it, the
    checkpointed one gives the same bits for every segment length, and agrees with the
    time-axis program (the two compile to different adjoint kernels: within a few ulps)."""
    full = mass_spring(31, 'full')
    runs = [mass_spring(31, 'inplace', e) for e in (None, 1, 3, 31)]
    for r in runs[1:]:
        _same(runs[0], r)
    np.testing.assert_allclose(runs[0]['v0'], full['v0'], rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(runs[0]['k'], full['k'], rtol=1e-5)
    assert runs[0]['loss'] == full['loss']


# ---------------------------------------------------------------- a diffmpm-style step
def diffmpm(T, mode, every=None, fp=ti.f32):
    """DiffTaichi's diffmpm in small: P2G scatter, grid update, G2P gather, the grid recomputed
    in each substep's adjoint (grad_replaced / grad_for). mode 'full': a full Tape; 'ck': the
    same substeps checkpointed; 'plain': checkpointed plain kernels, the grid overwritten by
    every step without grad_replaced (the block's undo frames restore it)."""
    ti.init(default_fp=fp)
    n_particles, n_grid = 32, 16
    dx = 1 / n_grid
    inv_dx = float(n_grid)
    dt, p_vol, E, p_mass = 2e-3, 1.0, 400.0, 1.0
    x = ti.Vector.field(2, float, shape=(T + 1, n_particles), needs_grad=True)
    v = ti.Vector.field(2, float, shape=(T + 1, n_particles), needs_grad=True)
    C = ti.Matrix.field(2, 2, float, shape=(T + 1, n_particles), needs_grad=True)
    F = ti.Matrix.field(2, 2, float, shape=(T + 1, n_particles), needs_grad=True)
    grid_v_in = ti.Vector.field(2, float, shape=(n_grid, n_grid), needs_grad=True)
    grid_m_in = ti.field(float, shape=(n_grid, n_grid), needs_grad=True)
    grid_v_out = ti.Vector.field(2, float, shape=(n_grid, n_grid), needs_grad=True)
    loss = ti.field(float, shape=(), needs_grad=True)
    v0 = ti.Vector.field(2, float, shape=(), needs_grad=True)

    @ti.kernel
    def clear_grid():
        for i, j in grid_m_in:
            grid_v_in[i, j] = [0, 0]
            grid_m_in[i, j] = 0
            grid_v_in.grad[i, j] = [0, 0]
            grid_m_in.grad[i, j] = 0
            grid_v_out.grad[i, j] = [0, 0]

    @ti.kernel
    def clear_grid_primal():
        for i, j in grid_m_in:
            grid_v_in[i, j] = [0, 0]
            grid_m_in[i, j] = 0

    @ti.kernel
    def set_v():
        for i in range(n_particles):
            v[0, i] = v0[None] * (1 + 3 * x[0, i][0]) + ti.Vector([x[0, i][1], -x[0, i][0]])
            F[0, i] = ti.Matrix.identity(float, 2)

    @ti.kernel
    def p2g(f: ti.i32):
        for p in range(n_particles):
            base = ti.cast(x[f, p] * inv_dx - 0.5, ti.i32)
            fx = x[f, p] * inv_dx - ti.cast(base, float)
            w = [0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1) ** 2, 0.5 * (fx - 0.5) ** 2]
            new_F = (ti.Matrix.identity(float, 2) + dt * C[f, p]) @ F[f, p]
            F[f + 1, p] = new_F
            J = new_F.determinant()
            stress = -dt * p_vol * (J - 1) * 4 * inv_dx * inv_dx * E
            affine = ti.Matrix([[stress, 0], [0, stress]]) + p_mass * C[f, p]
            for i in ti.static(range(3)):
                for j in ti.static(range(3)):
                    offset = ti.Vector([i, j])
                    dpos = (ti.cast(offset, float) - fx) * dx
                    weight = w[i][0] * w[j][1]
                    grid_v_in[base + offset] += weight * (p_mass * v[f, p] + affine @ dpos)
                    grid_m_in[base + offset] += weight * p_mass

    @ti.kernel
    def grid_op():
        for i, j in grid_m_in:
            inv_m = 1 / (grid_m_in[i, j] + 1e-10)
            v_out = inv_m * grid_v_in[i, j]
            v_out[1] -= dt * 9.8
            if j < 3 and v_out[1] < 0:
                v_out[1] = 0
            grid_v_out[i, j] = v_out

    @ti.kernel
    def g2p(f: ti.i32):
        for p in range(n_particles):
            base = ti.cast(x[f, p] * inv_dx - 0.5, ti.i32)
            fx = x[f, p] * inv_dx - ti.cast(base, float)
            w = [0.5 * (1.5 - fx) ** 2, 0.75 - (fx - 1.0) ** 2, 0.5 * (fx - 0.5) ** 2]
            new_v = ti.Vector([0.0, 0.0])
            new_C = ti.Matrix([[0.0, 0.0], [0.0, 0.0]])
            for i in ti.static(range(3)):
                for j in ti.static(range(3)):
                    dpos = ti.cast(ti.Vector([i, j]), float) - fx
                    g_v = grid_v_out[base[0] + i, base[1] + j]
                    weight = w[i][0] * w[j][1]
                    new_v += weight * g_v
                    new_C += 4 * weight * g_v.outer_product(dpos) * inv_dx
            v[f + 1, p] = new_v
            x[f + 1, p] = x[f, p] + dt * v[f + 1, p]
            C[f + 1, p] = new_C

    @ti.kernel
    def compute_loss():
        for i in range(n_particles):
            d = x[T, i] - ti.Vector([0.6, 0.5])
            loss[None] += 0.5 * d.dot(d)

    @ti.ad.grad_replaced
    def substep(s):
        clear_grid()
        p2g(s)
        grid_op()
        g2p(s)

    @ti.ad.grad_for(substep)
    def substep_grad(s):
        clear_grid()
        p2g(s)
        grid_op()
        g2p.grad(s)
        grid_op.grad()
        p2g.grad(s)

    def plain(s):
        clear_grid_primal()
        p2g(s)
        grid_op()
        g2p(s)

    rng = np.random.default_rng(3)
    xs = np.zeros((T + 1, n_particles, 2))
    xs[0] = 0.3 + 0.3 * rng.random((n_particles, 2))
    x.from_numpy(xs)
    v0[None] = [0.5, -0.3]
    with ti.ad.Tape(loss):
        set_v()
        if mode == 'full':
            for s in range(T):
                substep(s)
        else:
            ti.ad.checkpointed(substep if mode == 'ck' else plain, steps=T, every=every)
        compute_loss()
    return dict(loss=loss[None], v0=v0.grad.to_numpy(), x0=x.grad.to_numpy()[0],
                final=x.to_numpy()[T])


@pytest.mark.parametrize('every', [None, 3])
def test_diffmpm_bit_identical_f32(every):
    full = diffmpm(10, 'full')
    ck = diffmpm(10, 'ck', every)
    plain = diffmpm(10, 'plain', every)
    for r in (ck, plain):
        assert r['loss'] == full['loss']
        np.testing.assert_array_equal(r['final'], full['final'])
        if _deterministic():
            np.testing.assert_array_equal(r['v0'], full['v0'])
            np.testing.assert_array_equal(r['x0'], full['x0'])
        else:  # float atomics in P2G and its adjoint: the full Tape's own spread
            np.testing.assert_allclose(r['v0'], full['v0'], rtol=1e-4)
    assert np.abs(full['v0']).max() > 1e-3


@pytest.mark.requires('float64')
def test_diffmpm_bit_identical_f64():
    full = diffmpm(8, 'full', fp=ti.f64)
    for r in (diffmpm(8, 'ck', fp=ti.f64), diffmpm(8, 'plain', 3, fp=ti.f64)):
        assert r['loss'] == full['loss'] or not _deterministic()
        if _deterministic():
            np.testing.assert_array_equal(r['v0'], full['v0'])
            np.testing.assert_array_equal(r['x0'], full['x0'])
        np.testing.assert_allclose(r['v0'], full['v0'], rtol=1e-10)


def _deterministic():
    """Float atomics run in one order: lavapipe with LP_NUM_THREADS=0 (one thread)."""
    import os
    return os.environ.get('LP_NUM_THREADS') == '0'


# ---------------------------------------------------------------- Python state between steps
def _chain(T=6):
    ti.init()
    x = ti.field(ti.f32, shape=T + 1, needs_grad=True)
    c = ti.field(ti.f32, shape=(), needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def mul(t: ti.i32):
        x[t + 1] = x[t] * c[None]

    @ti.kernel
    def mul_by(t: ti.i32, a: ti.f32):
        x[t + 1] = x[t] * a

    @ti.kernel
    def add(t: ti.i32):
        x[t + 1] = x[t] + c[None]

    @ti.kernel
    def final():
        loss[None] = x[T] * x[T]
    x[0] = 1.0
    c[None] = 0.9
    return x, c, loss, mul, mul_by, add, final


def test_field_written_from_python_inside_a_step_is_captured():
    """c[None] = a_t from Python scope before each step's kernel: the replay writes the same
    values again (a full Tape would replay the last one into every adjoint)."""
    T = 6
    x, c, loss, mul, _, _, final = _chain(T)
    a = 0.5 + 0.1 * np.arange(T)

    def step(t):
        c[None] = float(a[t])
        mul(t)
    with ti.ad.Tape(loss):
        ti.ad.checkpointed(step, steps=T, every=2)
        final()
    prod = np.prod(a.astype(np.float32))
    np.testing.assert_allclose(x.grad[0], 2 * prod * prod, rtol=1e-5)
    assert c[None] == np.float32(a[-1])  # the forward pass's last value stays


def test_python_branch_on_device_values_is_replayed():
    T = 8
    x, c, loss, mul, _, add, final = _chain(T)

    def step(t):
        (mul if x[t] > 0.6 else add)(t)   # a device value read in Python picks the kernel
    with ti.ad.Tape(loss):
        ti.ad.checkpointed(step, steps=T, every=3)
        final()
    ck = (loss[None], x.grad.to_numpy().copy(), c.grad[None])
    x2, c2, loss2, mul2, _, add2, final2 = _chain(T)
    with ti.ad.Tape(loss2):
        for t in range(T):
            (mul2 if x2[t] > 0.6 else add2)(t)
        final2()
    assert ck[0] == loss2[None] and ck[2] == c2.grad[None]
    np.testing.assert_array_equal(ck[1], x2.grad.to_numpy())


def test_scalar_argument_that_changes_is_replayed_as_recorded():
    T = 5
    x, c, loss, _, mul_by, _, final = _chain(T)
    factor = {'a': 0.7}

    def step(t):
        mul_by(t, factor['a'])
    with ti.ad.Tape(loss):
        ti.ad.checkpointed(step, steps=T, every=2)
        factor['a'] = 100.0    # Python state the steps used, changed before the backward pass
        final()
    np.testing.assert_allclose(x.grad[0], 2 * 0.7 ** (2 * T), rtol=1e-5)


def test_grad_replaced_step_whose_python_state_changed_is_refused():
    T = 4
    x, c, loss, _, mul_by, _, final = _chain(T)
    factor = {'a': 0.7}

    @ti.ad.grad_replaced
    def step(t):
        mul_by(t, factor['a'])

    @ti.ad.grad_for(step)
    def step_grad(t):
        mul_by.grad(t, factor['a'])
    with pytest.raises(CheckpointError, match='mul_by'):
        with ti.ad.Tape(loss):
            ti.ad.checkpointed(step, steps=T, every=2)
            factor['a'] = 0.5   # the recomputed grad_replaced step would launch mul_by(.., 0.5)
            final()


def test_field_the_steps_read_changed_from_python_is_refused():
    x, c, loss, mul, _, _, final = _chain()
    with pytest.raises(CheckpointError, match=r'field c\b.*changed'):
        with ti.ad.Tape(loss):
            ti.ad.checkpointed(mul, steps=6)
            c[None] = 2.0
            final()


def test_field_the_steps_read_overwritten_by_a_later_launch_is_refused():
    x, c, loss, mul, _, _, final = _chain()

    @ti.kernel
    def bump():
        c[None] = 3.0
    with pytest.raises(CheckpointError, match='field c'):
        with ti.ad.Tape(loss):
            ti.ad.checkpointed(mul, steps=6)
            bump()
            final()


def test_random_in_a_step_is_refused():
    x, c, loss, _, _, _, final = _chain()

    @ti.kernel
    def noisy(t: ti.i32):
        x[t + 1] = x[t] * (1 + 0.01 * ti.random())
    live = ti.ad.checkpoint_memory()['live']
    with pytest.raises(CheckpointError, match='ti.random'):
        with ti.ad.Tape(loss):
            ti.ad.checkpointed(noisy, steps=6)
            final()
    assert ti.ad.checkpoint_memory()['live'] == live   # its snapshots went back to the pool


def test_nested_blocks_and_forward_mode_are_refused():
    x, c, loss, mul, _, _, final = _chain()
    with pytest.raises(CheckpointError, match='nested'):
        with ti.ad.Tape(loss):
            ti.ad.checkpointed(lambda t: ti.ad.checkpointed(mul, steps=1), steps=2)
    ti.root.lazy_dual()
    with pytest.raises(CheckpointError, match='FwdMode'):
        with ti.ad.FwdMode(loss=loss, param=c):
            ti.ad.checkpointed(mul, steps=2)


def test_without_a_tape_it_is_a_loop():
    x, c, loss, mul, _, _, final = _chain(4)
    ti.ad.checkpointed(mul, steps=4)
    np.testing.assert_allclose(x.to_numpy(), 0.9 ** np.arange(5), rtol=1e-6)


def test_budget_bytes():
    big = mass_spring(16, 'inplace', budget=1 << 30)
    assert big['block'].every == 16        # one segment: the fewest snapshots
    ti.ad.checkpoint.reset_peak()
    small = mass_spring(16, 'inplace', budget=2000)
    assert 1 < small['block'].every < 16
    assert ti.ad.checkpoint_memory()['peak'] <= 2000
    _same(big, small)
    with pytest.raises(CheckpointBudgetError, match='budget_bytes=100 '):
        mass_spring(16, 'inplace', budget=100)
    with pytest.raises(MemoryError):
        mass_spring(16, 'inplace', budget=100)


def test_bad_arguments():
    with pytest.raises(AutodiffError, match='steps must be'):
        ti.ad.checkpointed(lambda t: None, steps=-1)
    with pytest.raises(AutodiffError, match='not both'):
        ti.ad.checkpointed(lambda t: None, steps=3, every=1, budget_bytes=10)
    with pytest.raises(AutodiffError, match='every must be'):
        ti.ad.checkpointed(lambda t: None, steps=3, every=0)
    with pytest.raises(AutodiffError, match='callable'):
        ti.ad.checkpointed(3, steps=3)


# ---------------------------------------------------------------- inside a larger Tape
def _inplace(T=6):
    """y = x0^2 before the block; the block maps x to 0.3 x^2 + 0.5 x in place (a ping-pong between
    x and z) and accumulates into acc every step; loss = acc + y * final."""
    ti.init()
    x = ti.field(ti.f32, shape=4, needs_grad=True)
    z = ti.field(ti.f32, shape=4, needs_grad=True)
    y = ti.field(ti.f32, shape=4, needs_grad=True)
    acc = ti.field(ti.f32, shape=(), needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def pre():
        for i in x:
            y[i] = x[i] * x[i]

    @ti.kernel
    def step(a: ti.template(), b: ti.template()):
        for i in a:
            b[i] = 0.3 * a[i] * a[i] + 0.5 * a[i]
            acc[None] += 0.1 * a[i] * a[i]

    @ti.kernel
    def final(a: ti.template()):
        for i in a:
            loss[None] += acc[None] / 4 + y[i] * a[i]

    def pingpong(t):
        step(x, z) if t % 2 == 0 else step(z, x)
    x.from_numpy(np.array([0.3, -0.7, 1.1, 0.2], np.float32))
    return x, z, y, acc, loss, pre, pingpong, final


def _inplace_reference(x0, T):
    """The same computation in numpy (f64), its gradient by central differences."""
    def f(x0):
        x = x0.copy()
        y = x0 * x0
        acc = 0.0
        for _ in range(T):
            acc += 0.1 * (x * x).sum()
            x = 0.3 * x * x + 0.5 * x
        return (acc / 4 + y * x).sum()
    h = 1e-6
    return f(x0), np.array([(f(x0 + h * e) - f(x0 - h * e)) / (2 * h) for e in np.eye(4)])


@pytest.mark.parametrize('every', [None, 1, 4])
def test_earlier_launch_reads_what_the_block_overwrites(every):
    """pre() reads x before the block overwrites it in place: its adjoint, which runs after the
    block's, must see x's old values (the block undoes its writes to x)."""
    T = 7
    x, z, y, acc, loss, pre, pingpong, final = _inplace(T)
    x0 = x.to_numpy().astype(np.float64)
    with ti.ad.Tape(loss):
        pre()
        ti.ad.checkpointed(pingpong, steps=T, every=every)
        final(z if T % 2 else x)
    want_loss, want_grad = _inplace_reference(x0, T)
    assert loss[None] == pytest.approx(want_loss, rel=1e-5)
    np.testing.assert_allclose(x.grad.to_numpy(), want_grad, rtol=2e-4, atol=2e-5)
    # after the Tape: the forward pass's values (x holds step 5's state, acc the full sum)
    xs = x0.copy()
    accs = 0.0
    for _ in range(T):
        accs += 0.1 * (xs * xs).sum()
        xs = 0.3 * xs * xs + 0.5 * xs
    np.testing.assert_allclose((z if T % 2 else x).to_numpy(), xs, rtol=1e-5)
    assert acc[None] == pytest.approx(accs, rel=1e-5)


def test_two_blocks_in_one_tape_and_the_tape_views():
    T = 4
    x, z, y, acc, loss, pre, pingpong, final = _inplace(2 * T)
    x0 = x.to_numpy().astype(np.float64)
    with ti.ad.Tape(loss) as tape:
        pre()
        ti.ad.checkpointed(pingpong, steps=T, every=3)
        ti.ad.checkpointed(pingpong, steps=T, every=2)   # T even: x holds the state again
        final(x)
    want_loss, want_grad = _inplace_reference(x0, 2 * T)
    assert loss[None] == pytest.approx(want_loss, rel=1e-5)
    np.testing.assert_allclose(x.grad.to_numpy(), want_grad, rtol=2e-4, atol=2e-5)
    text = str(tape)
    assert text.count('checkpointed(pingpong)') >= 2 and 'final' in text
    assert 'checkpointed(pingpong)' in tape.to_dot()


def test_field_a_later_segment_reads_overwritten_after_the_block_is_refused():
    """Segment 0 sets c, segment 1 only reads it; a launch after the block overwrites c. c is
    written by the block (so it is not a read-only input), but segment 1's recomputation would
    read the new value: refused (it was a silently wrong gradient)."""
    x, c, loss, mul, _, _, final = _chain(2)

    @ti.kernel
    def set_c(v: ti.f32):
        c[None] = v

    def step(t):
        if t == 0:
            set_c(0.5)
        mul(t)
    with pytest.raises(CheckpointError, match='field c'):
        with ti.ad.Tape(loss):
            ti.ad.checkpointed(step, steps=2, every=1)
            set_c(3.0)
            final()
    # without the overwrite: d loss / d x0 = 2 * x2 * c^2 = 2 * 0.25 * 0.25
    x, c, loss, mul, _, _, final = _chain(2)
    with ti.ad.Tape(loss):
        ti.ad.checkpointed(step, steps=2, every=1)
        final()
    assert x.grad[0] == pytest.approx(2 * 0.25 * 0.25)


def test_repeated_tapes_with_a_block_do_not_replay_and_keep_the_gradient():
    """A Tape repeated with a checkpointed block in it (launch/replay.py replays repeated
    Tapes): the block stops the replay, and every iteration's gradient is the analytic one."""
    ti.init(arch=ti.vulkan, fast_math=False)  # (SwiftShader's sin is ~1e-4 relative)
    n, T = 8, 16
    x = ti.field(ti.f32, n, needs_grad=True)
    a = ti.field(ti.f32, n, needs_grad=True)
    b = ti.field(ti.f32, n, needs_grad=True)
    loss = ti.field(ti.f32, (), needs_grad=True)

    @ti.kernel
    def init():
        for i in x:
            a[i] = x[i]

    @ti.kernel
    def step(src: ti.template(), dst: ti.template(), c: ti.f32):
        for i in range(n):
            dst[i] = ti.sin(src[i]) * c

    @ti.kernel
    def total():
        for i in range(n):
            loss[None] += a[i] ** 2

    def one(t):
        if t % 2 == 0:
            step(a, b, 1.1)
        else:
            step(b, a, 1.1)

    x0 = np.linspace(0.1, 1, n)
    x.from_numpy(x0.astype(np.float32))
    u, d = x0.astype(np.float32).astype(np.float64), np.ones(n)
    for _ in range(T):
        d, u = d * 1.1 * np.cos(u), 1.1 * np.sin(u)
    for _ in range(3):
        with ti.ad.Tape(loss) as tape:
            init()
            ti.ad.checkpointed(one, steps=T)
            total()
        assert not tape.replayed and 'checkpointed' in tape.replay_fallback
        np.testing.assert_allclose(x.grad.to_numpy(), 2 * u * d, rtol=2e-5, atol=1e-6)
        np.testing.assert_allclose(loss[None], (u ** 2).sum(), rtol=1e-5)
