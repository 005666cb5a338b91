"""Launch floor: Taichi's argument packs. `ti.types.argpack(a=ti.i32, v=vec3, s=struct_t,
arr=ti.types.ndarray(...), inner=other_pack)` (an ArgPackType) annotates a kernel parameter;
calling it makes an `ArgPack` value (members cast in Python scope as Taichi does: int() for
integer members, float() for real ones).

An argpack is a reference container usable only as a kernel parameter (or inside another
argpack): never a struct member or a return type. vkdiff passes it flattened: every scalar,
vector/matrix entry and struct leaf is one run-time scalar argument, every ndarray member an array
argument (its shape as hidden arguments), so one compiled kernel serves every value of the same
types; in the kernel `p.a`, `p.s.c`, `p.arr[i, j]` read those arguments."""
import numpy as np

from .. import types as T
from ..errors import DataTypeError, TaichiRuntimeTypeError, TaichiSyntaxError
from ..lang.matrix import Matrix
from ..lang.ndarray import NdarrayType
from ..frontend.struct import Struct, StructType, member
from .kernel import arg_value, _tensor_entries, _tensor_arg, _array_arg
from .ndarray_args import resolve


def _cook(t):
    """A member type as Taichi stores it (bool is u1; `float`/`int` the current defaults)."""
    if isinstance(t, (ArgPackType, StructType, NdarrayType)) or T.is_tensor_type(t):
        return t
    if t is bool:
        return T.u1
    try:
        return T.resolve(t)
    except (TypeError, ValueError):
        raise DataTypeError(f'Invalid data type {t}') from None


class ArgPackType:
    """`ti.types.argpack(**members)`: the type of a kernel parameter packing several values."""
    _vkdiff_argpack = True

    def __init__(self, **members):
        self.members = {k: _cook(t) for k, t in members.items()}

    def __call__(self, *args, **kwargs):
        names = list(self.members)
        if len(args) > len(names):
            raise TaichiSyntaxError(f'{self} has {len(names)} members, got {len(args)} values')
        d = {n: (args[i] if i < len(args) else kwargs.get(n)) for i, n in enumerate(names)}
        return self.cast(ArgPack(self, d))

    def cast(self, pack):
        """An ArgPack of this type from `pack` (members converted to their types)."""
        entries = pack._entries if isinstance(pack, ArgPack) else dict(pack)
        if list(entries) != list(self.members):
            raise TaichiSyntaxError('Incompatible arguments for custom argument pack members!')
        out = {}
        for k, t in self.members.items():
            v = entries[k]
            if isinstance(t, ArgPackType):
                if not isinstance(v, ArgPack):
                    raise TaichiRuntimeTypeError(f'argpack member {k!r} is a {t}: got {type(v)}')
                out[k] = t.cast(v)
            elif isinstance(t, StructType):
                out[k] = t._coerce(v) if isinstance(v, (dict, Struct)) else t(v)
            elif T.is_tensor_type(t):
                out[k] = t(v.to_list() if isinstance(v, Matrix) else
                           v.tolist() if isinstance(v, np.ndarray) else v)
            elif isinstance(t, NdarrayType):
                out[k] = v
            else:
                out[k] = _scalar(t, v, k)
        return ArgPack(self, out)

    def __str__(self):
        return '<ti.ArgPackType ' + ', '.join(f'{k}={v}' for k, v in self.members.items()) + '>'

    __repr__ = __str__

    # ---------------------------------------------------------------- kernel parameters
    def flatten(self, pack, name, key, rargs):
        """Append the compile key parts and run-time arguments of `pack` (in member order, the
        order `declare` gives them indices)."""
        if not isinstance(pack, ArgPack):
            raise TaichiRuntimeTypeError(f'Argument {name} must be a argument pack, got '
                                         f'{type(pack)}')
        for k, t in self.members.items():
            v, what = pack._entries[k], f'{name}.{k}'
            if isinstance(t, ArgPackType):
                t.flatten(v, what, key, rargs)
            elif isinstance(t, NdarrayType):
                kk, bound = resolve(t, v, what)
                key.append(kk)
                rargs.extend(bound.shape)
                if not rargs.arrays:
                    rargs.arrays = []
                rargs.arrays.append(bound)
            elif isinstance(t, StructType):
                _struct_leaves(t, v, rargs)
            elif T.is_tensor_type(t):
                rargs.extend(_tensor_entries(t, v, what))
            else:
                rargs.append(v)

    def declare(self, kir, em, pack, name):
        """The kernel-side value of a parameter of this type: an ArgPack of run-time arguments."""
        out = {}
        for k, t in self.members.items():
            v, what = pack._entries[k], f'{name}.{k}'
            if isinstance(t, ArgPackType):
                out[k] = t.declare(kir, em, v, what)
            elif isinstance(t, NdarrayType):
                out[k] = _array_arg(kir, t, v, what)
            elif isinstance(t, StructType):
                out[k] = _struct_arg(kir, em, t, what)
            elif T.is_tensor_type(t):
                out[k] = _tensor_arg(kir, em, t, what)
            else:
                out[k] = _scalar_arg(kir, em, t, what)
        return ArgPack(self, out)


def _scalar(t, v, what):
    if isinstance(v, (bool, int, float, np.integer, np.floating, np.bool_)):
        return int(v) if not t.is_float else float(v)
    raise TaichiRuntimeTypeError(f'argpack member {what!r} is a {t}: got {type(v)}')


def _arg_type(t):
    t = T.resolve(t) if t is not T.u1 else T.i32  # u1 is passed as 0 / 1
    return t.reg if t.is_narrow else t


def _scalar_arg(kir, em, t, what):
    dt = _arg_type(t)
    idx = len(kir.arg_types)
    kir.arg_types.append(dt)
    kir.arg_names.append(what)
    return arg_value(em, dt, T.resolve(t) if t is not T.u1 else t, idx)


def _struct_leaves(stype, value, rargs, top=None):
    """The run-time arguments of a struct value passed for a `stype` parameter, checked as
    Taichi does (a struct of the same members and shapes)."""
    top = (value, stype) if top is None else top
    if not isinstance(value, Struct) or list(value._members) != list(stype.members):
        raise TaichiRuntimeTypeError(f'Argument {type(top[0])} cannot be converted into '
                                     f'required type {top[1]!r}')
    for k, t in stype.members.items():
        v = value._members[k]
        if isinstance(t, StructType):
            _struct_leaves(t, v, rargs, top)
        elif T.is_tensor_type(t):
            want = (t.n, t.m) if hasattr(t, 'm') else (t.n,)
            if np.shape(v.to_list() if isinstance(v, Matrix) else v) != want:
                raise TaichiRuntimeTypeError(f'Argument {type(top[0])} cannot be converted into '
                                             f'required type {top[1]!r}')
            rargs.extend(_tensor_entries(t, v, k))
        else:
            rargs.append(v)


def _struct_arg(kir, em, stype, what):
    out = {}
    for k, t in stype.members.items():
        if isinstance(t, StructType):
            out[k] = _struct_arg(kir, em, t, f'{what}.{k}')
        elif T.is_tensor_type(t):
            out[k] = _tensor_arg(kir, em, t, f'{what}.{k}')
        else:
            out[k] = _scalar_arg(kir, em, t, f'{what}.{k}')
    return Struct(out, _type=stype)


class ArgPack:
    """A value of an ArgPackType: members by attribute (`p.a`) or by name (`p['a']`)."""

    def __init__(self, ptype, entries):
        object.__setattr__(self, '_type', ptype)
        object.__setattr__(self, '_entries', dict(entries))

    def __getattr__(self, name):
        return member(object.__getattribute__(self, '_entries'), name, 'argument pack')

    def __setattr__(self, name, value):
        self[name] = value

    def __getitem__(self, name):
        return self._entries[name]

    def __setitem__(self, name, value):
        if name not in self._entries:
            raise AttributeError(f'argument pack has no member {name!r}')
        d = dict(self._entries)
        d[name] = value
        self._entries[name] = self._type.cast(d)._entries[name]

    @property
    def keys(self):
        return list(self._entries)

    @property
    def items(self):
        return self._entries.items()

    def __len__(self):
        return len(self._entries)

    def to_dict(self):
        return {k: v.to_dict() if isinstance(v, ArgPack) else
                v.to_list() if isinstance(v, Matrix) else v for k, v in self._entries.items()}

    def __repr__(self):
        return str(self.to_dict())


def argpack(**members):
    """`ti.types.argpack(a=ti.i32, arr=ti.types.ndarray(...))`."""
    return ArgPackType(**members)
