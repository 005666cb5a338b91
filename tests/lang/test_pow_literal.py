"""`**` / ti.pow type their Python-literal operands as Taichi 1.7.4 does (a default_ip /
default_fp constant), and the result type follows Taichi's pow rule: an integral exponent keeps
the base's type (`u8 ** i32` is u8, `f32 ** 3` stays f32 under default_fp=f64), a float exponent
promotes both sides (`f16 ** 2.5` is f32, `f32 ** 2.5` is f64 under default_fp=f64).

Expected values: printed by Taichi 1.7.4 (/work/venvs/taichi/bin/python, ti.init(arch=ti.cpu,
default_fp=...)) running the same kernel with k(1.1, 1.1, 3, 200) (/tmp/litfix/pw2.py,
/tmp/langrev/pw.py). Where the device computes pow / division (lavapipe is a few ulp off) the
comparison has a tolerance of 1e-6 relative -- still far tighter than the f16 / f32 differences
these tests catch (1e-4, 5e-8 on 1.27)."""
import numpy as np
import pytest

import vkdiff as ti

# (index, Taichi default_fp=f32, Taichi default_fp=f64, computed by pow on the device)
F_EXPECTED = [
    ('b ** 2.5', 1.2690588235855103, 1.2690587750511513, True),
    ('h ** 2.5', 1.267932415008545, 1.267932356204871, True),
    ('a ** 2.0', 9.0, 9.0, False),
    ('ti.pow(b, 0.3)', 1.029005765914917, 1.0290057661120247, True),
    ('b ** 3', 1.3310000896453857, 1.3310000896453857, False),
    ('h ** 1.5 * 1000', 1153.0751953125, 1153.0752511134885, True),
    ('2.5 ** b', 2.7398955821990967, 2.7398956258190035, True),
    ('1.1 ** h', 1.1104929447174072, 1.1104928960358724, True),
    ('b ** 2.0', 1.2100000381469727, 1.210000052452088, False),
    ('h ** 2.0', 1.2091407775878906, 1.2091407775878906, False),
    ('h ** 2', 1.208984375, 1.208984375, False),
    ('b ** -2', 0.8264462351799011, 0.8264462351799011, True),
    ('b ** a', 1.3310000896453857, 1.3310000896453857, False),
    ('1.1 ** a', 1.3310000896453857, 1.3310000000000004, False),
]
# u ** a with u: u8 = 200, a = 3 is u8 in Taichi: 8000000 wraps to 0
I_EXPECTED = [('a ** 2', 9), ('u ** 2', 64), ('3 ** a', 27), ('u ** a', 0)]


def _kernel(F, I):
    src = ('def k(b: ti.f32, h: ti.f16, a: ti.i32, u: ti.u8):\n'
           + ''.join(f'    F[{i}] = {e}\n' for i, (e, *_rest) in enumerate(F_EXPECTED))
           + ''.join(f'    I[{i}] = {e}\n' for i, (e, _) in enumerate(I_EXPECTED)))
    ns = {'ti': ti, 'F': F, 'I': I}
    import linecache
    fname = f'<pow_literal_{id(F)}>'
    linecache.cache[fname] = (len(src), None, src.splitlines(True), fname)
    exec(compile(src, fname, 'exec'), ns)
    return ti.kernel(ns['k'])


@pytest.mark.parametrize('fp', ['f32', 'f64'])
def test_pow_types_literals_like_taichi(fp):
    ti.init(default_fp=getattr(ti, fp))
    F = ti.field(ti.f64, shape=len(F_EXPECTED))
    I = ti.field(ti.i64, shape=len(I_EXPECTED))
    _kernel(F, I)(1.1, 1.1, 3, 200)
    got = F.to_numpy()
    for (expr, want32, want64, device_pow), g in zip(F_EXPECTED, got):
        want = want32 if fp == 'f32' else want64
        if device_pow:
            assert g == pytest.approx(want, rel=1e-6, abs=0), expr
        else:
            assert g == want, expr
    assert I.to_numpy().tolist() == [v for _, v in I_EXPECTED]


def test_python_float_into_f64_is_a_default_fp_constant():
    """Under default_fp=f32 a Python float in a kernel is an f32 constant even where it goes
    straight into an f64 (Taichi 1.7.4 CPU printed these, /tmp/litfix/f64l.py); ti.f64(1.1) is
    exact there, and so is an f64 kernel argument passed from Python."""
    F = ti.field(ti.f64, shape=8)

    @ti.func
    def fd(a: ti.f64):
        return a

    @ti.kernel
    def k():
        F[0] = 1.1
        F[1] = fd(1.1)
        F[2] = ti.cast(0.1, ti.f64)
        F[3] = 1 / 3
        F[4] = 2 ** 0.5
        F[5] = ti.sin(2)
        F[6] = ti.f64(1.1)
        v = ti.Vector([0.1, 0.2], ti.f64)
        F[7] = v[0]

    @ti.kernel
    def karg(a: ti.f64) -> ti.f64:
        return a

    k()
    assert F.to_numpy().tolist() == [1.100000023841858, 1.100000023841858, 0.10000000149011612,
                                     0.3333333432674408, 1.4142135381698608, 0.9092974066734314,
                                     1.1, 0.10000000149011612]
    assert karg(1.1) == 1.1
