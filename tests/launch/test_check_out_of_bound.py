"""The bound checks of debug mode on their own, and their pieces beyond field indices (issue 9
item 12 leftovers):

- `ti.init(check_out_of_bound=True)` without debug: Taichi's CompileConfig flag, which debug=True
  implies (CompileConfig::fit). Its checks are Taichi's CheckOutOfBound pass: field and ndarray
  indices, run-time vector/matrix component indices, and the exponent of `pow(int, int)`. vkdiff
  reports them at the end of the launch as in debug mode; `assert` and the integer `//`, `%` by
  zero check stay debug-only (Taichi ignores asserts without debug).
- `int ** int` with a run-time negative exponent (Taichi: "Negative exponent in pow(int, int) is
  not allowed."), checked with debug=True or check_out_of_bound=True; without them the result
  is Taichi's base ** |exponent|.
- The table of check sites (passes/debug_checks.SITES) lives as long as the compiled kernels
  that report into it, so compiling debug kernels over and over does not grow it."""
import functools
import gc

import numpy as np
import pytest

import vkdiff as ti

from kernel_sites import names_site

_names_site = functools.partial(names_site, path=__file__)


# ---------------------------------------------------------------- check_out_of_bound alone
def test_config_flag():
    """ti.lang.impl.current_cfg().check_out_of_bound, as Taichi's (test_runtime.py's init args):
    off by default, on when asked, and on whenever debug is (CompileConfig::fit)."""
    ti.init()
    assert ti.lang.impl.current_cfg().check_out_of_bound is False
    ti.init(check_out_of_bound=True)
    assert ti.lang.impl.current_cfg().check_out_of_bound is True
    assert ti.lang.impl.current_cfg().debug is False
    ti.init(debug=True)
    assert ti.lang.impl.current_cfg().check_out_of_bound is True
    ti.init()
    assert ti.lang.impl.current_cfg().check_out_of_bound is False


def test_field_and_ndarray_indices_are_checked_without_debug():
    ti.init(check_out_of_bound=True)
    x = ti.field(ti.i32, shape=(8, 16))
    out = ti.field(ti.i32, shape=())

    @ti.kernel
    def wr(i: ti.i32, j: ti.i32, v: ti.i32):
        x[i, j] = v  # MARK-cob-wr

    @ti.kernel
    def rd(arr: ti.types.ndarray(), i: ti.i32):
        out[None] = arr[i]  # MARK-cob-nd

    wr(7, 15, 3)
    with pytest.raises(ti.KernelIndexError) as e:
        wr(3, 16, 9)  # flat index 64 is in the buffer: only the check keeps it out of x[4, 0]
    msg = _names_site(e, 'wr', 'MARK-cob-wr')
    assert 'shape (8, 16)' in msg and 'index (3, 16)' in msg, msg
    want = np.zeros((8, 16), np.int32)
    want[7, 15] = 3
    np.testing.assert_array_equal(x.to_numpy(), want)
    a = np.array([5, 6, 7], np.int32)
    rd(a, 2)
    assert out[None] == 7
    with pytest.raises(IndexError) as e:
        rd(a, -1)
    msg = _names_site(e, 'rd', 'MARK-cob-nd')
    assert 'ndarray arr' in msg and 'index (-1,)' in msg, msg
    wr(0, 0, 1)  # the launch after an error works
    assert x[0, 0] == 1


def test_constant_and_component_indices_are_checked_without_debug():
    ti.init(check_out_of_bound=True)
    x = ti.field(ti.i32, shape=4)

    @ti.kernel
    def const():
        x[4] = 1  # MARK-cob-const

    @ti.kernel
    def comp(k: ti.i32) -> ti.i32:
        v = ti.Vector([10, 20, 30])
        return v[k]  # MARK-cob-comp

    with pytest.raises(ti.KernelIndexError) as e:  # at run time, as with debug (Taichi's tests)
        const()
    _names_site(e, 'const', 'MARK-cob-const')
    assert comp(2) == 30
    with pytest.raises(ti.KernelIndexError, match=r'index \(3,\) of a vector of 3') as e:
        comp(3)
    _names_site(e, 'comp', 'MARK-cob-comp')
    assert x.to_numpy().tolist() == [0, 0, 0, 0]


def test_python_scope_negative_indices_are_out_of_range():
    ti.init(check_out_of_bound=True)
    x = ti.field(ti.f32, shape=3)
    with pytest.raises(ti.FieldIndexError):
        x[-1] = 1.0
    with pytest.raises(AssertionError):
        x[3]
    x[2] = 1.0
    assert x.to_numpy().tolist() == [0, 0, 1]


def test_asserts_and_zero_divisors_stay_debug_only():
    """Taichi checks asserts only with debug=True; the `//` / `%` by zero report is vkdiff's
    debug mode. With check_out_of_bound alone both behave as without it."""
    ti.init(check_out_of_bound=True)
    q = ti.field(ti.i32, shape=2)

    @ti.kernel
    def k(a: ti.i32, b: ti.i32):
        assert a > 100, "not checked without debug"
        q[0] = a // b
        q[1] = a % b

    k(7, 0)
    assert q.to_numpy().tolist() == [0, 0]
    k(7, 2)
    assert q.to_numpy().tolist() == [3, 1]
    assert 'check(' not in k.ir(7, 2)


def test_without_either_flag_no_checks():
    ti.init()
    x = ti.field(ti.i32, shape=4)

    @ti.kernel
    def k(i: ti.i32, e: ti.i32) -> ti.i32:
        x[i] = 1
        return i ** e

    assert 'debug_status' not in k.ir(0, 1, after='codegen')
    assert k(2, -3) == 8  # Taichi's demoted pow: base ** |exponent|, unchecked


# ---------------------------------------------------------------- pow(int, int)
@pytest.mark.parametrize('flag', ['debug', 'check_out_of_bound'])
@pytest.mark.parametrize('dt', [ti.i32, ti.i64])
def test_negative_integer_exponent_is_reported(flag, dt):
    ti.init(**{flag: True})
    z = ti.field(dt, shape=())

    @ti.kernel
    def p(x: dt, y: dt):
        z[None] = x ** y  # MARK-pow

    for x in range(-3, 4):
        for y in range(0, 5):
            p(x, y)
            assert z[None] == x ** y
    z[None] = 11
    with pytest.raises(ti.TaichiRuntimeError) as e:
        p(10, -10)
    msg = _names_site(e, 'p', 'MARK-pow')
    assert 'Negative exponent in pow(int, int) is not allowed' in msg, msg
    assert '10 ** -10' in msg, msg
    assert isinstance(e.value, ti.TaichiAssertionError) and isinstance(e.value, ValueError)
    p(2, 3)
    assert z[None] == 8


def test_pow_checks_only_signed_integer_exponents_of_integer_bases():
    ti.init(debug=True)

    @ti.kernel
    def fpow(x: ti.f32, y: ti.i32) -> ti.f32:
        return x ** y

    @ti.kernel
    def upow(x: ti.u32, y: ti.u32) -> ti.u32:
        return x ** y

    @ti.kernel
    def vpow(k: ti.i32) -> ti.i32:
        v = ti.Vector([2, 3]) ** ti.Vector([k, 2])  # MARK-vpow
        return v[0] + v[1]

    assert fpow(2.0, -2) == 0.25
    assert upow(3, 4) == 81
    assert 'check(' not in upow.ir(3, 4)
    assert vpow(3) == 17
    with pytest.raises(ValueError, match=r'2 \*\* -1') as e:
        vpow(-1)
    _names_site(e, 'vpow', 'MARK-vpow')


def test_constant_negative_integer_exponent_is_a_compile_error():
    ti.init()

    @ti.kernel
    def k(x: ti.i32) -> ti.i32:
        return x ** -2

    with pytest.raises(ti.CompileError, match=r'Negative exponent in pow\(int, int\)'):
        k(3)


# ---------------------------------------------------------------- check sites
def test_check_sites_live_as_long_as_their_kernels():
    """Each compile in debug mode registers its check sites; they go with the compiled kernel
    (and with ti.init), so the table stays the same size however often kernels are rebuilt."""
    from vkdiff.passes import debug_checks

    ti.init(debug=True)
    x = ti.field(ti.f32, shape=8)

    def build_and_run():
        @ti.kernel
        def k(i: ti.i32, n: ti.i32):
            for j in range(n):
                x[i + j] += 1.0
            assert n < 100, "n too large"

        k(0, 8)
        with pytest.raises(ti.KernelIndexError):
            k(1, 8)

    sizes = []
    for _ in range(4):
        build_and_run()
        gc.collect()
        sizes.append(len(debug_checks.SITES))
    assert sizes == [sizes[0]] * 4, sizes
    for _ in range(3):
        ti.init(debug=True)
        x = ti.field(ti.f32, shape=8)
        build_and_run()
    ti.init()
    gc.collect()
    assert len(debug_checks.SITES) <= sizes[0], (len(debug_checks.SITES), sizes)
