"""Frontend floor: fields of structs. `ti.Struct.field({...}, shape=n)` and `some_struct_type.field(...)`
make a StructField: structure-of-arrays, one ordinary Field per member (nested structs recurse), so
codegen, autodiff and host synchronisation see nothing new. In kernels `s[i]` is a StructLValue of
the members' elements (frontend/struct.py); in Python scope a _HostStructElem reads and writes through
to the member fields."""
from .. import types as T
from ..errors import TaichiRuntimeError, VkdiffTypeError, VkdiffValueError
from .lvalues import field_lvalue
from ..lang import convert, hooks
from ..lang.field import make_field
from ..lang.snode import root
from .struct import Struct, StructLValue, _is_struct_type, member
from ..lang.torch_io import to_torch


def _leaf_dtypes(stype):
    for t in stype.members.values():
        if _is_struct_type(t):
            yield from _leaf_dtypes(t)
        else:
            yield T.resolve(t.dtype if T.is_tensor_type(t) else t)


@hooks.provides('make_struct_field')  # (StructType.field, Struct.field: frontend/struct.py)
def make_struct_field(stype, shape, needs_grad, needs_dual, name):
    if needs_grad or needs_dual:  # as Taichi: every member gets one, so every member is float
        bad = [dt for dt in _leaf_dtypes(stype) if not dt.is_float]
        if bad:  # checked before any member field is made
            raise TaichiRuntimeError(f'{bad[0]} is not supported for field with `needs_grad=True` '
                                     'or `needs_dual=True`: gradients need float members')
    members = {}
    for k, t in stype.members.items():
        mname = f'{name}.{k}'
        if _is_struct_type(t):
            members[k] = make_struct_field(t, shape, needs_grad, needs_dual, mname)
            continue
        if T.is_tensor_type(t):
            dtype = T.resolve(t.dtype)
            elem = (t.n, t.m) if hasattr(t, 'm') else (t.n,)
        else:
            dtype, elem = T.resolve(t), ()
        members[k] = make_field(dtype, shape, elem, needs_grad, needs_dual, mname)
    return StructField(members, stype, name)


class StructField:
    """A field of structs, stored as one field per member (`s.pos`, `s.mass`).

    Python scope: `s[i].mass`, `s[i].mass = 2.0`, `s[i] = {...}`, `to_numpy()` (a dict of arrays),
    `from_numpy(dict)`, `fill(v)`. Kernels: `s[i].pos += ...`, `s.mass[i]`, `p = s[i]`,
    `s[i] = p`, `for i in s`. `s.grad` is the struct field of the float members' gradients."""

    _vkdiff_struct_field = True

    def __init__(self, members, stype, name):
        object.__setattr__(self, '_members', dict(members))
        object.__setattr__(self, 'stype', stype)
        object.__setattr__(self, 'name', name)

    def __getattr__(self, name):
        return member(object.__getattribute__(self, '_members'), name,
                      f'struct field {object.__getattribute__(self, "name")}')

    def __setattr__(self, name, value):
        raise AttributeError(f'cannot set {name!r} on a struct field (assign to s[i].{name} or '
                             f'use s.{name}.from_numpy)')

    # ------------------------------------------------------------ layout
    def keys(self):
        return list(self._members)

    def items(self):
        return list(self._members.items())

    @property
    def members(self):
        return dict(self._members)

    def _leaves(self):
        for m in self._members.values():
            if isinstance(m, StructField):
                yield from m._leaves()
            else:
                yield m

    def _first_field(self):
        return next(self._leaves())

    @property
    def shape(self):
        return self._first_field().shape

    @property
    def _shape(self):
        return self._first_field()._shape

    def _place(self, shape):
        for m in self._members.values():
            m._place(shape)

    def _derived(self, kind):
        members = {}
        for k, m in self._members.items():
            g = m._derived(kind) if isinstance(m, StructField) else getattr(m, kind)
            if g is not None:
                members[k] = g
        return StructField(members, None, f'{self.name}.{kind}') if members else None

    @property
    def grad(self):
        """The gradients of the float members, as a struct field (`s.grad.pos`)."""
        return self._derived('grad')

    @property
    def dual(self):
        return self._derived('dual')

    def parent(self, n=1):
        """The node the struct field was placed under (its members' container)."""
        leaf = self._first_field().__dict__.get('_snode_leaf')
        if leaf is not None:
            return leaf.parent(n)
        return root

    def snode(self):
        return self

    def _lvalue(self, indices):
        """`s[indices]` in a kernel."""
        return StructLValue({k: m._lvalue(indices) if isinstance(m, StructField) else
                             field_lvalue(m, indices) for k, m in self._members.items()},
                            self.stype)

    # ------------------------------------------------------------ host access
    def __getitem__(self, key):
        self._first_field()._index(key)  # checks the index
        return _HostStructElem(self, key)

    def __setitem__(self, key, value):
        self._first_field()._index(key)
        _HostStructElem(self, key)._assign(value)

    def to_numpy(self, dtype=None):
        return {k: m.to_numpy(dtype) if not isinstance(m, StructField) else m.to_numpy(dtype)
                for k, m in self._members.items()}

    def to_torch(self, device=None):
        """A dict of torch tensors, one per member."""
        return {k: v if isinstance(v, dict) else to_torch(v, device)
                for k, v in self.to_numpy().items()}

    def from_torch(self, tensors):
        self.from_numpy(tensors)

    def from_numpy(self, arrs):
        """A dict (or Struct) of arrays, one per member it names; every array is converted and
        checked before any member is written."""
        for f, a in self._numpy_inputs(arrs):
            f._write_numpy(a)

    def _numpy_inputs(self, arrs):
        if isinstance(arrs, Struct):
            arrs = arrs._members
        if not isinstance(arrs, dict):
            raise VkdiffTypeError(f'from_numpy: struct field {self.name} takes a dict of arrays '
                                  f'(one per member), got {type(arrs).__name__}')
        extra = set(arrs) - set(self._members)
        if extra:
            raise VkdiffValueError(f'from_numpy: struct field {self.name} has no member '
                                   f'{sorted(extra)[0]!r}')
        out = []
        for k, a in arrs.items():
            m = self._members[k]
            out += m._numpy_inputs(a) if isinstance(m, StructField) else [(m, m._numpy_input(a))]
        return out

    def fill(self, value):
        """`fill(0)` sets every member; a dict / Struct sets each member it names. Every value
        is checked before any member is written."""
        for f, v in self._fill_inputs(value):
            f._fill_converted(v)

    def _fill_inputs(self, value):
        if isinstance(value, Struct):
            value = value._members
        if isinstance(value, dict):
            items = []
            for k, v in value.items():
                if k not in self._members:
                    raise VkdiffValueError(f'fill: struct field {self.name} has no member {k!r}')
                items.append((self._members[k], v))
        else:
            items = [(m, value) for m in self._members.values()]
        out = []
        for m, v in items:
            out += m._fill_inputs(v) if isinstance(m, StructField) else [(m, m._fill_input(v))]
        return out

    def copy_from(self, other):
        self.from_numpy(other.to_numpy())

    def __repr__(self):
        return f'<vkdiff struct field {self.name}: {", ".join(self._members)} shape={self._shape}>'


class _HostStructElem:
    """`s[i]` in Python scope: reads and writes go through to the member fields."""

    def __init__(self, sfield, key):
        object.__setattr__(self, '_sf', sfield)
        object.__setattr__(self, '_key', key)

    def __getattr__(self, name):
        m = getattr(object.__getattribute__(self, '_sf'), name)
        return m[object.__getattribute__(self, '_key')]

    def __setattr__(self, name, value):
        self._sf._members[name] if name in self._sf._members else getattr(self._sf, name)
        self._sf._members[name][self._key] = value

    def __getitem__(self, name):
        return self.__getattr__(name)

    def __setitem__(self, name, value):
        self.__setattr__(name, value)

    def keys(self):
        return self._sf.keys()

    def _assign(self, value):
        """`s[i] = {...}`: every member value is checked before any is written."""
        for f, v in self._inputs(value):
            f._host_set(f._index(self._key), v)

    def _inputs(self, value):
        if isinstance(value, (Struct, _HostStructElem)):
            value = {k: value[k] for k in value.keys()}
        if not isinstance(value, dict):
            raise VkdiffTypeError(f'{self._sf.name}[...] = expects a dict or a ti.Struct, got '
                                  f'{type(value).__name__}')
        out = []
        for k, v in value.items():
            if k not in self._sf._members:
                raise VkdiffValueError(f'struct field {self._sf.name} has no member {k!r}')
            m = self._sf._members[k]
            if isinstance(m, StructField):
                out += _HostStructElem(m, self._key)._inputs(v)
            else:
                out.append((m, convert.element(v, m.dtype, m.elem_shape, f'{m.name}[...]')))
        return out

    def to_dict(self):
        return self.value.to_dict()

    @property
    def value(self):
        """A Struct (copy) of this element."""
        return Struct({k: getattr(self, k).value if isinstance(m, StructField) else getattr(self, k)
                       for k, m in self._sf._members.items()}, _type=self._sf.stype)

    def __repr__(self):
        return repr(self.value)

    def __eq__(self, other):
        return self.value == other

    __hash__ = object.__hash__
