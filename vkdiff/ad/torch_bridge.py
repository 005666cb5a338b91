"""API stage, launch-level autodiff: the PyTorch autograd bridge.

`ti.ad.torch_function(fn, outputs=[...])` wraps a vkdiff computation -- a Python function that
launches kernels over ndarrays -- as a `torch.autograd.Function`:

    def simulate(x, v, loss):             # ndarrays: the inputs, then the outputs
        step(x, v)                        # any number of kernel launches
        energy(x, loss)
    op = ti.ad.torch_function(simulate, outputs=[()])     # one 0-D output
    loss = op(x_tensor, v_tensor)         # torch tensors in, torch tensors out
    loss.backward()                       # x_tensor.grad, v_tensor.grad from vkdiff's adjoints

forward: every tensor argument is copied into a new ndarray (with a gradient when it is a
floating-point tensor), the outputs are new zeroed ndarrays, `fn` runs with its launches recorded
on a Tape, and the outputs come back as new tensors. backward: the gradients of every ndarray the
recorded launches used are zeroed, the outputs' gradients are set from torch's, the recorded
adjoints run in reverse order, and the inputs' gradients are returned as fresh tensors (torch
accumulates them into `.grad`; nothing of the caller's is written in place). A backward can run
again (`retain_graph=True`): it starts from zeroed gradients each time, so it gives the same
result. Non-tensor arguments (numbers, fields) are passed through and get no gradient.
Gradients of global fields the computation uses are not cleared (use ndarrays for state)."""
from ..errors import VkdiffValueError
from ..lang import state
from .. import types as T
from ..lang.ndarray import ndarray
from ..lang.torch_io import check_cpu, is_tensor
from .tape import Tape


def _torch():
    try:
        import torch
    except ImportError:
        raise VkdiffValueError('ti.ad.torch_function needs PyTorch (pip install torch)') from None
    return torch


def _dtype(torch_dtype):
    import numpy as np
    return T.resolve(np.dtype(str(torch_dtype).replace('torch.', '')))


def _output_spec(spec, default_dtype):
    """`shape` or `(shape, dtype)` -> (shape tuple, DataType)."""
    if isinstance(spec, tuple) and len(spec) == 2 and isinstance(spec[0], (tuple, list, int)) \
            and not isinstance(spec[1], int):
        shape, dt = spec
        dt = T.resolve(dt)
    else:
        shape, dt = spec, default_dtype
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return shape, dt


def torch_function(fn, outputs=((),)):
    """A callable taking torch tensors (and other arguments, passed through) and returning the
    output tensors (one tensor for one output), differentiable by torch (see the module doc).
    `outputs`: a list of shapes, or (shape, dtype) pairs; the dtype defaults to the first
    floating-point input's."""
    torch = _torch()
    specs = list(outputs)

    class VkdiffFunction(torch.autograd.Function):
        @staticmethod
        def forward(ctx, *args):
            return _forward(ctx, fn, specs, args)

        @staticmethod
        def backward(ctx, *grads):
            return _backward(ctx, grads)

    def apply(*args):
        out = VkdiffFunction.apply(*args)
        return out[0] if len(specs) == 1 else out

    apply.__name__ = getattr(fn, '__name__', 'vkdiff_function')
    apply.__wrapped__ = fn
    return apply


@state.synchronized
def _forward(ctx, fn, specs, args):
    inputs, nd_args, default = [], [], None
    for a in args:
        if is_tensor(a):
            check_cpu(a, 'ti.ad.torch_function')
            dt = _dtype(a.dtype)
            if default is None and dt.is_float:
                default = dt
            nd = ndarray(dt, tuple(a.shape) or (), needs_grad=dt.is_float)
            nd.from_torch(a)
            inputs.append(nd)
            nd_args.append(nd)
        else:
            inputs.append(None)
            nd_args.append(a)
    if default is None:
        default = T.Defaults.fp
    outs = []
    for spec in specs:
        shape, dt = _output_spec(spec, default)
        outs.append(ndarray(dt, shape, needs_grad=dt.is_float))
    if state.tape is not None:
        raise VkdiffValueError('ti.ad.torch_function inside a ti.Tape: the torch function '
                               'records its own launches')
    tape = Tape(clear_gradients=False)
    state.tape = tape
    try:
        fn(*nd_args, *outs)
    finally:
        state.tape = None
    tape.check()  # the global data access rules, before the adjoints ever run
    ctx.vk = (tape, inputs, outs)
    ctx.devices = [a.device if is_tensor(a) else None for a in args]
    return tuple(o.to_torch() for o in outs)


@state.synchronized
def _backward(ctx, grads):
    tape, inputs, outs = ctx.vk
    tape._clear_array_grads()  # every gradient the recorded launches accumulate into
    for o, g in zip(outs, grads):
        if o.grad is None:
            continue
        if g is None:
            o.grad.fill(0)
        else:
            o.grad.from_torch(g.reshape(o.shape) if o.shape else g.reshape(()))
    tape.grad()
    result = []
    for nd, dev in zip(inputs, ctx.devices):
        if nd is None or nd.grad is None:
            result.append(None)
        else:
            t = nd.grad.to_torch()
            result.append(t.to(dev) if dev is not None and str(dev) != 'cpu' else t)
    return tuple(result)

