"""`ti.math` (also `import vkdiff.math as tm`): Taichi's GLSL-style vector types and helpers.

`vec2/3/4`, `ivec2/3/4`, `mat2/3/4` construct vectors and matrices (`vec3(0)`, `vec3(1, 2, 3)`,
`vec3(v2, 1)`), make fields (`vec3.field(shape=n)`, `ti.field(vec3, shape=n)`); the functions
work elementwise on vectors, in kernels and in Python scope."""
import math as _m

from . import types as _T
from .frontend import ops as _ops
from .lang import api as _api
from .lang.matrix import Matrix as _Matrix, Vector as _Vector, elementwise as _elementwise_matrix
from .lang.matrix import MatrixType, VectorType  # noqa: F401  (ti.math.vec3, ...: lang/matrix.py)

pi = _m.pi
e = _m.e
inf = _m.inf
nan = _m.nan


vec2, vec3, vec4 = (VectorType(n, float) for n in (2, 3, 4))
ivec2, ivec3, ivec4 = (VectorType(n, int) for n in (2, 3, 4))
uvec2, uvec3, uvec4 = (VectorType(n, _T.default_up) for n in (2, 3, 4))  # u32/u64 by default_ip
mat2, mat3, mat4 = (MatrixType(n, n, float) for n in (2, 3, 4))

globals().update(_api.table_functions('ti.math'))  # sin, cos, sqrt, floor, ...: the op table's
round, atan2, pow, min, max, clamp = _api.round, _api.atan2, _api.pow, _api.min, _api.max, _api.clamp
exp2 = _api.exp2


def log2(x):
    return _ops.binary('div', log(x), _m.log(2.0))  # Taichi: log(x) / static(log(2.0))


def _elementwise(f):
    def g(*args):
        for a in args:
            if isinstance(a, _Matrix):
                if len(args) == 1:
                    return a._map(f)
                return _elementwise_matrix(f, *args)
        return f(*args)
    g.__name__ = f.__name__
    return g


# The helpers below are Taichi 1.7.4's formulas (python/taichi/math/mathimpl.py), operation
# for operation, so results agree to the bit.
@_elementwise
def sign(x):
    return _ops.binary('sub', _ops.cast(_ops.binary('ge', x, 0.0), float),
                       _ops.cast(_ops.binary('le', x, 0.0), float))


def fract(x):
    return x - floor(x)


def mix(x, y, a):
    return x * (1.0 - a) + y * a


@_elementwise
def step(edge, x):
    return _ops.cast(_ops.binary('ge', x, edge), float)


def smoothstep(edge0, edge1, x):
    t = clamp((x - edge0) / (edge1 - edge0), 0.0, 1.0)
    return t * t * (3.0 - 2.0 * t)


def dot(x, y):
    return x.dot(y)


def cross(x, y):
    return x.cross(y)


def length(x):
    return x.norm()


def normalize(x):
    return x / x.norm()


def distance(x, y):
    return (x - y).norm()


def reflect(x, n):
    k = x.dot(n)
    return x - 2.0 * k * n


def refract(x, n, eta):
    """Taichi's refract: zero where k < 0 (total internal reflection)."""
    dxn = x.dot(n)
    k = 1.0 - eta * eta * (1.0 - dxn * dxn)
    r = eta * x - (eta * dxn + sqrt(_api.max(k, 0.0))) * n
    return _api.select(_ops.binary('ge', k, 0.0), r, 0.0)


def mod(x, y):
    return x - y * floor(x / y)


def radians(deg):
    return deg * (pi / 180.0)


def degrees(rad):
    return rad * (180.0 / pi)


def cmul(a, b):
    """Complex product of two 2-vectors (re, im)."""
    return _Vector([a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0]])


def rotation2d(ang):
    return _Matrix([[cos(ang), -sin(ang)], [sin(ang), cos(ang)]])

from .mathext import *  # noqa: F401,F403  the rest of Taichi's ti.math (vkdiff/mathext.py)
