"""API stage: small kernels vkdiff itself uses (filling a field on the device, zeroing groups of
gradient fields)."""
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


@kernel
def _zero_group(fs: template()):
    for I in api.grouped(fs[0]):
        for f in api.static(fs):
            f[I] = 0


@kernel
def _zero_group0(fs: template()):
    for f in api.static(fs):
        f[None] = 0


def zero_fields(fields):
    """Zero fields of one shape in one launch (one compiled kernel per tuple of fields, as
    Taichi's clear_gradients kernel per SNode)."""
    fields = tuple(fields)
    (_zero_group0 if len(fields[0].shape) == 0 else _zero_group)(fields)
