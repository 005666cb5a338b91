"""Frontend floor: `assert cond[, msg]` in kernels. As in Taichi, it is checked only with
ti.init(debug=True); otherwise only its condition is evaluated (as Taichi builds it: a call in it
runs), the check is not built. In debug mode it becomes a
`check [cond, *values] | message` statement, which passes/debug_checks.py turns into a test that
reports a failure at the end of the launch (TaichiAssertionError). The message is a string, the
condition's source (no message), `"fmt %d" % (a, b)` or an f-string: run-time scalars in it are
read back with the failure and formatted on the host. (The bound checks of
ti.init(check_out_of_bound=True) on values are in frontend/checks.py.)"""
import ast

from ..errors import TaichiSyntaxError
from ..lang.matrix import Matrix
from ..passes.debug_checks import MAX_VALUES
from . import ops
from .checks import Message
from .context import Value, current, emit, error


def build_assert(fb, node):
    cond = fb(node.test)  # evaluated in any mode: a call in it may have side effects
    if not current().debug:
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
