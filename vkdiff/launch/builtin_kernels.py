"""Launch floor: filling fields on the device and zeroing groups of gradient fields. Where the
value's bytes repeat every 4 bytes (any 32-bit value; 0 or a repeating 64-bit one; 8/16-bit
values repeated) and the field is dense, a fill is one native command (vkCmdFillBuffer, recorded
in the batch: no shader to compile or launch); otherwise, and while a Tape or a forward-mode
scope records launches (their adjoint/tangent must run), small kernels do it."""
import numpy as np

from .kernel import kernel, template
from ..frontend.compiletime import grouped, static
from ..lang import blockpool, dynpool, hooks, state
from ..lang.sparse import guards_of


def _make_fill(dtype):
    @kernel
    def fill_kernel(f: template(), v: dtype):
        for I in grouped(f):
            f[I] = v
    return fill_kernel


def _make_fill0(dtype):
    @kernel
    def fill0_kernel(f: template(), v: dtype):
        f[None] = v
    return fill0_kernel


_fills = {}


@hooks.provides('fill_word')
def fill_word(np_dtype, value):
    """The 32-bit word whose repetition is `value` stored as `np_dtype`, or None (a 64-bit
    value whose halves differ)."""
    b = np.asarray(value, dtype=np_dtype).tobytes()
    if len(b) < 4:
        b = b * (4 // len(b))
    if len(b) == 8 and b[:4] != b[4:]:
        return None
    return int.from_bytes(b[:4], 'little')


@hooks.provides('native_runtime')
def native_runtime(fields):
    """The runtime, when these fields' fills and copies may be native commands: a device that
    records them, dense storage, and no Tape / forward mode recording launches (a fill there is
    a kernel launch with an adjoint, as in Taichi). Else None."""
    if state.tape is not None or state.fwd is not None or state.offline is not None:
        return None
    for f in fields:
        if guards_of(f) or dynpool.node_of(f) is not None or blockpool.node_of(f) is not None:
            return None
    rt = state.runtime()
    return rt if rt.can_fill else None


_counted = {}  # the kernel instances the native commands stand for, this ti.init generation


def _count_instance(key, refs):
    """Taichi's get_num_compiled_functions() counts a fill / gradient-clearing kernel once per
    field (per SNode group): a native command counts as the instance it stands for (Taichi's
    own tests count them), once per key."""
    if _counted.get('generation') != state.generation:
        _counted.clear()
        _counted['generation'] = state.generation
    if key not in _counted:
        _counted[key] = refs  # (keeps the fields alive: their ids stay theirs)
        state.compiled_kernels += 1


@hooks.provides('fill_field')
def fill(field, value):
    dt = field.dtype
    rt = native_runtime((field,))
    if rt is not None:
        word = fill_word(dt.np, value)
        if word is not None:
            rt.fill(field.storage, word)
            _count_instance(('fill', id(field)), field)
            return
    key = (dt.name, len(field.shape) == 0)
    k = _fills.get(key)
    if k is None:
        k = _fills[key] = (_make_fill0 if key[1] else _make_fill)(dt)
    k(field, float(value) if dt.is_float else int(value))


@kernel
def _zero_group(fs: template()):
    for I in grouped(fs[0]):
        for f in static(fs):
            f[I] = 0


@kernel
def _zero_group0(fs: template()):
    for f in static(fs):
        f[None] = 0


def zero_fields(fields):
    """Zero fields of one shape: a fill command each where native_runtime allows, else one
    launch (one compiled kernel per tuple of fields, as Taichi's clear_gradients kernel per
    SNode)."""
    fields = tuple(fields)
    rt = native_runtime(fields)
    if rt is not None:
        for f in fields:
            rt.fill(f.storage, 0)
        _count_instance(('zero',) + tuple(map(id, fields)), fields)
        return
    (_zero_group0 if len(fields[0].shape) == 0 else _zero_group)(fields)


@hooks.provides('copy_field')
def copy_field(dst, src):
    """dst's data replaced by src's with one copy command, when both are dense fields of one
    dtype, shape and element order (lang/layout.py) (True); else False (the caller copies
    through the host)."""
    if dst is src or dst.dtype != src.dtype or \
            dst.shape + dst.elem_shape != src.shape + src.elem_shape or \
            dst.buffer.meta.get('strides') != src.buffer.meta.get('strides'):
        return False
    rt = native_runtime((dst, src))
    if rt is None:
        return False
    rt.copy(src.storage, dst.storage)
    return True
