"""Launches inside a Tape that write no differentiable data (integer or gradient-less fields:
sorting particle keys, counting with a scan) have nothing to do in the backward pass. Before,
the Tape's access check treated their reads as an adjoint's and ti.algorithms.parallel_sort or
PrefixSumExecutor.run on integer fields inside a Tape raised AccessRuleError about the
algorithms' own kernels (scratch 'field6'), though Taichi runs them. A differentiable launch
that read the keys before they were overwritten is still caught."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.errors import AccessRuleError


def _setup(n):
    keys = ti.field(ti.i32, shape=n)
    x = ti.field(ti.f32, shape=n, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)
    perm = np.random.default_rng(0).permutation(n).astype(np.int32)
    keys.from_numpy(perm)
    x.from_numpy(np.linspace(-1, 1, n).astype(np.float32))

    @ti.kernel
    def gather_loss():
        for i in range(n):
            loss[None] += x[keys[i]] ** 2 * (i + 1)

    return keys, x, loss, perm, gather_loss


def test_sorting_integer_keys_inside_a_tape():
    n = 50
    keys, x, loss, perm, gather_loss = _setup(n)
    with ti.ad.Tape(loss):
        ti.algorithms.parallel_sort(keys)
        gather_loss()
    xs = np.linspace(-1, 1, n).astype(np.float32)
    # sorted keys are 0..n-1: x[i] is weighted by i + 1
    np.testing.assert_allclose(x.grad.to_numpy(), 2 * xs * (np.arange(n) + 1), rtol=1e-6)
    np.testing.assert_array_equal(keys.to_numpy(), np.arange(n))


def test_scanning_integer_counts_inside_a_tape():
    n = 70
    cnt = ti.field(ti.i32, shape=n)
    x = ti.field(ti.f32, shape=n, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)
    cnt.from_numpy(np.ones(n, np.int32))
    x.from_numpy(np.arange(n, dtype=np.float32))

    @ti.kernel
    def lk():
        for i in range(n):
            loss[None] += x[cnt[i] - 1] * i

    with ti.ad.Tape(loss):
        ti.algorithms.PrefixSumExecutor(n).run(cnt)
        lk()
    np.testing.assert_array_equal(x.grad.to_numpy(), np.arange(n, dtype=np.float32))


def test_overwriting_keys_a_differentiable_launch_read_is_still_refused():
    keys, x, loss, perm, gather_loss = _setup(32)
    with pytest.raises(AccessRuleError):
        with ti.ad.Tape(loss):
            gather_loss()
            ti.algorithms.parallel_sort(keys)


def test_checkpointed_step_that_sorts_keys_in_place():
    """A step that computes integer keys, sorts them in one field reused by every step and
    gathers through them: ti.ad.checkpointed gives the gradient of a full Tape whose keys have
    a field per step (before, the recomputation built the sort's adjoint and raised
    AccessRuleError on its scratch)."""
    n, steps = 32, 6
    shared = ti.field(ti.i32, shape=n)
    per_step = [ti.field(ti.i32, shape=n) for _ in range(steps)]
    xs = [ti.field(ti.f32, shape=n, needs_grad=True) for _ in range(steps + 1)]
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def make_keys(x: ti.template(), keys: ti.template(), t: ti.i32):
        for i in range(n):
            keys[i] = ti.cast(x[i] * 1000 + t * 37 + i * 11, ti.i32) % 97

    @ti.kernel
    def gather(a: ti.template(), b: ti.template(), keys: ti.template()):
        for i in range(n):
            b[i] = a[keys[i] % n] * 0.5 + a[i] * 0.7

    @ti.kernel
    def lk(x: ti.template()):
        for i in range(n):
            loss[None] += x[i] ** 2

    def run(checkpointed):
        xs[0].from_numpy(np.linspace(0, 1, n).astype(np.float32))

        def step(t):
            keys = shared if checkpointed else per_step[t]
            make_keys(xs[t], keys, t)
            ti.algorithms.parallel_sort(keys)
            gather(xs[t], xs[t + 1], keys)

        with ti.ad.Tape(loss):
            if checkpointed:
                ti.ad.checkpointed(step, steps=steps, every=2)
            else:
                for t in range(steps):
                    step(t)
            lk(xs[steps])
        return loss[None], xs[0].grad.to_numpy()

    want_loss, want = run(False)
    got_loss, got = run(True)
    assert got_loss == want_loss
    assert np.abs(want).max() > 0
    np.testing.assert_array_equal(got, want)


def test_sorting_or_scanning_fields_with_gradients_inside_a_tape_is_refused():
    """The algorithms' scratch fields have no gradients, so a sort or scan of a field that has
    one would cut its gradient (zero after the Tape, silently): refused with a clear error, the
    data untouched."""
    n = 20
    keys = ti.field(ti.i32, shape=n)
    vals = ti.field(ti.f32, shape=n, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)
    keys.from_numpy(np.arange(n, dtype=np.int32)[::-1].copy())
    vals.from_numpy(np.arange(n, dtype=np.float32))

    @ti.kernel
    def lk():
        for i in range(n):
            loss[None] += vals[i] * i

    with pytest.raises(ti.errors.AutodiffError, match='parallel_sort'):
        with ti.ad.Tape(loss):
            ti.algorithms.parallel_sort(keys, vals)
            lk()
    with pytest.raises(ti.errors.AutodiffError, match='PrefixSumExecutor'):
        with ti.ad.Tape(loss):
            ti.algorithms.PrefixSumExecutor(n).run(vals)
            lk()
    np.testing.assert_array_equal(vals.to_numpy(), np.arange(n, dtype=np.float32))
    np.testing.assert_array_equal(keys.to_numpy(), np.arange(n)[::-1])
    ti.algorithms.parallel_sort(keys, vals)  # outside a Tape: sorted as usual
    np.testing.assert_array_equal(vals.to_numpy(), np.arange(n, dtype=np.float32)[::-1])
