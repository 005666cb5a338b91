"""Whether an index tuple differs in every iteration of a parallel loop (passes/loop_unique.py),
as both passes that ask decide it: forward_globals (an atomic whose old value is already known
becomes a store when no other iteration touches the element) and reductions (a float sum owned by
one iteration is summed in order, not contended). Only what is provably different in every
iteration counts: the loop's own digits `lin // S % C` (a `%` or `//` applies only to a raw digit),
each shifted by an invariant, scaled by a constant without wrapping, or cast without narrowing,
together making up the whole iteration number. Every kernel also counts right under contention
(numpy's count of each element's iterations)."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff import compiler
from vkdiff.passes import reduction
from vkdiff.passes.loop_unique import loop_unique_buffers

N = 256



@ti.func
def _loop(i, off):
    return ti.Vector([i])


@ti.func
def _digits(i, off):
    return ti.Vector([i % 4, i // 4])


@ti.func
def _digits_of_digits(i, off):
    return ti.Vector([(i % 8) % 4, i // 4])


@ti.func
def _invariant_shift(i, off):
    return ti.Vector([i + off])


@ti.func
def _scaled(i, off):
    return ti.Vector([2 * i + 1])


@ti.func
def _scaled_by_4(i, off):
    return ti.Vector([i * 4])


@ti.func
def _cast_unsigned(i, off):
    return ti.Vector([ti.cast(i, ti.u32)])


@ti.func
def _cast_wide(i, off):
    return ti.Vector([ti.cast(i, ti.i64) + 1])


@ti.func
def _shift_then_mod(i, off):
    return ti.Vector([(i + 3) % 4, i // 4])


@ti.func
def _shift_then_div(i, off):
    return ti.Vector([i % 4, (i + 3) // 4])


@ti.func
def _scale_then_mod(i, off):
    return ti.Vector([(2 * i) % 4, i // 4])


@ti.func
def _narrowing_cast(i, off):  # i * 2**32 in i64, then i32: always 0
    return ti.Vector([ti.cast(ti.cast(i, ti.i64) * ti.i64(1 << 32), ti.i32)])


@ti.func
def _loop_plus_digit(i, off):  # 2 and 4 both give 4
    return ti.Vector([i + i % 4])


@ti.func
def _one_digit(i, off):
    return ti.Vector([i // 4])


@ti.func
def _digit_twice(i, off):
    return ti.Vector([i % 4, i % 4])


# name: (index of iteration i, the same in numpy, field shape, unique)
CASES = {
    'loop': (_loop, lambda i: (i,), (N,), True),
    'digits': (_digits, lambda i: (i % 4, i // 4), (4, 64), True),
    'digits_of_digits': (_digits_of_digits, lambda i: (i % 4, i // 4), (4, 64), True),
    'invariant_shift': (_invariant_shift, lambda i: (i + 3,), (N + 3,), True),
    'scaled': (_scaled, lambda i: (2 * i + 1,), (2 * N + 1,), True),
    'scaled_by_4': (_scaled_by_4, lambda i: (4 * i,), (4 * N,), True),  # (no wrap below N)
    'cast_unsigned': (_cast_unsigned, lambda i: (i,), (N,), True),
    'cast_wide': (_cast_wide, lambda i: (i + 1,), (N + 1,), True),
    # not provably unique: a shift, a scale or a cast applied before a `%` or `//`, a
    # narrowing cast of a scaled digit
    'shift_then_mod': (_shift_then_mod, lambda i: ((i + 3) % 4, i // 4), (4, 64), False),
    'shift_then_div': (_shift_then_div, lambda i: (i % 4, (i + 3) // 4), (4, 65), False),
    'scale_then_mod': (_scale_then_mod, lambda i: ((2 * i) % 4, i // 4), (4, 64), False),
    'narrowing_cast': (_narrowing_cast, lambda i: (0,), (8,), False),
    # not unique at all
    'loop_plus_digit': (_loop_plus_digit, lambda i: (i + i % 4,), (N + 4,), False),
    'one_digit': (_one_digit, lambda i: (i // 4,), (64,), False),
    'digit_twice': (_digit_twice, lambda i: (i % 4, i % 4), (4, 4), False),
}


def _program(name):
    idx_of, _, shape, _ = CASES[name]
    x = ti.field(ti.i32, shape)
    y = ti.field(ti.f32, shape)
    s = ti.field(ti.i32, ())

    @ti.kernel
    def count(off: ti.i32):  # forward_globals: the atomic's old value is known (v)
        for i in range(N):
            idx = idx_of(i, off)
            v = x[idx]
            x[idx] += 1
            s[None] += v * 0

    @ti.kernel
    def add(off: ti.i32):  # reductions: a float sum into y
        for i in range(N):
            y[idx_of(i, off)] += 1.0

    return x, y, count, add


def _decisions(kernel, field):
    """(loop_unique's, reductions') decision on `field` in the kernel's parallel task."""
    inst, _ = kernel.instance((3,))
    out = []
    for t in inst.tasks:
        t = compiler.lower(compiler.debug_checks(t.clone(), inst.name, inst.options), inst.options)
        if t.kind == 'parallel':
            unique = field.buffer in loop_unique_buffers(t.loop)
            owned = reduction._owned_by_one_iteration(t.loop, reduction._candidates(t))
            out.append((unique, any(s.buf is field.buffer for s in owned)))
    assert len(out) == 1
    return out[0]


@pytest.mark.parametrize('name', sorted(CASES))
def test_both_passes_decide_alike(name):
    x, y, count, add = _program(name)
    unique = CASES[name][3]
    assert _decisions(add, y) == (unique, unique)
    assert _decisions(count, x)[0] == unique


@pytest.mark.parametrize('name', sorted(CASES))
def test_counts_under_contention(name):
    x, y, count, add = _program(name)
    _, index_py, shape, _ = CASES[name]
    want = np.zeros(shape, np.int64)
    for i in range(N):
        want[index_py(i)] += 1
    count(3)
    add(3)
    np.testing.assert_array_equal(x.to_numpy(), want)
    np.testing.assert_array_equal(y.to_numpy(), want.astype(np.float32))
