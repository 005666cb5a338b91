"""Texel reads (device-free checks: tests/compiler/test_texel_views.py) (codegen/memory.py plan_texels): on CPU drivers, fields a task reads and never
writes are read through storage texel buffer views (OpImageRead) instead of storage-buffer
loads. Values against numpy for every format (f32 scalar / vec2 / vec4, i32, u32, a matrix
read per component, a 0-D field), gathered and direct indices; fields stored to after their
loads, and those that must keep storage-buffer loads."""
import re

import numpy as np
import pytest

import vkdiff as ti
from vkdiff.lang import state

N = 1000


def make_fields():
    return dict(a=ti.field(ti.f32, N), v=ti.Vector.field(2, ti.f32, N),
             w=ti.Vector.field(4, ti.f32, N), k=ti.field(ti.i32, N), u=ti.field(ti.u32, N),
             m=ti.Matrix.field(3, 3, ti.f32, N), s=ti.field(ti.f32, ()),
             rw=ti.field(ti.f32, N), out=ti.field(ti.f32, N))


def _fields():
    rng = np.random.default_rng(7)
    f = make_fields()
    data = dict(a=rng.uniform(-2, 2, N), v=rng.uniform(-2, 2, (N, 2)),
                w=rng.uniform(-2, 2, (N, 4)), k=rng.permutation(N), u=rng.integers(0, 1 << 31, N),
                m=rng.uniform(-2, 2, (N, 3, 3)), s=np.float32(0.25), rw=rng.uniform(-2, 2, N))
    for name, x in data.items():
        f[name].from_numpy(np.asarray(x, dtype=f[name].dtype.np if hasattr(f[name].dtype, 'np')
                                      else None).astype(f[name].to_numpy().dtype))
    return f, {name: f[name].to_numpy() for name in data}


def make_kernel(f):
    a, v, w, k, u, m, s, rw, out = (f[x] for x in 'a v w k u m s rw out'.split())

    @ti.kernel
    def gather():
        for i in range(N):
            j = k[i]
            out[i] = a[j] + v[j][0] * 2 + v[j][1] * 3 + w[i][0] - w[j][3] * 5 + m[j][1, 2] + \
                m[i][2, 0] + s[None] + ti.cast(u[j] % 1000, ti.f32) + rw[i]
            rw[i] = a[i] * 2  # stored after its load: a view too
    return gather


def _expected(d):
    K = d['k']
    return (d['a'][K] + d['v'][K, 0] * 2 + d['v'][K, 1] * 3 + d['w'][:, 0] - d['w'][K, 3] * 5 +
            d['m'][K, 1, 2] + d['m'][:, 2, 0] + d['s'] + (d['u'][K] % 1000).astype(np.float32) +
            d['rw'])


def test_values_against_numpy():
    f, d = _fields()
    gather = make_kernel(f)
    gather()
    np.testing.assert_allclose(f['out'].to_numpy(), _expected(d), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(f['rw'].to_numpy(), d['a'] * 2, rtol=1e-6)
    if state.runtime().features.get('texel_reads'):
        # lavapipe: every read-only field read through a view (vec2 and vec4 as one texel)
        asm = gather.ir(after='codegen')
        assert len(re.findall(r'OpTypeImage %\w+ Buffer 0 0 0 2 (\w+)', asm)) >= 4
        assert asm.count('OpImageRead') == 11


@pytest.fixture(autouse=True)
def _reset():
    yield
    ti.reset()


def test_fields_read_before_written():
    """x[t, i] = f(x[t - 1, i]): the field is stored to after it is read, so its loads may use a
    view; a serial loop reading what its previous iteration stored (a prefix sum), a load after
    a store to another element, and an atomic keep the storage buffer (the values show it)."""
    T_, n = 6, 300
    x = ti.field(ti.f32, (T_, n))
    p = ti.field(ti.f32, n)
    q = ti.field(ti.f32, n)
    c = ti.field(ti.i32, ())

    @ti.kernel
    def step(t: ti.i32):
        for i in range(n):
            x[t, i] = x[t - 1, i] * 0.5 + ti.cast(i, ti.f32)

    @ti.kernel
    def prefix():
        ti.loop_config(serialize=True)
        for i in range(1, n):
            p[i] = p[i - 1] + p[i]

    @ti.kernel
    def mixed():
        for i in range(n):
            q[i] = 1.0
            q[i] = q[i] + q[(i + 1) % n] * 0 + ti.cast(c[None], ti.f32)
            ti.atomic_add(c[None], 1)

    x0 = np.random.default_rng(3).uniform(-1, 1, n).astype(np.float32)
    x.from_numpy(np.concatenate([x0[None], np.zeros((T_ - 1, n), np.float32)]))
    for t in range(1, T_):
        step(t)
    want = [x0]
    for t in range(1, T_):
        want.append(want[-1] * np.float32(0.5) + np.arange(n, dtype=np.float32))
    np.testing.assert_allclose(x.to_numpy(), np.array(want), rtol=1e-6)
    p.from_numpy(np.arange(n, dtype=np.float32))
    prefix()
    np.testing.assert_array_equal(p.to_numpy(), np.cumsum(np.arange(n, dtype=np.float32)))
    mixed()
    assert c[None] == n
    if state.runtime().features.get('texel_reads'):
        assert 'OpImageRead' in step.ir(1, after='codegen')
        assert 'OpImageRead' not in prefix.ir(after='codegen')
        assert 'OpImageRead' not in mixed.ir(after='codegen')
