"""Values floor: the bound checks of ti.init(check_out_of_bound=True) (which debug=True implies)
that value operations build: run-time vector/matrix component indices (`check_components`, from
lang/matrix.py and frontend/lvalues.py) and pow(int, int)'s exponent (`check_exponent`, from
frontend/ops.py). Each is a `check [cond, *values] | message` statement that
passes/debug_checks.py turns into a test reported at the end of the launch; `Message` is the
message of a failed check or assert (frontend/asserts.py). Whether to build them is the Emitter's
`check_bounds` (launch/kernel.py fills it from ti.init's config)."""
from . import ops
from .context import Value, current, emit


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



def check_components(keys, sizes):
    """ti.init(debug=True) or check_out_of_bound=True: a `check` that run-time vector/matrix
    component indices `keys` lie within `sizes` (Taichi's bound checks include them; without the
    check an index past the end reads the last component and writes none)."""
    if not current().check_bounds:
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
    if not current().check_bounds:
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
