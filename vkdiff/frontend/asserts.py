"""Frontend stage: `assert cond[, msg]` in kernels. As in Taichi, it is checked only with
ti.init(debug=True); otherwise only its condition is evaluated (as Taichi builds it: a call in it
runs), the check is not built. In debug mode it becomes a
`check [cond, *values] | message` statement, which passes/debug_checks.py turns into a test that
reports a failure at the end of the launch (TaichiAssertionError). The message is a string, the
condition's source (no message), `"fmt %d" % (a, b)` or an f-string: run-time scalars in it are
read back with the failure and formatted on the host. Also the bound checks of
ti.init(check_out_of_bound=True) (which debug=True implies) that the frontend builds: run-time
vector/matrix component indices (`check_components`) and pow(int, int)'s exponent
(`check_exponent`)."""
import ast

from ..errors import TaichiSyntaxError
from ..lang import state
from ..lang.matrix import Matrix
from ..passes.debug_checks import MAX_VALUES
from . import ops
from .context import Value, emit, error


class Message:
    """The message of a failed assert: `pieces` are strings, ('%', template, items) or
    ('f', spec, item); an item is a Python value or the index of a run-time value."""

    def __init__(self, text, pieces):
        self.text, self.pieces = text, pieces

    def __call__(self, values):
        def get(item):
            return values[item[1]] if isinstance(item, tuple) else item
        out = []
        for p in self.pieces:
            if isinstance(p, str):
                out.append(p)
            elif p[0] == '%':
                out.append(p[1] % tuple(get(i) for i in p[2]))
            else:
                out.append(format(get(p[2]), p[1]))
        return ''.join(out)

    def __repr__(self):
        return repr(self.text)


def build_assert(fb, node):
    cond = fb(node.test)  # evaluated in any mode: a call in it may have side effects
    if not state.config.get('debug'):
        return  # Taichi checks asserts only with debug
    values = []

    def item(x):
        """A message argument: a Python value, or ('v', k) for the k-th run-time value."""
        if isinstance(x, Matrix) or (isinstance(x, Value) and x.dtype is None):
            raise error('assert message arguments must be scalars', TaichiSyntaxError)
        if isinstance(x, Value):
            values.append(x.stmt)
            if len(values) > MAX_VALUES:
                raise error(f'an assert message shows at most {MAX_VALUES} run-time values',
                            TaichiSyntaxError)
            return ('v', len(values) - 1)
        return x

    msg = node.msg
    if msg is None:
        pieces = [ast.unparse(node.test)]
    elif isinstance(msg, ast.BinOp) and isinstance(msg.op, ast.Mod) and \
            isinstance(msg.left, ast.Constant) and isinstance(msg.left.value, str):
        args = msg.right.elts if isinstance(msg.right, ast.Tuple) else [msg.right]
        pieces = [('%', msg.left.value, [item(fb(a)) for a in args])]
    elif isinstance(msg, ast.JoinedStr):
        pieces = []
        for part in msg.values:
            if isinstance(part, ast.Constant):
                pieces.append(str(part.value))
            else:
                spec = part.format_spec.values if part.format_spec is not None else []
                if not all(isinstance(c, ast.Constant) for c in spec):
                    raise error('an assert f-string format spec must be a constant',
                                TaichiSyntaxError)
                conv = {-1: '', 115: '!s', 114: '!r', 97: '!a'}[part.conversion]
                if conv:
                    raise error('an assert f-string cannot convert with ' + conv,
                                TaichiSyntaxError)
                pieces.append(('f', ''.join(str(c.value) for c in spec), item(fb(part.value))))
    else:
        text = fb(msg)
        if not isinstance(text, str):
            raise error('an assert message must be a string', TaichiSyntaxError)
        pieces = [text]
    if isinstance(cond, Matrix):
        raise error('an assert condition must be a scalar', TaichiSyntaxError)
    if not isinstance(cond, Value):
        if cond:
            return  # true at compile time
        cond = ops.as_value(0) != 0
    emit('check', None, [cond.stmt] + values,
         {'message': Message(ast.unparse(msg) if msg is not None else pieces[0], pieces)})


def check_components(keys, sizes):
    """ti.init(debug=True) or check_out_of_bound=True: a `check` that run-time vector/matrix
    component indices `keys` lie within `sizes` (Taichi's bound checks include them; without the
    check an index past the end reads the last component and writes none)."""
    if not state.bounds_checked():
        return
    ok, values, pieces = None, [], ['Out of bound access: index (']
    for k, (key, n) in enumerate(zip(keys, sizes)):
        if k:
            pieces.append(', ')
        if isinstance(key, Value):
            inside = ops.binary('land', ops.binary('ge', key, 0), ops.binary('lt', key, n))
            ok = inside if ok is None else ops.binary('land', ok, inside)
            values.append(key.stmt)
            pieces.append(('f', '', ('v', len(values) - 1)))
        else:
            pieces.append(str(key))
    if ok is None:
        return
    pieces.append(',) of a vector of %d components' % sizes[0] if len(sizes) == 1 else
                  ') of a %dx%d matrix' % tuple(sizes))
    text = ''.join(p for p in pieces if isinstance(p, str))
    emit('check', None, [ok.stmt] + values, {'message': Message(text, pieces), 'exc': 'index'})


def check_exponent(base, exp):
    """ti.init(check_out_of_bound=True) (or debug=True): a `check` that the run-time exponent of
    an integer `**` is not negative (Taichi's CheckOutOfBound pass: "Negative exponent in
    pow(int, int) is not allowed."; unchecked, the result is base ** |exp|, as Taichi's)."""
    if not state.bounds_checked():
        return
    values = [exp.stmt]
    if isinstance(base, Value):
        values.insert(0, base.stmt)
        shown = ('f', '', ('v', 0))
    else:
        shown = str(base)
    pieces = ['Negative exponent in pow(int, int) is not allowed: ', shown, ' ** ',
              ('f', '', ('v', len(values) - 1))]
    text = 'Negative exponent in pow(int, int) is not allowed'
    ok = ops.binary('ge', exp, 0)
    emit('check', None, [ok.stmt] + values, {'message': Message(text, pieces), 'exc': 'value'})
