"""Frontend floor: things kernel code can assign to (locals, field elements, matrix entries), each with
load / store / atomic, emitting IR."""
import numpy as np

from .. import ir
from .. import types as T
from ..errors import TaichiIndexError, TaichiTypeError, UnsupportedError
from ..lang.matrix import (Matrix, _is_runtime, _static_index, check_nonnegative, clamp_flat,
                           component_sizes, dynamic_flat_index, flatten_key, slice_positions)
from . import blockpool, dynpool, ops, quant_access, sparse
from .checks import check_components
from .context import Value, current, emit, error

ATOMIC_AUG = {'add': 'add', 'sub': 'sub', 'band': 'band', 'bor': 'bor', 'bxor': 'bxor'}


def _grad_stopped(em, field):
    """Whether `ti.stop_grad(field)` was called in a block enclosing the one being emitted."""
    stopped = getattr(em, 'stop_grad', None)
    return bool(stopped) and any(field in stopped.get(id(b), ()) for b in em.blocks)


def _apply(fn, old, value, dtype):
    """`old fn value` for an atomic / augmented assignment: like Taichi's AtomicOpExpression the
    operand is first converted to the destination's type (`a = 2; a += -1.75` adds i32(-1.75)),
    then the operation runs in that type."""
    return ops.as_value(ops.binary(fn, old, ops.as_value(value, dtype)), dtype)


class LocalVar:
    """A scalar local variable: an `alloca`, typed by its first assignment."""

    def __init__(self, dtype):
        if dtype is T.u1:
            dtype = T.i32
        self.dtype = dtype
        self.stmt = emit('alloca', dtype)

    def load(self):
        return Value(emit('load', self.dtype, [self.stmt]))

    def store(self, value):
        emit('store', None, [self.stmt, ops.as_value(value, self.dtype)])

    def atomic(self, fn, value):
        """`ti.atomic_*(v, value)` on a local: marked like `v op= value`, so that it is atomic
        when the local turns out to be shared by a parallel loop."""
        old = self.load()
        emit('store', None, [self.stmt, _apply(fn, old, value, self.dtype)], attrs={'aug': fn})
        return old

    def augment(self, fn, value):
        """`v op= value`: a load-op-store marked so that task splitting can make it atomic."""
        self.atomic(fn, value)


class FieldElem:
    """One scalar component of a field element: `x[i, j]` or `v[i][c]`."""

    def __init__(self, field, indices, comp=0):
        self.field, self.indices, self.comp = field, indices, comp
        self.dtype = field.dtype

    def load(self):
        if quant_access.packed(self.field):  # a BitpackedFields member (lang/quant.py)
            return quant_access.load(self.field, self.indices, FieldElem)
        attrs = {'buf': self.field.buffer, 'comp': self.comp}
        if _grad_stopped(current(), self.field):
            attrs['stop_grad'] = True  # ti.stop_grad(x): no derivative flows back into x
        if dynpool.pooled(self.field):  # in its dynamic node's chunk pool (lang/dynpool.py)
            return sparse.on_read(self.field, self.indices, dynpool.load(self, attrs))
        if blockpool.pooled(self.field):  # in its pointer node's block pool (lang/blockpool.py)
            return blockpool.load(self, attrs)
        v = Value(emit('gload', self.dtype, self.indices, attrs=attrs))
        return sparse.on_read(self.field, self.indices, v)

    def _outside_guard(self, action):
        """A field with `index_guard` (a ti.linalg.SparseMatrixBuilder): the write happens
        only inside its shape; outside, the guard flag is set (its build() raises) instead of
        the write landing on another element of the dense storage."""
        guard = self.field.index_guard
        ok = None
        for ix, n in zip(self.indices, self.field.shape):
            v = Value(ix)
            inside = ops.binary('land', ops.binary('ge', v, 0), ops.binary('lt', v, n))
            ok = inside if ok is None else ops.binary('land', ok, inside)
        then_b, else_b = ir.Block(), ir.Block()
        emit('if', None, [ops.to_bool(ok)], blocks=[then_b, else_b])
        with current().open(then_b):
            action()
        with current().open(else_b):
            FieldElem(guard, []).atomic('bor', 1)

    def store(self, value):
        if getattr(self.field, 'index_guard', None) is not None:
            return self._outside_guard(lambda: self._store(value))
        return self._store(value)

    def _store(self, value):
        if quant_access.packed(self.field):
            return quant_access.store(self.field, self.indices, FieldElem, value)
        sparse.on_write(self.field, self.indices)
        if dynpool.pooled(self.field):
            return dynpool.store(self, value)
        if blockpool.pooled(self.field):
            return blockpool.store(self, value)
        emit('gstore', None, self.indices + [ops.as_value(value, self.dtype).stmt],
             attrs={'buf': self.field.buffer, 'comp': self.comp})

    def atomic(self, fn, value):
        if getattr(self.field, 'index_guard', None) is not None:
            old = LocalVar(self.dtype)
            old.store(ops.as_value(0, self.dtype))
            self._outside_guard(lambda: old.store(self._atomic(fn, value)))
            return old.load()
        return self._atomic(fn, value)

    def _atomic(self, fn, value):
        if quant_access.packed(self.field):
            raise error(f'atomic {fn} on quantized field {self.field.name}: vkdiff has no atomics '
                        'on BitpackedFields members (x[i] = x[i] + v is a plain store)',
                        UnsupportedError)
        v = ops.as_value(value, self.dtype)
        if fn in ('band', 'bor', 'bxor') and self.dtype.is_float:
            raise error('bitwise atomic on a float field')
        sparse.on_write(self.field, self.indices)
        if dynpool.pooled(self.field):
            return dynpool.atomic(self, fn, v)
        if blockpool.pooled(self.field):
            return blockpool.atomic(self, fn, v)
        return Value(emit('atomic', self.dtype, self.indices + [v.stmt],
                          attrs={'buf': self.field.buffer, 'comp': self.comp, 'fn': fn}))


def _tensor_desc(shape, entries):
    """Taichi's name of a vector/matrix value's type in messages: `[Tensor (2) i32]`."""
    dtypes = []
    for e in entries:
        dt = getattr(e, 'dtype', None)
        if dt is None:
            try:
                dt = T.literal_type(e)
            except TypeError:
                dt = None
        dtypes.append(dt)
    names = {d.name for d in dtypes if d is not None}
    name = names.pop() if len(names) == 1 else 'mixed'
    return f"[Tensor ({', '.join(str(d) for d in shape)}) {name}]"


class MatrixLValue:
    """A vector/matrix of scalar lvalues (a local vector, or a vector field's element)."""

    def __init__(self, entries, n, m, ndim):
        self.entries, self.n, self.m, self.ndim = entries, n, m, ndim

    clamp = False  # run-time component indices clamped (ndarray boundary='clamp')

    def _wrap(self, values):
        mat = Matrix._new(values, self.n, self.m, self.ndim)
        if self.clamp:
            mat._clamp = True
        return mat

    def _values(self, value):
        if isinstance(value, Matrix):
            if len(value.entries) != len(self.entries):
                target = (self.n, self.m) if self.ndim == 2 else (self.n,)
                raise error(f"cannot assign '{_tensor_desc(tuple(value.get_shape()), value.entries)}'"
                            f" to '{_tensor_desc(target, self.entries)}'", TaichiTypeError)
            return value.entries
        if isinstance(value, (list, tuple)):
            flat = [e for r in value for e in (r if isinstance(r, (list, tuple)) else [r])]
            if len(flat) != len(self.entries):
                rows = [r for r in value if isinstance(r, (list, tuple))]
                shape = (len(value), len(rows[0])) if rows and len(rows) == len(value) else \
                    (len(flat),)
                target = (self.n, self.m) if self.ndim == 2 else (self.n,)
                raise error(f"cannot assign '{_tensor_desc(shape, flat)}' to "
                            f"'{_tensor_desc(target, self.entries)}'", TaichiTypeError)
            return flat
        return [value] * len(self.entries)

    def load(self):
        return self._wrap([e.load() for e in self.entries])

    def store(self, value):
        for e, v in zip(self.entries, self._values(value)):
            e.store(v)

    def fill(self, value):
        """`v.fill(x)` on an assignable vector or matrix: written through."""
        self.store(value)

    def atomic(self, fn, value):
        return self._wrap([e.atomic(fn, v) for e, v in zip(self.entries, self._values(value))])

    def augment(self, fn, value):
        for e, v in zip(self.entries, self._values(value)):
            e.augment(fn, v) if isinstance(e, LocalVar) else e.atomic(fn, v)

    def entry(self, key):
        """`m[i, j]` / `v[i]` (Taichi's rule: a matrix takes two indices, a vector one)."""
        key = flatten_key(key)
        check_nonnegative(key)
        count = len(key) if isinstance(key, tuple) else 1
        if count != self.ndim:
            raise error(f'Expected {self.ndim} indices, got {count} (indexing a '
                        f'{"vector" if self.ndim == 1 else "matrix"})', TaichiIndexError)
        sliced = slice_positions(key, self.n, self.m, self.ndim)
        if sliced is not None:  # m[:, 0] = col, m[i, 1:3] += v: the selected entries
            shape, positions = sliced
            entries = [self._entry_at(p) for p in positions]
            return MatrixLValue(entries, shape[0], shape[1] if len(shape) == 2 else 1, len(shape))
        return self._entry_at(key)

    def _entry_at(self, key):
        if _is_runtime(key) and self.clamp:  # an ndarray element with boundary='clamp'
            return DynamicEntry(self.entries, clamp_flat(
                dynamic_flat_index(key, self.n, self.m, self.ndim), len(self.entries)))
        if _is_runtime(key):
            check_components(*component_sizes(key, self))  # ti.init(debug=True) checks
            if self.ndim == 2 and not all(_is_runtime((k,)) for k in key):
                i, j = key  # one of them static: select within that row or column only
                if _is_runtime((i,)):
                    return DynamicEntry(self.entries[j::self.m], i)
                return DynamicEntry(self.entries[i * self.m:(i + 1) * self.m], j)
            return DynamicEntry(self.entries, dynamic_flat_index(key, self.n, self.m, self.ndim))
        if self.ndim == 2:
            i, j = (_static_index(k) for k in key)
            return self.entries[i * self.m + j]
        return self.entries[_static_index(key[0] if isinstance(key, tuple) else key)]


class DynamicEntry:
    """`v[k]` with a run-time k, as an lvalue: loads select among the entries, stores and
    atomics go to the entry whose index matches (one `if` per entry)."""

    def __init__(self, entries, index):
        self.entries, self.index = entries, index
        self.dtype = entries[0].dtype

    def load(self):
        acc = self.entries[-1].load()
        for k in range(len(self.entries) - 2, -1, -1):
            acc = ops.select(ops.binary('eq', self.index, k), self.entries[k].load(), acc)
        return acc

    def _each(self, action):
        for k, e in enumerate(self.entries):
            then = ir.Block()
            emit('if', None, [ops.binary('eq', self.index, k)], blocks=[then, ir.Block()])
            with current().open(then):
                action(e)

    def store(self, value):
        self._each(lambda e: e.store(value))

    def atomic(self, fn, value):
        """The atomic on the selected entry; its result (the value it replaced) is carried out
        of the `if` through a local, so that it is the atomic's own old value."""
        old = LocalVar(self.dtype)
        self._each(lambda e: old.store(e.atomic(fn, value)))
        return old.load()

    def augment(self, fn, value):
        self._each(lambda e: e.augment(fn, value) if hasattr(e, 'augment') else e.atomic(fn, value))


# a local vector/matrix of more entries than this is one function-local array ('alloca' with a
# size, 'aload'/'astore' at an index): a run-time index is one access instead of an `if` or a
# select per entry, and shared between tasks it becomes one temporary, not one per entry
ARRAY_MIN_ENTRIES = 64


class ArrayElem:
    """Entry `index` (an int or a run-time i32 Value) of a local array."""

    def __init__(self, arr, index, dtype):
        self.arr, self.index, self.dtype = arr, index, dtype

    def _i(self):
        return ops.as_value(self.index, T.i32).stmt

    def load(self):
        return Value(emit('aload', self.dtype, [self.arr, self._i()]))

    def store(self, value, attrs=None):
        emit('astore', None, [self.arr, self._i(), ops.as_value(value, self.dtype).stmt],
             attrs=attrs)

    def atomic(self, fn, value):
        """Marked like a local's `v op= value` (atomic once the array is shared by a parallel
        loop, passes/tasks.py)."""
        old = self.load()
        self.store(_apply(fn, old, value, self.dtype), {'aug': fn})
        return old

    def augment(self, fn, value):
        self.atomic(fn, value)


class ArrayLValue(MatrixLValue):
    """A local vector/matrix held in one function-local array."""

    def __init__(self, dtype, n, m, ndim):
        dtype = T.i32 if dtype is T.u1 else dtype
        self.arr = emit('alloca', dtype, attrs={'size': n * m, 'user_array': True})
        super().__init__([ArrayElem(self.arr, k, dtype) for k in range(n * m)], n, m, ndim)

    def _entry_at(self, key):
        if _is_runtime(key):
            return ArrayElem(self.arr, dynamic_flat_index(key, self.n, self.m, self.ndim),
                             self.entries[0].dtype)
        return super()._entry_at(key)


METHOD_NAMES = set()  # of @ti.dataclass methods: `s.m()` binds `self` to s by reference


def is_lvalue(v):
    """Whether a name is bound to something assignable that reading the name loads: a local
    (scalar, vector, struct), or what a func's ti.template() parameter refers to (a field
    element, a local vector's entry, a struct-field element...)."""
    return isinstance(v, (LocalVar, MatrixLValue, FieldElem, DynamicEntry, ArrayElem)) or \
        getattr(type(v), '_vkdiff_struct_lvalue', False)


def field_lvalue(field, indices):
    """The lvalue of `field[indices]`: a FieldElem, or a MatrixLValue for vector/matrix fields."""
    if not field.elem_shape:  # (a matrix field's member: its component of the parent's buffer)
        owner = field.__dict__.get('_member_of')
        if owner is not None and (dynpool.pooled(owner) or blockpool.pooled(owner)):
            raise error(f'field {field.name} is a member of matrix field {owner.name}, which is '
                        "stored in its dynamic SNode's chunk pool: index the matrix field "
                        f'({owner.name}[I][{field._comp}])', UnsupportedError)
        return FieldElem(field, indices, getattr(field, '_comp', 0))
    comps = [FieldElem(field, indices, c) for c in range(field.ncomp)]
    lv = MatrixLValue(comps, field.n, field.m, len(field.elem_shape))
    lv.clamp = getattr(field, 'clamp', False)  # an ndarray with boundary='clamp'
    return lv


class LocalList(list):
    """A Python list of run-time values bound to a name in a kernel: its elements are locals, so
    `l[1] = v` (a compile-time index) assigns, also inside a run-time branch, as in Taichi.
    Naming the list reads a plain list of the elements' current values."""

    @staticmethod
    def wrap(value):
        """`value` with its run-time elements made locals, if it is a list that has any."""
        if type(value) is not list or not any(
                isinstance(e, Value) or isinstance(e, Matrix) and _is_runtime(tuple(e.entries))
                for e in value):
            return value
        return LocalList(new_local(e) if isinstance(e, (Value, Matrix)) or ops.is_number(e)
                         else e for e in value)


def new_local(value):
    """A fresh local (scalar, matrix or struct) initialised with `value`."""
    from .struct import Struct, new_struct_local  # cycle: struct.py imports this module
    if isinstance(value, Struct):
        return new_struct_local(value)
    if isinstance(value, Matrix):
        dts = {ops.dtype_of(e) for e in value.entries}
        if len(value.entries) > ARRAY_MIN_ENTRIES and len(dts) == 1:
            lv = ArrayLValue(dts.pop(), value.n, value.m, value.ndim)
            lv.store(value)
            return lv
        entries = []
        for e in value.entries:
            v = LocalVar(ops.dtype_of(e))
            v.store(e)
            entries.append(v)
        return MatrixLValue(entries, value.n, value.m, value.ndim)
    if isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_)):
        info = np.iinfo(T.Defaults.ip.np)  # Taichi: a literal variable is of type default_ip
        if not info.min <= int(value) <= info.max:
            raise error(f'Integer literal {value} exceeded the range of default_ip: '
                        f'{T.Defaults.ip}, please specify the dtype via e.g. `ti.u64({value})` '
                        'or set a different `default_ip` in `ti.init()`', TaichiTypeError)
    v = LocalVar(ops.dtype_of(value))
    v.store(value)
    return v
