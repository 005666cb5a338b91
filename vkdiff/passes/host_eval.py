"""Pass helper: evaluate an integer IR expression (a loop's trip count, an index) on the host at
launch, without the device. Constants, kernel arguments and pure integer arithmetic always; loads
from global memory only through the `load(buf, flat_index)` callback the launcher supplies (it
answers None where the host copy is not current). Used for launch geometry (lang) and for the
Tape's access check across launches (autodiff.access_rules)."""

from ..optable import OPS


def _nonzero_divisor(fold):
    return lambda a, b: fold(a, b) if b else None


# integer ops on Python ints: the op table's Python-number evaluation (`fold`); a zero divisor
# is unknown (None), not an exception; a cast is the integer itself
HOST_OPS = {'add': OPS['add'].fold, 'sub': OPS['sub'].fold, 'mul': OPS['mul'].fold,
            'floordiv': _nonzero_divisor(OPS['floordiv'].fold),
            'mod': _nonzero_divisor(OPS['mod'].fold), 'max': OPS['max'].fold,
            'min': OPS['min'].fold, 'cast': lambda a: int(a)}


def host_eval(s, args, load=None):
    """The value of the integer expression `s`, or None where it needs the device. `args`: the
    launch's scalar arguments by index. `load(buf, flat_index)`: the value of scalar number
    `flat_index` of Buffer `buf` (row-major, components innermost), or None when the host does not
    know it; without it, every load is unknown."""
    op = s.op
    if op == 'const':
        return s.attrs['value']
    if op == 'arg':
        return int(args[s.attrs['index']])
    if op == 'gload':
        return _load(s, args, load) if load is not None else None
    f = HOST_OPS.get(op)
    if f is None:
        return None
    vals = [host_eval(a, args, load) for a in s.args]
    if any(v is None for v in vals):
        return None
    return f(*vals)


def _load(s, args, load):
    buf = s.buf
    if buf.shape is None:
        return None
    flat = 0
    for ix, n in zip(s.args, buf.shape):
        k = host_eval(ix, args, load)
        if k is None or not 0 <= k < n:
            return None
        flat = flat * n + k
    return load(buf, flat * buf.ncomp + s.attrs.get('comp', 0))


def host_known(x):
    """True if expression x is made of constants, kernel arguments and integer arithmetic only
    (its value is known on the host at every launch, without reading memory)."""
    return x.op in ('const', 'arg') or (x.op in HOST_OPS and all(host_known(a) for a in x.args))
