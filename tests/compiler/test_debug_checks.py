"""The debug_checks pass without a device (ti.init(debug=True), vkdiff/passes/debug_checks.py):
the pipeline's kernels, their adjoints, tangents and forward-over-reverse compile to valid SPIR-V
with the checks in; the pass adds nothing without debug; the status words a failing check writes
decode into the error a user sees (values of every width, located at the user's line)."""
import struct

import numpy as np
import pytest

import vkdiff as ti
from vkdiff import compiler, ir
from vkdiff.lang import state
from vkdiff.passes import debug_checks

from spirv_check import check_tasklist
from test_pipeline import DIFFERENTIABLE, _kernels


def _debug():
    state.init_offline(compiler.lavapipe_like(), debug=True)


@pytest.mark.parametrize('name', ['saxpy', 'reduce_loss', 'branches', 'carried', 'float64',
                                  'serial_and_parallel', 'vectors', 'runtime_loop'])
def test_checked_kernels_are_valid_spirv(name):
    _debug()
    k, args = _kernels()[name]
    inst, _ = k.instance(args)
    lists = [inst]
    if name in DIFFERENTIABLE:
        lists += [inst.adjoint(), inst.tangent(), inst.adjoint().tangent()]
    for tl in lists:
        check_tasklist(tl)
    if name in ('saxpy', 'branches', 'carried'):  # indexed accesses: checked, adjoint too
        assert 'debug_status' in k.ir(*args, after='debug_checks')
        assert 'debug_status' in k.grad.ir(*args, after='codegen') or \
            'debug_status' in inst.adjoint().ir('debug_checks')


def test_nothing_without_debug():
    for name, (k, args) in _kernels().items():
        assert k.ir(*args, after='debug_checks') == k.ir(*args), name
        assert 'debug_status' not in k.ir(*args, after='codegen'), name


def _assert_kernel():
    a = ti.field(ti.f64, 8)
    q = ti.field(ti.i64, 8)

    @ti.kernel
    def k(arr: ti.types.ndarray(dtype=ti.f32, ndim=2), n: ti.i64, d: ti.u8):
        for i in a:
            assert a[i] < 1e300, "a[%d]=%s n=%d d=%d" % (i, a[i], n, d)
            q[i] = n // (i - 3) + n % q[i]
            arr[i, 1] = a[i] * 2.0
    return k


def test_asserts_divisions_and_ndarrays_are_valid_spirv():
    _debug()
    k = _assert_kernel()
    arr = np.zeros((8, 2), np.float32)
    inst, _ = k.instance((arr, 3, 1))
    check_tasklist(inst)
    text = k.ir(arr, 3, 1, after='debug_checks')
    # one report each: a[i] (condition, message, arr line), the assert, //, q[i] (load, store),
    # %, arr[i, 1] (both indices in one check)
    assert text.count("fn='bor'") == 9
    assert 'check(' in k.ir(arr, 3, 1)  # the frontend's statement, lowered by the pass


def test_assert_is_not_built_without_debug():
    k = _assert_kernel()
    assert 'check(' not in k.ir(np.zeros((8, 2), np.float32), 3, 1)


def _words(code, *pairs):
    w = [1, code] + [x for p in pairs for x in p]
    return w + [0] * (debug_checks.WORDS - len(w))


def test_status_words_decode_into_the_users_error():
    _debug()
    k = _assert_kernel()
    inst, _ = k.instance((np.zeros((8, 2), np.float32), 3, 1))
    # the status store of the assert's report: its code, and the Site it holds
    first = next(s.args[1].attrs['value'] for ct in inst.ctasks for s in ir.walk(ct.task.body)
                 if 'site' in s.attrs and s.attrs['site'].exc is ti.TaichiAssertionError)
    assert debug_checks.SITES[first].exc is ti.TaichiAssertionError
    bits = struct.unpack('<II', struct.pack('<d', 0.1))
    n = -12345678901 & 0xFFFFFFFFFFFFFFFF
    err = debug_checks.error(_words(first, (5, 0), bits, (n & 0xFFFFFFFF, n >> 32), (255, 0)))
    assert isinstance(err, ti.TaichiAssertionError)
    assert 'a[5]=0.1 n=-12345678901 d=255' in str(err), str(err)
    assert '(kernel=k)' in str(err) and 'test_debug_checks.py", line' in str(err)
    assert debug_checks.error([0] * debug_checks.WORDS) is None
    gone = debug_checks.error(_words(0x7FFFFFFE))  # a code no live kernel has: still an error
    assert isinstance(gone, ti.TaichiAssertionError) and 'no longer exists' in str(gone)
