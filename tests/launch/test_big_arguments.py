"""Kernel arguments beyond the 128 bytes of push constants (Taichi passes a 1024-entry vector
argument): the rest go through a buffer written at each launch (codegen.memory.PushLayout)."""
import numpy as np

import vkdiff as ti
from vkdiff.codegen.memory import PushLayout


def test_push_layout_spills_in_argument_order():
    p = PushLayout([ti.i32] * 29 + [ti.f64, ti.i32, ti.i32])
    assert [w[0] for w in p.where[:29]] == ['push'] * 29  # 8 + 29 * 4 = 124 bytes
    assert p.where[29:] == [('spill', 0), ('spill', 2), ('spill', 3)]  # after one, all spill
    assert p.size <= 128 and p.spill.shape == (4,)
    pushed, words = p.split(list(range(29)) + [1.5, -7, 9])
    assert pushed == list(range(29))
    assert words[0:2].view(np.float64)[0] == 1.5 and words[2].view(np.int32) == -7
    assert words[3] == 9
    assert PushLayout([ti.f32] * 4).spill is None


def test_vector_argument_of_1024_entries_and_later_arguments():
    vec = ti.types.vector(1024, ti.i32)
    arr = ti.ndarray(ti.f32, 5)
    arr.from_numpy(np.arange(5, dtype=np.float32))

    @ti.kernel
    def f(a: vec, x: ti.f64, k: ti.i64, b: ti.types.ndarray()) -> ti.f64:
        s = 0
        for i in range(1024):
            s += a[i]
        acc = 0.0
        for j in range(b.shape[0]):
            acc += b[j]
        return s * x + k + acc

    v = np.arange(1024)
    assert f(vec(v.tolist()), 0.5, 2 ** 40, arr) == v.sum() * 0.5 + 2 ** 40 + 10
    assert f(vec((-v).tolist()), 2.0, -3, arr) == -v.sum() * 2 - 3 + 10  # new values each launch


def test_spilled_float_arguments_in_an_adjoint():
    vec = ti.types.vector(40, ti.f32)
    x = ti.field(ti.f32, shape=40, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)
    x.from_numpy(np.ones(40, np.float32))

    @ti.kernel
    def f(w: vec):
        for i in range(40):
            loss[None] += w[i] * x[i] ** 2

    w = np.linspace(-1, 1, 40).astype(np.float32)
    with ti.ad.Tape(loss):
        f(vec(w.tolist()))
    np.testing.assert_allclose(loss[None], w.sum(), atol=1e-5)
    np.testing.assert_allclose(x.grad.to_numpy(), 2 * w, rtol=1e-6)
