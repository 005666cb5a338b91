"""A widened integer compared with a constant: `ti.cast(a, ti.i64) > 5`, and every ordered
comparison of an i32 value with a literal under `default_ip=ti.i64` (Taichi types the literal
i64 and widens the i32 side). Lavapipe (Mesa 22.3) miscompiled `OpSConvert(a) > const` (also
through `+ 0`, `| 0`, `max(_, c)`): 3 > 5 was true and -7 > 0 was true; codegen now widens a
signed value to 64 bits as a pair of words. Expected values are plain Python comparisons (Taichi 1.7.4 CPU prints
the same: `if i > 5` over range(16) counts 10)."""
import importlib.util
import operator

import numpy as np
import pytest

import vkdiff as ti

OPS = [('>', operator.gt), ('<', operator.lt), ('>=', operator.ge), ('<=', operator.le),
       ('==', operator.eq), ('!=', operator.ne)]
CONSTS = [-2**40, -2**31 - 1, -2**31, -10, -7, -1, 0, 3, 5, 7, 2**31 - 1, 2**31, 2**32, 2**40]
VALUES = [-2**31, -7, -1, 0, 3, 5, 7, 2**31 - 1]


def _np_info(t):
    return np.iinfo(getattr(np, {'i': 'int', 'u': 'uint'}[t[0]] + t[1:]))


def _consts(dst_type):
    d = _np_info(dst_type)
    return [c for c in CONSTS if d.min <= c <= d.max]


def _kernel(tmp, src_type, dst_type, const_left):
    consts = _consts(dst_type)
    r = ti.field(ti.i32, shape=(len(OPS), len(consts)))
    lines = []
    for i, (sym, _) in enumerate(OPS):
        for j, c in enumerate(consts):
            lhs, rhs = (f'ti.{dst_type}({c})', 'b') if const_left else ('b', f'ti.{dst_type}({c})')
            lines.append(f'    r[{i}, {j}] = ti.cast({lhs} {sym} {rhs}, ti.i32)')
    src = (f'def k(a: ti.{src_type}):\n    b = ti.cast(a, ti.{dst_type})\n' + '\n'.join(lines) + '\n')
    path = tmp / f'widened_{src_type}_{dst_type}_{int(const_left)}.py'
    path.write_text('import vkdiff as ti\n' + src)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.r = r
    return ti.kernel(mod.k), r


@pytest.mark.parametrize('const_left', [False, True])
@pytest.mark.parametrize('src_type,dst_type', [('i32', 'i64'), ('i16', 'i32'), ('u32', 'i64'),
                                               ('u32', 'u64'), ('i8', 'i64')])
def test_widened_value_against_constants(tmp_path, src_type, dst_type, const_left):
    ti.init(arch=ti.vulkan)
    k, r = _kernel(tmp_path, src_type, dst_type, const_left)
    info = _np_info(src_type)
    consts = _consts(dst_type)
    for a in VALUES:
        if not info.min <= a <= info.max:
            continue
        k(a)
        got = r.to_numpy()
        want = np.array([[int(f(c, a) if const_left else f(a, c)) for c in consts]
                         for i, (_, f) in enumerate(OPS)])
        assert (got == want).all(), (a, np.argwhere(got != want))


def test_default_ip_i64_comparisons_with_literals():
    ti.init(arch=ti.vulkan, default_ip=ti.i64)
    x = ti.field(ti.i32, shape=16)
    n = ti.field(ti.i64, shape=4)

    @ti.kernel
    def count(a: ti.i32):
        for i in x:
            if i > 5:
                n[0] += 1
            if i < 3:
                n[1] += 1
        j = a
        k = 0
        while j < 0 and k < 50:
            j += 1
            k += 1
        n[2] = k
        n[3] = 1 if a > 0 else 0

    count(-7)
    assert n.to_numpy().tolist() == [10, 3, 7, 0]
    n.fill(0)
    count(4)
    assert n.to_numpy().tolist() == [10, 3, 0, 1]


def test_widened_value_through_identity_ops():
    ti.init(arch=ti.vulkan)
    r = ti.field(ti.i32, shape=10)

    @ti.kernel
    def k(a: ti.i32):
        b = ti.cast(a, ti.i64)
        r[0] = b + 0 > 0
        r[1] = b + 1 > 3
        r[2] = b - 0 > 0
        r[3] = b * 1 > 0
        r[4] = (b | 0) > 0
        r[5] = ti.max(b, -100) > 0
        r[6] = (b << 0) > 0
        r[7] = b // 1 > 0
        r[8] = -b < 0
        r[9] = ti.abs(b) > 5

    for a in (-7, 3, 0, 2**31 - 1, -2**31):
        k(a)
        want = [a + 0 > 0, a + 1 > 3, a > 0, a > 0, a > 0, max(a, -100) > 0, a > 0, a > 0,
                -a < 0, abs(a) > 5]
        assert r.to_numpy().tolist() == [int(w) for w in want], a
