"""ti.init(debug=True) integer overflow detection (issue 27; Taichi's CPU/CUDA debug_add ...):
every integer +, -, *, << of a kernel that overflows its type prints Taichi's message
("Addition overflow detected in" + the source location and line) once per overflowing
invocation, after the launch; the result still wraps. Checked against Python's exact integers
over edge-value pairs of every width; without debug nothing is printed."""
import itertools

import numpy as np
import pytest
from device_requires import requires

import vkdiff as ti

WORD = {'add': 'Addition', 'sub': 'Subtraction', 'mul': 'Multiplication', 'shl': 'Shift left'}
TYPES = [ti.i8, ti.u8, ti.i16, ti.u16, ti.i32, ti.u32,
         pytest.param(ti.i64, marks=requires('int64')), pytest.param(ti.u64, marks=requires('int64'))]


def edges(t):
    lo, hi = (-(1 << (t.bits - 1)), (1 << (t.bits - 1)) - 1) if t.is_signed else (0, (1 << t.bits) - 1)
    root = int(np.sqrt(hi))
    vals = {0, 1, 2, 3, -1, -2, lo, lo + 1, hi, hi - 1, hi // 2, hi // 2 + 1, root, root + 1,
            -root, -root - 1, lo // 2, lo // 2 - 1}
    return sorted(v for v in vals if lo <= v <= hi), lo, hi


def wrap(v, t):
    v &= (1 << t.bits) - 1
    return v - (1 << t.bits) if t.is_signed and v >= 1 << (t.bits - 1) else v


def expected(op, a, b, t, lo, hi):
    """(wrapped result, overflowed?) as Taichi defines them."""
    if op == 'shl':
        c = wrap(a << b, t)
        return c, (c >> b) != a  # Python's >> is arithmetic; c >= 0 for unsigned
    exact = {'add': a + b, 'sub': a - b, 'mul': a * b}[op]
    return wrap(exact, t), not lo <= exact <= hi


@pytest.mark.parametrize('op', ['add', 'sub', 'mul', 'shl'])
@pytest.mark.parametrize('t', TYPES)
def test_overflow_is_reported_per_invocation(op, t, capfd):
    ti.init(debug=True)
    vals, lo, hi = edges(t)
    if op == 'shl':
        pairs = [(a, s) for a in vals for s in range(t.bits)]
    else:
        pairs = list(itertools.product(vals, vals))
    n = len(pairs)
    a, b, c = (ti.field(t, shape=n) for _ in range(3))
    a.from_numpy(np.array([p[0] for p in pairs], dtype=t.np))
    b.from_numpy(np.array([p[1] for p in pairs], dtype=t.np))

    @ti.kernel
    def run():
        for i in a:
            if ti.static(op == 'add'):
                c[i] = a[i] + b[i]
            elif ti.static(op == 'sub'):
                c[i] = a[i] - b[i]
            elif ti.static(op == 'mul'):
                c[i] = a[i] * b[i]
            else:
                c[i] = a[i] << b[i]

    capfd.readouterr()
    run()
    out = capfd.readouterr().out
    want = [expected(op, x, y, t, lo, hi) for x, y in pairs]
    np.testing.assert_array_equal(c.to_numpy(), np.array([w[0] for w in want], dtype=t.np))
    n_bad = sum(w[1] for w in want)
    assert n_bad > 0
    assert out.count(f'{WORD[op]} overflow detected in File "{__file__}"') == n_bad, out[:400]
    sym = {'add': '+', 'sub': '-', 'mul': '*', 'shl': '<<'}[op]
    assert out.count(f'c[i] = a[i] {sym} b[i]') == n_bad


def test_no_report_without_debug(capfd):
    ti.init()
    x = ti.field(ti.i32, shape=4)

    @ti.kernel
    def k(v: ti.i32):
        for i in x:
            x[i] = v * 2 + v

    capfd.readouterr()
    k(2 ** 30)
    ti.sync()
    assert 'overflow' not in capfd.readouterr().out
    assert (x.to_numpy() == wrap(3 * 2 ** 30, ti.i32)).all()


def test_report_comes_with_the_launch_and_names_the_kernel(capfd):
    """The message is printed at the end of the launch that overflowed (before the host's next
    print), with the kernel's name and source line, and the launch returns normally."""
    ti.init(debug=True)

    @ti.kernel
    def grow(v: ti.u16) -> ti.u16:
        return v + ti.u16(1)

    capfd.readouterr()
    assert grow(65534) == 65535
    print('between')
    assert grow(65535) == 0
    out = capfd.readouterr().out
    assert out.index('between') < out.index('Addition overflow detected in'), out
    assert out.count('Addition overflow detected in') == 1
    assert f'File "{__file__}", line' in out and ', in grow:' in out and 'return v + ti.u16(1)' in out
