"""Frontend floor: `print(...)` in kernels and ti.funcs, and the f-strings and `str.format` calls
that feed it (Taichi 1.7.4's ti_print, ti_format and canonicalize_formatted_string).

`print(*values, sep=' ', end='\\n')` becomes one `print` IR statement: its args are the scalar
run-time values, attrs['text'] the literal texts around them (len(args) + 1 strings) and
attrs['specs'] each value's printf specifier (passes/printf.py: the user's `{x:.2f}` merged with
the type's default). Vectors and matrices print element by element as Taichi does ([1, 2],
[[1, 2], [3, 4]]), lists and tuples as [a, b]; compile-time values in f-strings are formatted by
Python. An f-string or `.format` of run-time values is a `Formatted`, which only print takes."""
import re

import numpy as np

from .. import types as T
from ..errors import TaichiSyntaxError, TaichiTypeError
from ..passes import printf
from . import ops
from .context import Value, current, error
from ..lang.matrix import Matrix


class Formatted:
    """An f-string or "...".format(...) holding run-time values: `pieces` are strings, Values,
    matrices and `Spec`s, in order."""

    def __init__(self, pieces):
        self.pieces = pieces

    def __str__(self):
        raise error('an f-string or str.format() of run-time kernel values can only be printed '
                    '(print(...)); it is not a Python string')


class Spec:
    """A value with the user's format specifier (`{x:.2f}`)."""

    def __init__(self, value, spec):
        self.value, self.spec = value, spec


def _runtime(x):
    """Does x hold run-time values (so that only print can format it)?"""
    if isinstance(x, (list, tuple)):
        return any(_runtime(e) for e in x)
    return isinstance(x, (Value, Matrix, Spec, Formatted))


def joined_str(parts):
    """An f-string: `parts` are its literal strings and its values (`Spec`s where a format
    specifier was given). With compile-time values only it is Python's string."""
    if not any(_runtime(p) for p in parts):
        return ''.join(_py_format(p) for p in parts)
    return Formatted([p if isinstance(p, str) or _runtime(p) else _py_format(p) for p in parts])


def _py_format(p):
    return format(p.value, p.spec) if isinstance(p, Spec) else str(p)


def format_call(raw, args, kwargs):
    """`raw.format(*args, **kwargs)` in a kernel, by Taichi's rules: '{}', '{0}' and '{name}'
    fields with optional specifiers; every positional argument and keyword must be used. A
    specifier on a compile-time number formats it as that number's kernel type would print."""
    fields = []
    unnamed = 0
    for field in re.findall(r'{(.*?)}', raw):
        item, spec = field.split(':', 1) if ':' in field else (field, None)
        if item.isdigit():
            item = int(item)
        elif item == '':
            item, unnamed = unnamed, unnamed + 1
        fields.append((item, spec or None))
    top = max([i for i, _ in fields if isinstance(i, int)], default=-1)
    if top + 1 != len(args):
        raise error(f'Expected {top + 1} positional argument(s), but received {len(args)} '
                    'instead.', TaichiSyntaxError)
    named = [i for i, _ in fields if isinstance(i, str)]
    for k in named:
        if k not in kwargs:
            raise error(f"Keyword '{k}' not found.", TaichiSyntaxError)
    for k in kwargs:
        if k not in named:
            raise error(f"Keyword '{k}' not used.", TaichiSyntaxError)
    texts = re.split(r'{.*?}', raw)
    parts = [texts[0]]
    for (item, spec), text in zip(fields, texts[1:]):
        v = args[item] if isinstance(item, int) else kwargs[item]
        if spec is not None and ops.is_number(v):
            v = _const_formatted(v, spec)
        elif spec is not None:
            v = Spec(v, spec) if _runtime(v) else format(v, spec)
        parts += [v, text]
    if not any(_runtime(p) for p in parts):
        return ''.join(str(p) for p in parts)
    return Formatted([p if isinstance(p, str) or _runtime(p) else str(p) for p in parts])


def _const_formatted(v, spec):
    """A compile-time number with a specifier: printed as its kernel type (Taichi makes it an
    expression of its literal type), formatted now."""
    v = ops._py(v)
    dt = T.literal_type(v)
    return _format_entry(np.array(v).astype(dt.np)[()].item(), dt, spec)


def _format_entry(v, dt, spec):
    msg = printf.check(spec, dt)
    if msg is not None:
        raise error(msg, TaichiTypeError)
    merged, bad = printf.merge(spec, dt)
    if merged is None:
        raise error(bad, TaichiSyntaxError)
    return printf.format_value(merged, v)


def build_print(args, kwargs):
    """Emit the `print` statement of `print(*args, sep=..., end=...)`."""
    sep, end = kwargs.pop('sep', ' '), kwargs.pop('end', '\n')
    if kwargs:
        raise error(f'print() in a kernel takes sep= and end= only, not {", ".join(kwargs)}',
                    TaichiSyntaxError)
    for name, s in (('sep', sep), ('end', end)):
        if not isinstance(s, str):
            raise error(f'print({name}=...) in a kernel must be a compile-time string, got '
                        f'{type(s).__name__}', TaichiSyntaxError)
    entries = []
    for k, a in enumerate(args):
        if k:
            entries.append(sep)
        _flatten(a, None, entries)
    entries.append(end)
    texts, values, specs = [''], [], []
    for e in entries:
        if isinstance(e, str):
            texts[-1] += e
            continue
        v, spec = e
        if spec is not None:
            msg = printf.check(spec, v.dtype)
            if msg is not None:
                raise error(msg, TaichiTypeError)
        merged, bad = printf.merge(spec, v.dtype)
        if merged is None:
            raise error(bad, TaichiSyntaxError)
        values.append(v.stmt)
        specs.append(merged)
        texts.append('')
    current().emit('print', None, values, {'text': tuple(texts), 'specs': tuple(specs)})


def _flatten(x, spec, out):
    """Append the entries of one printed object: strings, and (Value, user specifier)."""
    if isinstance(x, str):
        out.append(x)
    elif isinstance(x, Formatted):
        for p in x.pieces:
            _flatten(p, None, out)
    elif isinstance(x, Spec):
        _flatten(x.value, x.spec, out)
    elif isinstance(x, Value):
        out.append((x, spec))
    elif isinstance(x, Matrix):
        rows = [x.entries] if x.ndim == 1 else [x.entries[i * x.m:(i + 1) * x.m]
                                                  for i in range(x.n)]
        if x.ndim != 1:
            out.append('[')
        for i, row in enumerate(rows):
            out.append('[' if i == 0 else ', [')
            for j, e in enumerate(row):
                if j:
                    out.append(', ')
                _flatten(e, spec, out)
            out.append(']')
        if x.ndim != 1:
            out.append(']')
    elif isinstance(x, (list, tuple)):
        out.append('[')
        for i, e in enumerate(x):
            if i:
                out.append(', ')
            _flatten(e, spec, out)
        out.append(']')
    elif ops.is_number(x):
        out.append((ops.as_value(ops._py(x)), spec))
    else:
        raise error(f'print() in a kernel cannot print a {type(x).__name__} ({x!r}): it prints '
                    'strings, numbers, kernel values, vectors, matrices, lists and tuples',
                    TaichiSyntaxError)

