"""The PyTorch boundary with gradients: torch tensors as kernel arguments, kernel.grad over
ndarrays, Tape over ndarrays, and the autograd bridge (ti.ad.torch_function) checked with
torch.autograd.gradcheck in f64, a torch optimiser loop, and repeated backward."""
import numpy as np
import pytest

import vkdiff as ti

torch = pytest.importorskip('torch')


@ti.kernel
def _sq_sin(x: ti.types.ndarray(), y: ti.types.ndarray()):
    for i in x:
        y[i] = ti.sin(x[i]) * x[i] * x[i]


@ti.kernel
def _weighted_sum(y: ti.types.ndarray(), w: ti.types.ndarray(), out: ti.types.ndarray()):
    for i in y:
        out[None] += w[i] * y[i] * y[i]


def test_torch_tensors_as_kernel_arguments():
    @ti.kernel
    def sq(t: ti.types.ndarray(), o: ti.types.ndarray()):
        for i in range(t.shape[0]):
            o[i] = t[i] * t[i]

    t = torch.arange(6, dtype=torch.float32)
    o = torch.zeros(6)
    sq(t, o)
    assert torch.equal(o, t * t)
    x = torch.zeros(5, 4, dtype=torch.int32)

    @ti.kernel
    def idx(a: ti.types.ndarray(dtype=ti.i32, ndim=2)):
        for i, j in a:
            a[i, j] = i * 10 + j

    idx(x)
    assert torch.equal(x, torch.arange(5)[:, None] * 10 + torch.arange(4)[None, :])
    with pytest.raises(ValueError, match='Non contiguous'):
        idx(torch.zeros(4, 5, dtype=torch.int32).T)
    z = torch.zeros(0, dtype=torch.int32)
    idx(z.reshape(0, 3))               # empty tensors: nothing to do, no error


@pytest.mark.requires('float64')
def test_kernel_grad_over_ndarrays_matches_analytic():
    n = 16
    xs = np.linspace(-2, 2, n)
    x = ti.ndarray(ti.f64, n, needs_grad=True)
    y = ti.ndarray(ti.f64, n, needs_grad=True)
    x.from_numpy(xs)
    _sq_sin(x, y)
    np.testing.assert_allclose(y.to_numpy(), np.sin(xs) * xs * xs, rtol=1e-13)
    y.grad.fill(1.0)
    _sq_sin.grad(x, y)
    np.testing.assert_allclose(x.grad.to_numpy(), np.cos(xs) * xs ** 2 + 2 * xs * np.sin(xs),
                               rtol=1e-12, atol=1e-14)


@pytest.mark.requires('float64')
def test_tape_over_ndarrays_with_0d_loss():
    n = 10
    rng = np.random.default_rng(2)
    xs, ws = rng.standard_normal(n), rng.standard_normal(n)
    x = ti.ndarray(ti.f64, n, needs_grad=True)
    y = ti.ndarray(ti.f64, n, needs_grad=True)
    w = ti.ndarray(ti.f64, n)
    loss = ti.ndarray(ti.f64, (), needs_grad=True)
    x.from_numpy(xs)
    w.from_numpy(ws)
    with ti.ad.Tape(loss=loss):
        _sq_sin(x, y)
        _weighted_sum(y, w, loss)
    ys = np.sin(xs) * xs * xs
    assert loss[None] == pytest.approx((ws * ys * ys).sum(), rel=1e-12)
    dy = np.cos(xs) * xs ** 2 + 2 * xs * np.sin(xs)
    np.testing.assert_allclose(x.grad.to_numpy(), 2 * ws * ys * dy, rtol=1e-11, atol=1e-14)


def _sim(x, w, out):
    y = ti.ndarray(x.dtype, x.shape, needs_grad=True)
    _sq_sin(x, y)
    _weighted_sum(y, w, out)


@pytest.mark.requires('float64')
def test_bridge_gradcheck_f64():
    op = ti.ad.torch_function(_sim, outputs=[()])
    x = torch.rand(7, dtype=torch.float64, requires_grad=True)
    w = torch.rand(7, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(op, (x, w), eps=1e-6, atol=1e-8)


@pytest.mark.requires('float64')
def test_bridge_vector_output_gradcheck():
    def f(x, y):
        _sq_sin(x, y)
    op = ti.ad.torch_function(f, outputs=[(5,)])
    x = torch.rand(5, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(op, (x,), eps=1e-6, atol=1e-8)


@pytest.mark.requires('float64')
def test_bridge_repeated_backward_and_fresh_grads():
    op = ti.ad.torch_function(_sim, outputs=[()])
    x = torch.rand(6, dtype=torch.float64, requires_grad=True)
    w = torch.rand(6, dtype=torch.float64)
    loss = op(x, w)
    loss.backward(retain_graph=True)
    g1 = x.grad.clone()
    loss.backward()                     # torch accumulates: exactly twice the first
    torch.testing.assert_close(x.grad, 2 * g1)
    x.grad = None
    (3 * op(x, w)).backward()           # the chain rule through torch ops
    torch.testing.assert_close(x.grad, 3 * g1)
    xd = x.detach()
    ref = (2 * w * (torch.sin(xd) * xd ** 2) * (torch.cos(xd) * xd ** 2 + 2 * xd * torch.sin(xd)))
    torch.testing.assert_close(g1, ref)


@pytest.mark.requires('float64')
def test_bridge_inside_a_torch_model_loss_falls():
    """A torch Linear layer trained by Adam through a vkdiff loss: the losses are those of the
    same loss written in torch, step for step, and they fall."""
    target = torch.tensor([0.3, -0.2, 0.5, 0.1], dtype=torch.float64)

    @ti.kernel
    def err(p: ti.types.ndarray(), t: ti.types.ndarray(), loss: ti.types.ndarray()):
        for i in p:
            d = ti.tanh(p[i]) - t[i]
            loss[None] += d * d

    op = ti.ad.torch_function(err, outputs=[()])
    inp = torch.tensor([1.0, -1.0, 0.5], dtype=torch.float64)

    def train(loss_fn):
        torch.manual_seed(0)
        lin = torch.nn.Linear(3, 4).double()
        opt = torch.optim.Adam(lin.parameters(), lr=0.05)
        losses = []
        for _ in range(40):
            opt.zero_grad()
            loss = loss_fn(lin(inp))
            loss.backward()
            opt.step()
            losses.append(loss.item())
        return np.array(losses)

    ours = train(lambda p: op(p, target))
    ref = train(lambda p: ((torch.tanh(p) - target) ** 2).sum())
    np.testing.assert_allclose(ours, ref, rtol=1e-9)
    assert ours[-1] < 0.01 * ours[0]


def _load_example(name):
    import importlib.util
    import os
    path = os.path.join(os.path.dirname(__file__), '..', '..', 'examples', f'{name}.py')
    spec = importlib.util.spec_from_file_location(f'example_{name}', path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.requires('float64')
def test_example_torch_projectile_gradient_and_training():
    """examples/torch_projectile.py: the bridge's gradient of the whole simulation (60 launches
    and their adjoints) against central differences of the example's float64 numpy copy, and a
    short training run whose loss falls."""
    ex = _load_example('torch_projectile')
    ti.init(default_fp=ti.f64)
    steps = 60
    true = np.array([6.0, 5.0, np.log(0.15)])
    obs_t = np.linspace(steps // 6, steps - 1, 5).astype(np.int32)
    obs = ex.reference(true, steps)[obs_t]
    op = ti.ad.torch_function(lambda p, ot, o, loss: ex.simulate(p, ot, o, steps, loss),
                              outputs=[()])
    p0 = np.array([3.0, 3.0, np.log(0.5)])
    p = torch.tensor(p0, requires_grad=True)
    loss = op(p, torch.from_numpy(obs_t), torch.from_numpy(obs))
    loss.backward()

    def ref_loss(q):
        return ((ex.reference(q, steps)[obs_t] - obs) ** 2).sum()
    assert loss.item() == pytest.approx(ref_loss(p0), rel=1e-12)
    fd = np.array([(ref_loss(p0 + e) - ref_loss(p0 - e)) / 2e-6 for e in np.eye(3) * 1e-6])
    np.testing.assert_allclose(p.grad.numpy(), fd, rtol=1e-6)
    res = ex.main(['--iters', '12', '--steps', '60', '--quiet'])
    assert res['losses'][-1] < 0.2 * res['losses'][0]
