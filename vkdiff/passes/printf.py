"""Compiler support for `print` in kernels: printf format specifiers as Taichi 1.7.4 uses them.

The frontend checks a user's specifier against the value's type (Taichi's frontend_type_check:
"'.2d' doesn't match 'f32'.") and merges it with the type's default (Taichi's
merge_printf_specifier: f32 '%f', f64 '%.12f', i64 '%lld'...). The `print` IR statement keeps
the merged specifiers; the host formats the values the device sent back with `format_value`
(C printf, as Taichi's CPU backend prints: NaN keeps its sign, '%a' is hexadecimal)."""
import math
import re

from .. import types as T

_SPEC = re.compile(r'%?([-+ #0]+)?(\d+|\*)?(\.(?:\d+|\*))?([hljztL]|hh|ll)?'
                   r'([csdioxXufFeEaAgGnp])?')
_SIGNED, _UNSIGNED, _REAL = 'di', 'oxXu', 'fFeEaAgG'


def dtype_format(dt):
    """Taichi's data_type_format: the printf specifier a value of type `dt` prints with."""
    if dt is T.f64:
        return '%.12f'
    if dt.is_float:
        return '%f'
    if dt.is_bool:
        return '%d'
    length = {8: 'h', 16: 'h', 32: '', 64: 'll'}[dt.bits]
    return '%' + length + ('d' if dt.is_signed else 'u')


def parse(spec):
    """(flags, width, precision, length, conversion) of a printf specifier, or None."""
    m = _SPEC.fullmatch(spec)
    return None if m is None else tuple(g or '' for g in m.groups())


def check(spec, dt):
    """None if the user's specifier `spec` suits a value of type `dt`, else Taichi's message
    (its TaichiTypeError text)."""
    conv = spec[-1:]
    if conv not in 'csdioxXufFeEaAgGnp' or not conv:
        return None  # no conversion: the type's
    if conv in 'csnp':
        return f"conversion '{conv}' is not supported."
    integral = dt.is_int or dt.is_bool
    if (conv in _REAL and not dt.is_float) or \
            (conv in _SIGNED and not (integral and dt.is_signed)) or \
            (conv in _UNSIGNED and not (integral and not dt.is_signed)):
        return f"'{spec}' doesn't match '{dt.name}'."
    return None


def merge(user, dt):
    """The specifier a value of type `dt` prints with, given the user's (None: the type's):
    Taichi's merge_printf_specifier (the user's flags, width and precision; the type's
    precision when the user gives none; a conversion of the type's group). The length modifier
    is dropped: the host formats exact Python numbers. Returns (specifier, warning or None)."""
    base = dtype_format(dt)
    _, _, dprec, _, dconv = parse(base)
    if user is None:
        return _strip_length(base), None
    p = parse(user)
    if p is None:
        return None, f'{user} is not a valid printf specifier.'
    flags, width, prec, _length, conv = p
    if width == '*' or prec == '.*' or conv == 'n':
        return None, f'The {user} printf specifier is not supported'
    prec = prec or dprec
    if conv and conv != dconv:
        same = any(conv in g and dconv in g for g in (_SIGNED, _UNSIGNED, _REAL))
        conv = conv if same else dconv
    return '%' + flags + width + prec + (conv or dconv), None


def _strip_length(spec):
    flags, width, prec, _, conv = parse(spec)
    return '%' + flags + width + prec + conv


def format_value(spec, v):
    """One value formatted by a merged printf specifier `spec` (without length modifier), as C's
    printf: Python's % operator, with C's '-nan' for a NaN whose sign bit is set, and '%a'."""
    flags, width, prec, _, conv = parse(spec)
    if conv in _REAL:
        v = float(v)
        if math.isnan(v):
            s = spec.replace('a', 'f').replace('A', 'F') % math.copysign(math.inf, v)
            return s.replace('inf', 'nan').replace('INF', 'NAN')
        if conv in 'aA':
            s = _hexfloat(v, flags)
            s = s.upper() if conv == 'A' else s
            return _pad(s, flags, width)
        return spec % v
    s = spec % int(v)
    return s.replace('0o', '0', 1) if conv == 'o' else s  # C's '#o' is 017, Python's 0o17


def _hexfloat(v, flags):
    if math.isinf(v):
        body = 'inf'
    else:
        mant, _, exp = float.hex(abs(v)).partition('p')
        mant = mant.rstrip('0').rstrip('.')
        body = f'{mant}p{int(exp):+d}'
    sign = '-' if math.copysign(1, v) < 0 else ('+' if '+' in flags else ' ' if ' ' in flags
                                                  else '')
    return sign + body


def _pad(s, flags, width):
    w = int(width or 0)
    return s.ljust(w) if '-' in flags else s.rjust(w)


def storage(dt):
    """The type a value of type `dt` travels to the host as (whole 32-bit words: narrow
    integers widen, f16 becomes f32, u1 i32) and the number of words."""
    if dt.bits == 64:
        return dt, 2
    if dt.is_float:
        return T.f32, 1
    if dt.is_bool:
        return T.i32, 1
    return (T.i32 if dt.is_signed else T.u32), 1
