"""API stage, launch-level autodiff (`ti.ad`): what runs kernels' derivatives at the level of
whole launches -- the Tape (reverse mode), FwdMode (forward mode), custom gradients
(grad_replaced / grad_for / jvp_for / no_grad), Hessian-vector products, gradient checking,
checkpointed time loops (ad/checkpoint.py), the Tape's access validation and its text/DOT view. The IR transforms themselves (adjoint and
tangent kernels) live in vkdiff/autodiff/."""
from .tape import Tape, clear_all_gradients
from .forward import FwdMode, hvp
from .custom import grad_replaced, grad_for, jvp_for, no_grad
from .check import gradcheck
from .torch_bridge import torch_function
from .checkpoint import checkpointed, memory_stats as checkpoint_memory

__all__ = ['Tape', 'FwdMode', 'clear_all_gradients', 'grad_replaced', 'grad_for', 'jvp_for',
           'no_grad', 'hvp', 'gradcheck', 'torch_function', 'checkpointed',
           'checkpoint_memory']
