"""Frontend floor: Taichi's structs. `ti.types.struct(pos=vec2, mass=ti.f32)` (a StructType),
`ti.Struct(...)` values (in both scopes), a kernel's struct result; `ti.Struct.field({...},
shape=n)` makes a StructField (frontend/struct_field.py). In kernels a struct is a compile-time
grouping of its members' values (`Struct`) or lvalues (`StructLValue`); every operation on it
unrolls into the members' scalar IR."""
import inspect
import types

import numpy as np

from .. import types as T
from ..errors import DataTypeError, TaichiSyntaxError, TaichiTypeError, VkdiffError
from . import ops
from .context import current, error
from .func import _BoundFunc, Template
from ..lang.matrix import Matrix
from .lvalues import METHOD_NAMES, new_local
from ..lang import hooks
from ..lang.field import _caller_assignment_name


# ---------------------------------------------------------------- types
def member(members, name, what):
    """`members[name]` (a struct's, a struct field's, an argument pack's), else the
    AttributeError a user sees: `what` has no such member, and which it has."""
    if name in members:
        return members[name]
    raise AttributeError(f'{what} has no member {name!r} (members: {", ".join(members)})')


def _is_struct_type(t):
    return isinstance(t, StructType)


def _convert(mtype, value, what):
    """`value` as a member of type `mtype` (a cast in kernels and in Python scope)."""
    if _is_struct_type(mtype):
        return mtype._coerce(value) if isinstance(value, (dict, Struct)) else mtype(value)
    if T.is_tensor_type(mtype):
        if isinstance(value, Matrix):
            want = (mtype.n,) if not hasattr(mtype, 'm') else (mtype.n, mtype.m)
            if value.get_shape() != want and len(value.entries) != int(np.prod(want)):
                raise error(f'struct member {what!r} expects shape {want}, got {value.get_shape()}')
            return mtype(*value.entries) if hasattr(mtype, 'm') else mtype(value)
        if isinstance(value, np.ndarray):
            value = value.tolist()
        return mtype(value)
    return ops.cast(value, T.resolve(mtype))


def _zero(mtype):
    if _is_struct_type(mtype):
        return mtype()
    if T.is_tensor_type(mtype):
        return mtype(0)
    return ops.cast(0, T.resolve(mtype))


class StructType(Template):
    """`ti.types.struct(pos=ti.math.vec2, mass=ti.f32)`: constructs struct values
    (`t(pos=..., mass=...)`, missing members are zero), makes struct fields (`t.field(shape=n)`)
    and annotates `@ti.func` arguments (passed by value). As a kernel argument annotation its
    value is passed by value too: every scalar / vector entry a run-time argument, one compiled
    kernel for all values (launch/argpack.py)."""
    _vkdiff_struct_arg = True

    def __init__(self, members, methods=None, name=None):
        if not members:
            raise VkdiffError('a struct type needs at least one member')
        self.members = dict(members)
        self.methods = dict(methods or {})
        self.name = name
        METHOD_NAMES.update(self.methods)

    def __call__(self, *args, **kwargs):
        """As Taichi: positional values fill the members in order, keywords by name, the rest
        are zero; a scalar given for a vector/matrix/struct member is broadcast (`t(1)`). One
        dict, or one struct with exactly these members, converts to this type."""
        names = list(self.members)
        if len(args) == 1 and not kwargs and (
                isinstance(args[0], dict) and not _is_struct_type(self.members[names[0]]) or
                isinstance(args[0], Struct) and list(args[0].keys()) == names):
            return self._coerce(args[0])
        if len(args) > len(names):
            raise error(f'{self!r} has {len(names)} members, got {len(args)} values')
        vals = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in self.members:
                raise error(f'{self!r} has no member {k!r}')
            if k in vals:
                raise error(f'struct member {k!r} given twice')
            vals[k] = v
        return self._make(vals)

    def _make(self, vals):
        out = {}
        for k, t in self.members.items():
            out[k] = _convert(t, vals[k], k) if k in vals else _zero(t)
        return Struct(out, _type=self)

    def _coerce(self, value):
        """A Struct of this type from a Struct or dict with (at most) these members."""
        if isinstance(value, Struct):
            value = value._members
        if not isinstance(value, dict):
            raise error(f'{self!r} expects a struct or a dict, got {type(value).__name__}')
        extra = set(value) - set(self.members)
        if extra:
            raise error(f'{self!r} has no member {sorted(extra)[0]!r}')
        return self._make(value)

    def field(self, shape=None, needs_grad=False, needs_dual=False, name=None, offset=None,
              layout=None, **kw):
        if offset is not None:
            raise VkdiffError('field offsets are not supported')
        name = name or _caller_assignment_name() or f'struct{id(self) % 10000}'
        return hooks.call('make_struct_field', self, shape, needs_grad, needs_dual, name)

    def matches(self, value):
        """Whether `value` is a Struct with exactly these members, in this order, each of its
        member's shape: what a kernel parameter of this type takes (Taichi's
        isinstance(value, struct_type))."""
        if not isinstance(value, Struct) or list(value._members) != list(self.members):
            return False
        members = value._members
        for k, t in self.members.items():
            v = members[k]
            if _is_struct_type(t):
                ok = t.matches(v)
            elif T.is_tensor_type(t):
                want = (t.n,) if not hasattr(t, 'm') else (t.n, t.m)
                ok = isinstance(v, Matrix) and (v.n,) + ((v.m,) if v.ndim == 2 else ()) == want
            else:
                ok = not isinstance(v, (Matrix, Struct, dict))
            if not ok:
                return False
        return True

    def __repr__(self):
        inner = ', '.join(f'{k}={t!r}' if not hasattr(t, 'name') or _is_struct_type(t) or
                          T.is_tensor_type(t) else f'{k}={t.name}' for k, t in self.members.items())
        return f'{self.name or "struct"}({inner})'


def _member_type(t):
    """A member type as given by the user: a StructType, a vector/matrix type, a scalar dtype or a
    dict (an anonymous nested struct)."""
    if isinstance(t, dict):
        return StructType({k: _member_type(v) for k, v in t.items()})
    if _is_struct_type(t) or T.is_tensor_type(t):
        return t
    if getattr(t, '_vkdiff_argpack', False):  # Taichi: cook_dtype's ValueError
        raise DataTypeError(f'Invalid data type {t}: an argpack is only a kernel parameter '
                            'or a member of another argpack')
    T.resolve(t)  # raises for something that is no type
    return t


def struct(**members):
    """`ti.types.struct(pos=vec2, mass=ti.f32)`."""
    return StructType({k: _member_type(v) for k, v in members.items()})


def dataclass(cls):
    """`@ti.dataclass`: a StructType from the class's annotations; `@ti.func` methods defined in
    the class can be called on its values (`p.kinetic()`); `self` is a reference as in Taichi (a
    ti.template()): `self.x = v` in a method changes the field element / local it was called on."""
    anns = getattr(cls, '__annotations__', {})
    if any(hasattr(cls, k) for k in anns):
        raise TaichiSyntaxError('Default value in @dataclass is not supported.')
    methods = {k: v for k, v in vars(cls).items() if getattr(v, '_vkdiff_func', None)}
    t = StructType({k: _member_type(v) for k, v in anns.items()}, methods, name=cls.__name__)
    t.__doc__ = cls.__doc__
    # plain Python methods work on its values in Python scope (a kernel's returned struct too)
    t.pymethods = {k: v for k, v in vars(cls).items() if inspect.isfunction(v)
                   and not k.startswith('__') and k not in methods}
    return t


# ---------------------------------------------------------------- values
class Struct:
    """A struct value: `ti.Struct(pos=v, mass=1.0)` or `ti.Struct({'pos': v, 'mass': 1.0})`.
    Members by attribute (`s.pos`) or by name (`s['pos']`); in kernels a member is a run-time
    value and assigning to a local struct's member (`p.mass = 2.0`) works like any local."""
    _vkdiff_struct_value = True  # (how compiletime.py tells one, without importing this module)

    def __init__(self, *args, _type=None, **kwargs):
        if len(args) == 1 and isinstance(args[0], dict):
            members = dict(args[0])
        elif len(args) == 1 and isinstance(args[0], Struct):
            members = dict(args[0]._members)
        elif args:
            raise TypeError('ti.Struct takes a dict or keyword arguments')
        else:
            members = {}
        members.update(kwargs)
        if not members:
            raise TypeError('a struct needs at least one member')
        object.__setattr__(self, '_members', members)
        object.__setattr__(self, '_type', _type)

    @classmethod
    def field(cls, members, shape=None, needs_grad=False, needs_dual=False, name=None,
              offset=None, layout=None, **kw):
        """`ti.Struct.field({'pos': vec2, 'mass': ti.f32}, shape=n, needs_grad=False)`."""
        t = _member_type(dict(members))
        name = name or _caller_assignment_name() or 'struct'
        if offset is not None:
            raise VkdiffError('field offsets are not supported')
        return hooks.call('make_struct_field', t, shape, needs_grad, needs_dual, name)

    def __getattr__(self, name):
        members = object.__getattribute__(self, '_members')
        t = object.__getattribute__(self, '_type')
        if name not in members and t is not None and name in t.methods:
            return _BoundFunc(t.methods[name], self)
        if name not in members and name in getattr(t, 'pymethods', ()):
            return types.MethodType(t.pymethods[name], self)
        return member(members, name, 'struct')

    def __setattr__(self, name, value):
        if name not in self._members:
            raise AttributeError(f'struct has no member {name!r}')
        if self._type is not None:
            value = _convert(self._type.members[name], value, name)
        self._members[name] = value

    def __getitem__(self, name):
        return self._members[name]

    def __setitem__(self, name, value):
        self.__setattr__(name, value)

    def keys(self):
        return list(self._members)

    def items(self):
        return list(self._members.items())

    def __contains__(self, name):
        return name in self._members

    def to_dict(self):
        """Members as a dict (vectors/matrices as numpy arrays, nested structs as dicts)."""
        return {k: v.to_dict() if isinstance(v, Struct) else
                v.to_numpy() if isinstance(v, Matrix) else v for k, v in self._members.items()}

    @property
    def entries(self):
        return list(self._members.values())

    def _map(self, f):
        """f applied to every scalar leaf (used to make zero-initialised copies)."""
        return Struct({k: v._map(f) if isinstance(v, (Matrix, Struct)) else f(v)
                       for k, v in self._members.items()}, _type=self._type)

    def __repr__(self):
        return 'Struct(' + ', '.join(f'{k}={v!r}' for k, v in self._members.items()) + ')'

    def __eq__(self, other):
        if current() is not None:
            raise error('structs cannot be compared in kernels; compare their members')
        if isinstance(other, dict):
            other = Struct(other)
        return isinstance(other, Struct) and self.keys() == other.keys() and all(
            np.array_equal(np.asarray(self[k].to_dict() if isinstance(self[k], Struct) else self[k]),
                           np.asarray(other[k].to_dict() if isinstance(other[k], Struct) else other[k]))
            if not isinstance(self[k], Struct) else self[k] == other[k] for k in self.keys())

    __hash__ = object.__hash__


# ---------------------------------------------------------------- kernel lvalues
class StructLValue:
    """A struct of lvalues: a local struct variable (members are LocalVar / MatrixLValue), or
    `s[i]` of a struct field (FieldElem / MatrixLValue of field elements)."""

    _vkdiff_struct_lvalue = True

    def __init__(self, members, stype=None):
        self.members, self.stype = members, stype

    def member(self, name):
        if name not in self.members:
            raise error(f'struct has no member {name!r} (members: {", ".join(self.members)})')
        return self.members[name]

    def load(self):
        return Struct({k: v.load() for k, v in self.members.items()}, _type=self.stype)

    def store(self, value):
        if isinstance(value, StructLValue):
            value = value.load()
        if isinstance(value, Struct):
            value = value._members
        if not isinstance(value, dict):
            raise error(f'cannot assign {type(value).__name__} to a struct; assign a ti.Struct, '
                        'a dict, or its members one by one')
        missing = set(self.members) - set(value)
        extra = set(value) - set(self.members)
        if extra:
            raise error(f'struct has no member {sorted(extra)[0]!r}')
        if missing and not isinstance(value, dict):
            raise error(f'struct value lacks member {sorted(missing)[0]!r}')
        for k, v in value.items():
            self.members[k].store(v)

    def atomic(self, fn, value):
        raise error('atomic operations on a whole struct are not supported; apply them to members')

    augment = atomic


def new_struct_local(value):
    """A local struct variable initialised with the Struct `value` (members become locals)."""
    members = {}
    for k, v in value._members.items():
        members[k] = new_struct_local(v) if isinstance(v, Struct) else new_local(v)
    return StructLValue(members, value._type)


# ---------------------------------------------------------------- kernel return values
def same_type(a, b):
    """Whether two member types are the same type (structs member by member, vectors/matrices
    by shape and dtype, scalars by resolved dtype: `float` is the default float type)."""
    if _is_struct_type(a) or _is_struct_type(b):
        return _is_struct_type(a) and _is_struct_type(b) and list(a.members) == list(b.members) \
            and all(same_type(a.members[k], b.members[k]) for k in a.members)
    if T.is_tensor_type(a) or T.is_tensor_type(b):
        return T.is_tensor_type(a) and T.is_tensor_type(b) and \
            (a.n, getattr(a, 'm', None)) == (b.n, getattr(b, 'm', None)) and \
            T.resolve(a.dtype) is T.resolve(b.dtype)
    return T.resolve(a) is T.resolve(b)


class StructReturn:
    """A kernel's `-> some_struct_type` result: a 0-D struct field the kernel stores into, read
    back after the launch as a Struct (a copy)."""

    def __init__(self, stype, name):
        self.stype = stype
        self.sfield = hooks.call('make_struct_field', stype, (), False, False, name)

    def store(self, value):
        """Store the returned value (compile time); its struct type must be the declared one."""
        vtype = getattr(value, '_type', None) if isinstance(value, Struct) else None
        if not isinstance(value, Struct) or (vtype is not None and not same_type(vtype, self.stype)):
            raise error(f'this kernel returns {self.stype!r}; got {vtype or value!r}', TaichiTypeError)
        self.sfield._lvalue([]).store(self.stype._coerce(value))

    def __getitem__(self, key):
        return self.sfield[key].value
