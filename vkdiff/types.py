"""Data types shared by every stage: scalar dtypes (f32, f64, i32, u32, i64, u64, u1 and the narrow
i8, u8, i16, u16, f16), their numpy dtypes and their promotion rules.

Only dtypes: the public `ti.types` namespace (vector/matrix/struct/ndarray/template constructors)
is built on top of this module in the API layer (vkdiff/lang/types_api.py). This module imports
nothing from vkdiff but vkdiff.errors."""
import numpy as np

from .errors import DataTypeError


class DataType:
    """A scalar type. `u1` is the internal boolean produced by comparisons."""

    def __init__(self, name, kind, bits, np_dtype):
        self.name = name
        self.kind = kind  # 'f', 'i' (signed int), 'u' (unsigned int), 'b' (bool)
        self.bits = bits
        self.np = np.dtype(np_dtype) if np_dtype else None

    is_float = property(lambda self: self.kind == 'f')
    # 8/16-bit types live in 32-bit registers (wrapped / rounded after each operation) and are
    # packed into 32-bit words in fields (codegen/narrow.py)
    is_narrow = property(lambda self: self.bits < 32 and self.kind != 'b')

    @property
    def reg(self):
        """The 32-bit type a value of this type is computed in."""
        if not self.is_narrow:
            return self
        return f32 if self.kind == 'f' else i32 if self.kind == 'i' else u32
    is_int = property(lambda self: self.kind in 'iu')
    is_signed = property(lambda self: self.kind == 'i')
    is_bool = property(lambda self: self.kind == 'b')
    nbytes = property(lambda self: max(self.bits // 8, 1))

    def __repr__(self):
        return self.name

    def to_string(self):
        """Taichi's `dtype.to_string()`: the type's name, as str() gives it ('f32', 'u8', ...)."""
        return self.name

    def __call__(self, value):
        """`ti.f32(x)`: a cast, as in Taichi (of a number in Python scope, of a value in a kernel).
        The frontend, which sits above this module, installs the conversion: `set_cast`."""
        return _cast(value, self)

    def __reduce__(self):
        return (_lookup, (self.name,))


f32 = DataType('f32', 'f', 32, 'float32')
f64 = DataType('f64', 'f', 64, 'float64')
i32 = DataType('i32', 'i', 32, 'int32')
u32 = DataType('u32', 'u', 32, 'uint32')
i64 = DataType('i64', 'i', 64, 'int64')
u64 = DataType('u64', 'u', 64, 'uint64')
u1 = DataType('u1', 'b', 1, 'bool')
i8 = DataType('i8', 'i', 8, 'int8')
u8 = DataType('u8', 'u', 8, 'uint8')
i16 = DataType('i16', 'i', 16, 'int16')
u16 = DataType('u16', 'u', 16, 'uint16')
f16 = DataType('f16', 'f', 16, 'float16')
int8, uint8, int16, uint16, float16, half = i8, u8, i16, u16, f16, f16
float32, float64, int32, uint32, int64, uint64 = f32, f64, i32, u32, i64, u64
uint1 = u1

ALL = {t.name: t for t in (f32, f64, i32, u32, i64, u64, u1, i8, u8, i16, u16, f16)}


def _lookup(name):
    return ALL[name]


def _cast(value, dtype):
    """Python-scope numbers only; the frontend replaces it with its cast (kernel values too)."""
    if dtype.is_float:
        return float(dtype.np.type(value))
    return int(np.array(value).astype(dtype.np))


def set_cast(fn):
    """Install `fn(value, dtype)` as what calling a DataType does (vkdiff/frontend/ops.py does)."""
    global _cast
    _cast = fn


class TensorType:
    """Base class of the vector and matrix types (`ti.math.vec3`, `ti.types.matrix(2, 2, f32)`,
    built in vkdiff/math.py): lets dtype code recognise them without importing the API layer."""


class Defaults:
    """Default float and int types; `init(default_fp=..., default_ip=...)` changes them."""
    fp = f32
    ip = i32


class _DefaultUnsigned:
    """Taichi's cfg().default_up: the unsigned type of default_ip, decided where it is used
    (ti.math.uvec2/3/4 are built on it)."""

    def __repr__(self):
        return 'default_up'


default_up = _DefaultUnsigned()


def resolve(dtype):
    """Map what a user may write (`float`, `int`, `ti.f32`, numpy dtypes, strings) to a DataType."""
    if isinstance(dtype, DataType):
        return dtype
    if dtype is float:
        return Defaults.fp
    if dtype is int:
        return Defaults.ip
    if dtype is bool:
        return i32
    if dtype is default_up:
        return u64 if Defaults.ip.bits > 32 else u32
    if isinstance(dtype, str):  # Taichi's names only: numpy's 'i8' would be int64, not int8
        if dtype in ALL and dtype != 'u1':
            return ALL[dtype]
        raise DataTypeError(f'unsupported data type {dtype!r}; use one of '
                            f'{", ".join(n for n in ALL if n != "u1")}')
    if is_tensor_type(dtype):
        raise DataTypeError(f'{dtype!r} is a vector/matrix type, not a scalar type')
    try:
        npd = np.dtype(dtype) if dtype is not None else None  # np.dtype(None) is float64
    except (TypeError, ValueError):
        npd = None
    if npd is not None:
        for t in ALL.values():
            if t.np == npd and t is not u1:
                return t
    raise DataTypeError(f"unsupported data type {dtype!r}; use one of f32, f64, i32, u32, i64")


def promote(a, b):
    """Binary-op result type (Taichi's rules): float beats int, wider beats narrower, signed int with
    unsigned of the same width gives the unsigned one; bool acts as i32."""
    if a is u1:
        a = i32
    if b is u1:
        b = i32
    if a is b:
        return a
    if a.is_float or b.is_float:
        if a.is_float and b.is_float:
            return a if a.bits >= b.bits else b
        return a if a.is_float else b
    if a.bits != b.bits:
        return a if a.bits > b.bits else b
    return a if a.kind == 'u' else b


def literal_type(value):
    """The type a Python literal takes when it stands alone."""
    if isinstance(value, bool):
        return i32
    if isinstance(value, int):
        return Defaults.ip
    if isinstance(value, float):
        return Defaults.fp
    raise TypeError(f"not a number: {value!r}")


def is_signed(dt):
    """`ti.types.is_signed(dt)`: whether an integer type is signed (Taichi asserts on others)."""
    dt = resolve(dt)
    if not dt.is_int:
        raise TypeError(f'is_signed takes an integer type, got {dt}')
    return dt.is_signed


def is_integral(dt):
    """`ti.types.is_integral(dt)`: an integer type (u1 included)."""
    dt = dt if dt is u1 else resolve(dt)
    return dt.is_int or dt.is_bool


def is_real(dt):
    """`ti.types.is_real(dt)`: a floating-point type."""
    return resolve(dt).is_float


def is_tensor(t):
    """`ti.types.is_tensor(t)`: a vector or matrix type."""
    return is_tensor_type(t)


def is_tensor_type(t):
    """A `ti.math.vec3` / `ti.types.matrix(...)` type."""
    return isinstance(t, TensorType)


class _PrimitiveTypes:
    """`ti.types.primitive_types`: Taichi's lists of the scalar types (and their names)."""
    real_types = [f16, f32, f64, float]
    integer_types = [i8, i16, i32, i64, u1, u8, u16, u32, u64, int, bool]
    all_types = real_types + integer_types

    def __getattr__(self, name):
        if name in ALL:
            return ALL[name]
        raise AttributeError(f'primitive_types has no {name!r}')


primitive_types = _PrimitiveTypes()
