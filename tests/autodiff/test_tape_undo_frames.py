"""A launch that overwrites what an earlier launch of a plain Tape read (Taichi's access rule 1
across launches) gets an undo frame (vkdiff/ad/tape_undo.py): gradients against f64 central
differences, and the refusals that remain."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.errors import AccessRuleError

N, T = 8, 4


def _setup():
    ti.init(arch=ti.vulkan, default_fp=ti.f64)
    x = ti.field(ti.f64, shape=(T + 1, N), needs_grad=True)
    v = ti.field(ti.f64, shape=N, needs_grad=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True)
    return x, v, loss


@pytest.mark.requires('float64')
def test_overwrite_after_read_across_launches_is_undone():
    """square reads y; set_y then overwrites y: refused before (AccessRuleError), now the
    gradient of both reads of y is right and y holds its final value after the Tape."""
    ti.init(arch=ti.vulkan, default_fp=ti.f64)
    y = ti.field(ti.f64, shape=N, needs_grad=True)
    w = ti.field(ti.f64, shape=N, needs_grad=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def square():
        for i in y:
            loss[None] += y[i] * y[i]

    @ti.kernel
    def set_y():
        for i in y:
            y[i] = 3.0 * w[i]

    @ti.kernel
    def cube():
        for i in y:
            loss[None] += y[i] * y[i] * y[i]

    y0 = np.linspace(-1, 1, N)
    w0 = np.linspace(0.5, 1.5, N)
    y.from_numpy(y0)
    w.from_numpy(w0)
    with ti.ad.Tape(loss, undo=True) as tape:
        square()
        set_y()
        cube()
    np.testing.assert_allclose(y.grad.to_numpy(), 2 * y0, rtol=1e-12)
    np.testing.assert_allclose(w.grad.to_numpy(), 3 * 3 * (3 * w0) ** 2, rtol=1e-12)
    np.testing.assert_allclose(y.to_numpy(), 3 * w0)  # the forward pass's final values
    assert tape.undo_bytes == 2 * N * 8  # one frame of y, one final copy


@pytest.mark.requires('float64')
def test_clamp_in_place_boundary_over_steps_matches_central_differences():
    """The diff_sph pattern across launches: advance writes x[t], boundary reads it (a clamped
    copy), write_back overwrites x[t] in place; later steps and the loss read it."""
    x, v, loss = _setup()
    c = ti.field(ti.f64, shape=N, needs_grad=True)
    lo, hi = -0.3, 0.4

    @ti.kernel
    def advance(t: ti.i32):
        for i in range(N):
            x[t, i] = x[t - 1, i] + 0.25 * v[i] * ti.sin(x[t - 1, i] + 1.0)

    @ti.kernel
    def clamp(t: ti.i32):
        for i in range(N):
            c[i] = ti.min(ti.max(x[t, i], lo), hi)

    @ti.kernel
    def write_back(t: ti.i32):
        for i in range(N):
            x[t, i] = c[i]

    def boundary(t):
        clamp(t)
        write_back(t)

    @ti.kernel
    def compute_loss():
        for t, i in ti.ndrange((1, T + 1), N):
            loss[None] += x[t, i] * x[t, i] * (1.0 + 0.1 * i)

    x0 = np.linspace(-0.5, 0.5, N)
    v0 = np.linspace(-1.0, 1.2, N)

    def run(xs, vs, grad):
        a = np.zeros((T + 1, N))
        a[0] = xs
        x.from_numpy(a)
        v.from_numpy(vs)
        if not grad:
            loss[None] = 0.0
            for t in range(1, T + 1):
                advance(t)
                boundary(t)
            compute_loss()
            return loss[None]
        with ti.ad.Tape(loss, undo=True):
            for t in range(1, T + 1):
                advance(t)
                boundary(t)
            compute_loss()
        return x.grad.to_numpy()[0], v.grad.to_numpy()

    gx, gv = run(x0, v0, True)
    h = 1e-6
    for k in range(N):
        e = np.zeros(N)
        e[k] = h
        fx = (run(x0 + e, v0, False) - run(x0 - e, v0, False)) / (2 * h)
        fv = (run(x0, v0 + e, False) - run(x0, v0 - e, False)) / (2 * h)
        assert abs(gx[k] - fx) < 1e-6 * (1 + abs(fx)), (k, gx[k], fx)
        assert abs(gv[k] - fv) < 1e-6 * (1 + abs(fv)), (k, gv[k], fv)
    assert np.any(gv == 0) and np.any(gv != 0)  # some particles hit the walls, others did not


@pytest.mark.requires('float64')
def test_read_then_overwrite_inside_one_kernel_is_still_refused():
    """diff_sph's boundary_handle clamps F_pos in place inside ONE kernel: the adjoint re-reads
    the element after the store; no undo frame makes that right, and it stays an
    AccessRuleError (Taichi differentiates it silently)."""
    x, v, loss = _setup()

    @ti.kernel
    def boundary(t: ti.i32):
        for i in range(N):
            if x[t, i] < 0.0:
                x[t, i] = 0.0

    @ti.kernel
    def compute_loss():
        for i in range(N):
            loss[None] += x[1, i] * x[1, i]

    with pytest.raises(AccessRuleError, match='rule 1 broken in kernel boundary'):
        with ti.ad.Tape(loss, undo=True):
            boundary(1)
            compute_loss()


def test_overwritten_ndarray_is_still_refused():
    """An ndarray that a later launch overwrites gets no undo frame: the Tape's check refuses."""
    ti.init(arch=ti.vulkan)
    a = ti.ndarray(ti.f32, shape=N, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def use(a: ti.types.ndarray()):
        for i in range(N):
            loss[None] += a[i] * a[i]

    @ti.kernel
    def overwrite(a: ti.types.ndarray()):
        for i in range(N):
            a[i] = 1.0

    a.fill(2.0)
    with pytest.raises(AccessRuleError):
        with ti.ad.Tape(loss, undo=True):
            use(a)
            overwrite(a)


def test_without_undo_the_overwrite_is_refused():
    ti.init(arch=ti.vulkan)
    y = ti.field(ti.f32, shape=N, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def square():
        for i in y:
            loss[None] += y[i] * y[i]

    @ti.kernel
    def set_y():
        for i in y:
            y[i] = 1.0

    with pytest.raises(AccessRuleError, match='undo=True'):
        with ti.ad.Tape(loss):
            square()
            set_y()


@pytest.mark.requires('float64')
def test_repeated_undo_tapes_are_not_replayed_and_keep_the_gradient():
    """An optimisation loop repeats a Tape(undo=True) (launch/replay.py replays repeated
    Tapes): its undo frames are taken before plain launches, so it never replays, and every
    iteration's gradient is the analytic one."""
    ti.init(arch=ti.vulkan, default_fp=ti.f64)
    y = ti.field(ti.f64, shape=N, needs_grad=True)
    w = ti.field(ti.f64, shape=N, needs_grad=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def square():
        for i in y:
            loss[None] += y[i] * y[i]

    @ti.kernel
    def set_y():
        for i in y:
            y[i] = 3.0 * w[i]

    y0 = np.linspace(-1, 1, N)
    w0 = np.linspace(0.5, 1.5, N)
    w.from_numpy(w0)
    for _ in range(3):
        y.from_numpy(y0)
        with ti.ad.Tape(loss, undo=True) as tape:
            square()
            set_y()
            square()
        assert not tape.replayed and tape.replay_fallback == 'Tape(undo=True)'
        np.testing.assert_allclose(y.grad.to_numpy(), 2 * y0, rtol=1e-12)
        np.testing.assert_allclose(w.grad.to_numpy(), 3 * 2 * (3 * w0), rtol=1e-12)
