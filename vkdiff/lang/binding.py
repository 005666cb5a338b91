"""Data floor: binding the IR's Buffers (ir.Buffer) to device storage. The compiler names memory
by Buffers only; at launch each Buffer of a compiled task is bound to storage by its role:
  'field' / 'grad' / 'dual' of a user Field -> that Field's storage (the Field holds its Buffer and
      registers itself here as its owner);
  'temp', and gradients / duals the compiler derived from temporaries -> storage allocated here on
      first use, keyed by the Buffer, alive until ti.init() / ti.reset() (as the kernels that use
      it: they are compiled again after a reset, with new temporaries);
  'arg' -> the array passed for that kernel parameter at this launch (issue 12).
Bind lists are computed once per compiled task (launch.compiled); only 'arg' Buffers would need a
per-launch lookup."""
import weakref

from ..errors import VkdiffError
from . import state

_owners = weakref.WeakValueDictionary()  # Buffer -> the Field holding it


def register(field):
    """`field.buffer` belongs to `field` (its storage is the field's)."""
    _owners[field.buffer] = field


def owner(buf):
    """The Field whose Buffer this is, or None (a compiler temporary, an argument)."""
    return _owners.get(buf)


def storage_for(buf, launch_args=None):
    """The device Storage a Buffer is bound to (allocated on first use for temporaries)."""
    f = _owners.get(buf)
    if f is not None:
        return f.storage
    if buf.role == 'arg':
        raise VkdiffError(f'kernel argument array {buf.name} is bound at launch; no array was '
                          'passed for it')
    return temp_storage(buf)


def temp_storage(buf):
    st = state.temps.get(buf)
    if st is None:
        # cycle: field.py imports this module
        from .field import rt_storage
        st = state.temps[buf] = rt_storage(state.runtime(), buf.shape + buf.elem_shape,
                                           buf.dtype, buf.name)
    return st


def status_buffer(rt, attr, make, report):
    """A runtime-wide device status Buffer (`rt.<attr>`, made by `make()` on first use) that
    kernels store an error code into. It is read back at every sync that follows a launch
    writing it; nonzero words are cleared (so the next launch starts clean) and then passed to
    `report(words)`, which raises the error they describe."""
    buf = getattr(rt, attr, None)
    if buf is None:
        buf = make()
        setattr(rt, attr, buf)
        st = temp_storage(buf)

        def check():
            if st.host.any():
                words = st.host.copy()
                st.for_host_overwrite()[...] = 0
                report(words)
        rt.status_checks.append((st, check))
    return buf


def host_load(buf, flat_index):
    """For passes.host_eval: scalar `flat_index` of `buf` when the host copy is current (a field
    set from Python, e.g. `n[None] = 100` for a loop's trip count), else None."""
    f = _owners.get(buf)
    if f is None:
        return None  # a temporary: only the device has it
    st = f._storage
    if st is None or st.state == 'device':
        return None  # never written, or the device copy is newer
    v = st.host.reshape(-1)[flat_index]
    return v.item() if buf.dtype.is_float else int(v)


def host_load_synced(buf, flat_index):
    """host_load, downloading a field whose device copy is newer (a sync: what is recorded so
    far is submitted and waited for)."""
    f = _owners.get(buf)
    st = f._storage if f is not None else None
    if st is not None and st.state == 'device':
        st.for_host_read()
    return host_load(buf, flat_index)
