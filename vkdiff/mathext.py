"""`ti.math`, continued (re-exported by vkdiff/math.py): Taichi 1.7.4's remaining GLSL-style helpers
(isinf/isnan/vdir/mod/refract, 4x4 transforms, eye/determinant/inverse, popcnt/clz) and its
complex-number helpers on 2-vectors (re, im). Definitions follow python/taichi/math/mathimpl.py."""
import math as _m

from . import types as _T
from .frontend import ops as _ops
from .lang import api as _api
from .lang.matrix import Matrix as _Matrix, Vector as _Vector


def _each(f):
    """Apply a scalar function entrywise to a vector/matrix (or to a scalar)."""
    def g(x):
        return x._map(f) if isinstance(x, _Matrix) else f(x)
    g.__name__, g.__doc__ = f.__name__, f.__doc__
    return g


def _bits(x):
    """The f32 bit pattern of x without its sign (Taichi tests the bits, which no fast-math
    folding of `x != x` can change)."""
    return _api.bit_cast(_ops.cast(x, _T.f32), _T.u32) & 0x7FFFFFFF


@_each
def isinf(x):
    """1 where x is +-infinity, else 0 (entrywise)."""
    if isinstance(x, (int, float)):
        return int(_m.isinf(x))
    return _ops.cast(_bits(x) == 0x7F800000, _T.i32)


@_each
def isnan(x):
    """1 where x is NaN, else 0 (entrywise)."""
    if isinstance(x, (int, float)):
        return int(_m.isnan(x))
    return _ops.cast(_bits(x) > 0x7F800000, _T.i32)


def vdir(ang):
    """The unit 2-vector at angle `ang` (radians): (cos, sin)."""
    return _Vector([_api.cos(ang), _api.sin(ang)])


def mod(x, y):
    """x - y * floor(x / y) (GLSL mod), entrywise."""
    return x - y * _api.floor(x / y)


def refract(x, n, eta):
    """GLSL refract: the refraction direction of incident x at normal n, or zero on total internal
    reflection."""
    dxn = x.dot(n)
    k = 1.0 - eta * eta * (1.0 - dxn * dxn)
    ok = k >= 0.0
    r = eta * x - (eta * dxn + _api.sqrt(_api.max(k, 0.0))) * n
    if isinstance(ok, bool):
        return r if ok else r * 0.0
    return r._map(lambda e: _api.select(ok, e, 0.0))


def _mat4(rows):
    return _Matrix(rows)


def translate(dx, dy, dz):
    """The 4x4 homogeneous translation matrix."""
    return _mat4([[1.0, 0.0, 0.0, dx], [0.0, 1.0, 0.0, dy], [0.0, 0.0, 1.0, dz],
                  [0.0, 0.0, 0.0, 1.0]])


def scale(sx, sy, sz):
    """The 4x4 homogeneous scale matrix."""
    return _mat4([[sx, 0.0, 0.0, 0.0], [0.0, sy, 0.0, 0.0], [0.0, 0.0, sz, 0.0],
                  [0.0, 0.0, 0.0, 1.0]])


def rot_by_axis(axis, ang):
    """The 4x4 rotation by `ang` radians about `axis` (a 3-vector, normalised here)."""
    c, s = _api.cos(ang), _api.sin(ang)
    axis = axis / axis.norm()
    t = (1 - c) * axis
    return _mat4([
        [c + t[0] * axis[0], t[0] * axis[1] + s * axis[2], t[0] * axis[2] - s * axis[1], 0.0],
        [t[1] * axis[0] - s * axis[2], c + t[1] * axis[1], t[1] * axis[2] + s * axis[0], 0.0],
        [t[2] * axis[0] + s * axis[1], t[2] * axis[1] - s * axis[0], c + t[2] * axis[2], 0.0],
        [0.0, 0.0, 0.0, 1.0]])


def rot_yaw_pitch_roll(yaw, pitch, roll):
    """The 4x4 rotation with Euler angles: Y axis (yaw) first, X (pitch) second, Z (roll) third."""
    ch, sh = _api.cos(yaw), _api.sin(yaw)
    cp, sp = _api.cos(pitch), _api.sin(pitch)
    cb, sb = _api.cos(roll), _api.sin(roll)
    return _mat4([
        [ch * cb + sh * sp * sb, sb * cp, -sh * cb + ch * sp * sb, 0.0],
        [-ch * sb + sh * sp * cb, cb * cp, sb * sh + ch * sp * cb, 0.0],
        [sh * cp, -sp, ch * cp, 0.0],
        [0.0, 0.0, 0.0, 1.0]])


def rotation3d(ang_x, ang_y, ang_z):
    """rot_yaw_pitch_roll(ang_z, ang_x, ang_y), as Taichi defines it."""
    return rot_yaw_pitch_roll(ang_z, ang_x, ang_y)


def eye(n):
    """The n x n identity matrix (default float type)."""
    return _Matrix.identity(float, n)


def determinant(m):
    return m.determinant()


def inverse(m):
    return m.inverse()


def popcnt(x):
    """The number of set bits of an integer."""
    return _bitcount(x, 'popcnt')


def clz(x):
    """The number of leading zero bits of a 32-bit integer."""
    return _bitcount(x, 'clz')


def _bitcount(x, what):
    if isinstance(x, _Matrix):
        return x._map(lambda e: _bitcount(e, what))
    dt = _ops.dtype_of(x)
    if not dt.is_int:
        raise TypeError(f'ti.math.{what} takes an integer, got {dt}')
    if isinstance(x, int):
        v = x & ((1 << dt.bits) - 1)
        return bin(v).count('1') if what == 'popcnt' else dt.bits - v.bit_length()
    # branch-free bit tricks on the integer (no SPIR-V extended instruction is needed)
    u = _T.u64 if dt.bits == 64 else _T.u32
    v = _api.bit_cast(x, u) if dt is not u else x
    if what == 'clz':
        for sh in (1, 2, 4, 8, 16) + ((32,) if dt.bits == 64 else ()):
            v = v | (v >> sh)
        v = ~v
    n = _ops.cast(0, _T.i32)
    for b in range(dt.bits):
        n = n + _ops.cast((v >> b) & 1, _T.i32)
    return n


# complex numbers as 2-vectors (re, im)
def cconj(z):
    return _Vector([z[0], -z[1]])


def cdiv(a, b):
    d = b[0] * b[0] + b[1] * b[1]
    return _Vector([(a[0] * b[0] + a[1] * b[1]) / d, (a[1] * b[0] - a[0] * b[1]) / d])


def cinv(z):
    d = z[0] * z[0] + z[1] * z[1]
    return _Vector([z[0] / d, -z[1] / d])


def cexp(z):
    r = _api.exp(z[0])
    return _Vector([r * _api.cos(z[1]), r * _api.sin(z[1])])


def clog(z):
    return _Vector([_api.log(z[0] * z[0] + z[1] * z[1]) / 2.0, _api.atan2(z[1], z[0])])


def _nonzero_or_0(z, w):
    """w where z != 0 (as a complex number), else 0 (Taichi's cpow/csqrt)."""
    nz = _ops.binary('lor', _ops.binary('ne', z[0], 0), _ops.binary('ne', z[1], 0))
    if isinstance(nz, (bool, int)):
        return w if nz else w * 0.0
    return w._map(lambda e: _api.select(nz, e, 0.0))


def cpow(z, n):
    """z**n for a real exponent n (polar form); 0 for z = 0."""
    a = _api.atan2(z[1], z[0]) * n
    r = _api.pow(z[0] * z[0] + z[1] * z[1], n / 2.0)
    return _nonzero_or_0(z, _Vector([r * _api.cos(a), r * _api.sin(a)]))


def csqrt(z):
    """The square root with non-negative real part; 0 for z = 0."""
    r = _api.sqrt(_api.sqrt(z[0] * z[0] + z[1] * z[1]))
    a = _api.atan2(z[1], z[0]) / 2.0
    return _nonzero_or_0(z, _Vector([r * _api.cos(a), r * _api.sin(a)]))


__all__ = ['isinf', 'isnan', 'vdir', 'mod', 'refract', 'translate', 'scale', 'rot_by_axis',
           'rot_yaw_pitch_roll', 'rotation3d', 'eye', 'determinant', 'inverse', 'popcnt', 'clz',
           'cconj', 'cdiv', 'cinv', 'cexp', 'clog', 'cpow', 'csqrt']
