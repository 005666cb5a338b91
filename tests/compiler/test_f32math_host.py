"""vkdiff's own f32 math (ti.init(fast_math=False), passes/f32_*.py) without a device: the
lowerings evaluated with numpy (passes/f32ops.HostF32: IEEE f32 add/sub/mul as Vulkan's) on a
dense sample of every op with the edges, each within 2 ulp of numpy's f64 result rounded to f32,
special values as numpy's; and the compiled SPIR-V: NoContraction on every float operation under
fast_math=False only, valid, and its IR printable after `lower`."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff import compiler
from vkdiff.lang import state
from vkdiff.passes import f32_atrig, f32_divsqrt, f32_explog, f32_pow, f32_trig
from vkdiff.passes.f32ops import HostF32
from vkdiff.precision import ulp_error

from spirv_check import check_tasklist

F = np.float32
RNG = np.random.default_rng(7)
EDGES = np.array([0.0, -0.0, 1e-45, -1e-45, 1e-40, 1.1754942e-38, 1.1754944e-38, 1e-30, 1.0,
                  -1.0, 0.5, 2.0, np.inf, -np.inf, np.nan, 3.4028235e38, -3.4028235e38],
                 dtype=F)


def _wide(n):
    """Every magnitude: random bits of finite floats, both signs."""
    bits = RNG.integers(0, 0x7F800000, n, dtype=np.int64).astype(np.uint32)
    x = bits.view(F).copy()
    x[::2] *= -1
    return x


def _pio2_multiples():
    k = np.arange(-64, 65)
    near = (k * (np.pi / 2)).astype(F)
    return np.concatenate([near, np.nextafter(near, F(np.inf)), np.nextafter(near, F(-np.inf)),
                           F([1e30, -1e30, 1e22, 6.5e4, 1e5, 1e10, 2.0 ** 100])])


def _sample(name):
    u = lambda lo, hi, n=30000: RNG.uniform(lo, hi, n).astype(F)  # noqa: E731
    if name in ('sin', 'cos', 'tan'):
        return np.concatenate([u(-10, 10), u(-1e5, 1e5), _wide(30000), _pio2_multiples(), EDGES])
    if name in ('exp', 'expm1', 'exp2', 'tanh'):
        return np.concatenate([u(-160, 130), u(-1, 1), u(-1e-4, 1e-4),
                               F([88.72283, 88.72284, -87.33655, -103.27893, -103.97208,
                                  -104.0, 127.99999, 128.0, -149.0, -150.0]), EDGES])
    if name in ('asin', 'acos'):
        return np.concatenate([u(-1, 1), u(0.99, 1), u(-1e-3, 1e-3), F([0.5, -0.5, 1.0000001]),
                               EDGES])
    return np.concatenate([_wide(30000), u(0.5, 2), u(0.999, 1.001), EDGES])   # log, sqrt, atan...


UNARY = {'sin': (f32_trig.sin, np.sin), 'cos': (f32_trig.cos, np.cos),
         'tan': (f32_trig.tan, np.tan), 'asin': (f32_atrig.asin, np.arcsin),
         'acos': (f32_atrig.acos, np.arccos), 'atan': (f32_atrig.atan, np.arctan),
         'exp': (f32_explog.exp, np.exp), 'exp2': (f32_explog.exp2, np.exp2),
         'expm1': (f32_explog.expm1, np.expm1), 'tanh': (f32_explog.tanh, np.tanh),
         'log': (f32_explog.log, np.log), 'log2': (f32_explog.log2, np.log2),
         'sqrt': (f32_divsqrt.sqrt, np.sqrt), 'rsqrt': (f32_divsqrt.rsqrt, lambda x: 1 / np.sqrt(x))}


def _check(got, ref, what):
    with np.errstate(all='ignore'):
        err = ulp_error(got, ref)
    i = int(np.argmax(err))
    assert err.max() <= 2.0, f'{what}: {err.max():.3g} ulp at input #{i}: {got[i]!r} vs {ref[i]!r}'
    zero = ref == 0
    assert (np.signbit(got[zero]) == np.signbit(ref[zero])).all(), f'{what}: sign of zero'
    return err.max()


@pytest.mark.parametrize('name', sorted(UNARY))
def test_unary_within_2_ulp(name):
    fn, ref = UNARY[name]
    x = _sample(name)
    with np.errstate(all='ignore'):
        got = fn(HostF32(), x)
        want = ref(x.astype(np.float64))
    assert got.dtype == F
    _check(got, want, name)


def _pairs(n=40000):
    sp = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, -2.0, 0.5, 3.0, -3.0,
                   1e-40, 1e30], F)
    a, b = np.meshgrid(sp, sp)
    return (np.concatenate([_wide(n), RNG.uniform(-10, 10, n).astype(F), a.ravel()]),
            np.concatenate([_wide(n), RNG.uniform(-10, 10, n).astype(F), b.ravel()]))


def test_div_correctly_rounded():
    a, b = _pairs()
    with np.errstate(all='ignore'):
        got = f32_divsqrt.div(HostF32(), a, b)
        want = a.astype(np.float64) / b.astype(np.float64)
    assert _check(got, want, 'div') <= 0.5


def test_atan2_and_pow_within_2_ulp():
    y, x = _pairs()
    with np.errstate(all='ignore'):
        _check(f32_atrig.atan2(HostF32(), y, x), np.arctan2(y.astype(np.float64), x), 'atan2')
        base = np.concatenate([np.abs(y[:40000]) % F(8), -np.abs(y[40000:])])
        ex = np.concatenate([RNG.uniform(-30, 30, 40000), np.round(x[40000:])]).astype(F)
        _check(f32_pow.pow(HostF32(), base, ex), np.power(base.astype(np.float64), ex), 'pow')


def _kernel():
    x = ti.field(ti.f32, 16)
    y = ti.field(ti.f32, 16)

    @ti.kernel
    def k():
        for i in x:
            y[i] = ti.sin(x[i]) * x[i] + x[i] / (1.0 + x[i] * x[i])
    return k


@pytest.mark.parametrize('fast', [True, False])
def test_no_contraction_only_without_fast_math(fast):
    state.init_offline(compiler.lavapipe_like(), fast_math=fast)
    k = _kernel()
    asm = k.ir(after='codegen')
    assert ('NoContraction' in asm) == (not fast)
    lowered = k.ir(after='lower')                 # printable; sin and div expanded when exact
    assert ('= sin(' in lowered) == fast       # (div stays: the exact division's first guess)
    assert ('= bitcast(' in lowered) == (not fast)
    inst, _ = k.instance(())
    assert check_tasklist(inst) >= 1


def test_fast_math_default_is_taichis():
    assert ti.lang.impl.current_cfg().fast_math is True
    state.init_offline(compiler.lavapipe_like(), fast_math=False)
    assert ti.lang.impl.current_cfg().fast_math is False
