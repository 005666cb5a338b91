"""API stage: small kernels vkdiff itself uses (filling a field on the device)."""
from .kernel import kernel, template
from . import api


def _make_fill(dtype):
    @kernel
    def fill_kernel(f: template(), v: dtype):
        for I in api.grouped(f):
            f[I] = v
    return fill_kernel


def _make_fill0(dtype):
    @kernel
    def fill0_kernel(f: template(), v: dtype):
        f[None] = v
    return fill0_kernel


_fills = {}


def fill(field, value):
    dt = field.dtype
    key = (dt.name, len(field.shape) == 0)
    k = _fills.get(key)
    if k is None:
        k = _fills[key] = (_make_fill0 if key[1] else _make_fill)(dt)
    k(field, float(value) if dt.is_float else int(value))
