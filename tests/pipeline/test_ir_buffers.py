"""ir.Buffer: the compiler names global memory by Buffers, so its passes run on IR built by hand
with no API layer (vkdiff.lang, vkdiff.frontend) loaded and no Vulkan device; temporaries the
passes make are Buffers with role 'temp'. The launcher binds Buffers to storage (lang.binding)."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import vkdiff as ti
from vkdiff import ir

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# Runs in a fresh interpreter: `vkdiff` is made a bare package (its __init__, which loads the API
# layer, does not run) and any import of the API layer fails.
_CORE_ONLY = textwrap.dedent('''
    import importlib.abc, sys, types
    ROOT = sys.argv[1]
    pkg = types.ModuleType('vkdiff')
    pkg.__path__ = [ROOT + '/vkdiff']
    sys.modules['vkdiff'] = pkg
    API = ('vkdiff.lang', 'vkdiff.frontend', 'vkdiff.ad', 'vkdiff.gui', 'vkdiff.math')

    class Refuse(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name.startswith(API):
                raise ImportError(f'the compiler core imported the API layer: {name}')
    sys.meta_path.insert(0, Refuse())

    from vkdiff import ir, types as T
    from vkdiff.passes.tasks import split_tasks
    from vkdiff.passes.reduction import optimize_reductions
    from vkdiff.passes.host_eval import host_eval
    from vkdiff.autodiff.access_rules import check_rules
    from vkdiff.autodiff.activity import analyse

    x = ir.Buffer('x', T.f32, (16,), role='field')
    x.derive('grad')
    y = ir.Buffer('y', T.f32, (), role='field')
    n = ir.Buffer('n', T.i32, (), role='field')
    assert x.grad.role == 'grad' and x.grad.primal is x and x.grad.name == 'x.grad'

    # s = 0.0; for i in range(n[None]): s += x[i]; y[None] = s
    body = ir.Block()
    a = body.append(ir.Stmt('alloca', T.f32))
    body.append(ir.Stmt('store', None, [a, body.append(ir.const(0.0, T.f32))]))
    trip = body.append(ir.Stmt('gload', T.i32, [], {'buf': n, 'comp': 0}))
    loop_body = ir.Block()
    loop = body.append(ir.Stmt('parfor', T.i32, [trip], blocks=[loop_body]))
    v = loop_body.append(ir.Stmt('gload', T.f32, [loop], {'buf': x, 'comp': 0}))
    old = loop_body.append(ir.Stmt('load', T.f32, [a]))
    new = loop_body.append(ir.Stmt('add', T.f32, [old, v]))
    loop_body.append(ir.Stmt('store', None, [a, new], {'aug': 'add'}))
    body.append(ir.Stmt('gstore', None, [body.append(ir.Stmt('load', T.f32, [a])), ],
                        {'buf': y, 'comp': 0}))

    # the trip count on the host, through the launcher's load callback
    mem = {n: [10]}
    assert host_eval(trip, (), lambda buf, i: mem[buf][i]) == 10
    assert host_eval(trip, ()) is None

    tasks = split_tasks(body, 'k')
    assert [t.kind for t in tasks] == ['serial', 'parallel', 'serial'], [t.kind for t in tasks]
    temps = {b for t in tasks for b in t.buffers() if b.role == 'temp'}
    assert len(temps) == 1, temps
    (s,) = temps
    assert s.name == 'k.local0' and s.shape == () and s.dtype is T.f32
    par = tasks[1]
    assert set(par.buffers()) == {n, x, s}, par.buffers()
    assert 'atomic' in par.ir() and 'buf=k.local0' in par.ir()
    # x has a gradient: its load is active once the temporary carries one too
    assert analyse(par.body, 'grad') == set()
    s.derive('grad')
    assert v in analyse(par.body, 'grad')
    check_rules(tasks, 'k')

    parts = optimize_reductions(par, {}, 8, True, None)
    partials = [b for t in parts for b in t.buffers() if b.name.startswith('k_t1.partials')]
    assert partials and all(b.role == 'temp' and b.shape == (8,) for b in partials), \\
        [t.buffers() for t in parts]
    loaded = sorted(m for m in sys.modules if m.startswith('vkdiff'))
    print('OK', ' '.join(loaded))
''')


def test_passes_make_temp_buffers_without_the_api_layer():
    env = dict(os.environ, VK_ICD_FILENAMES='/nonexistent', PYTHONPATH=ROOT)
    r = subprocess.run([sys.executable, '-c', _CORE_ONLY, ROOT], capture_output=True, text=True,
                       env=env, timeout=120)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.startswith('OK'), r.stdout
    assert 'vkdiff.runtime' not in r.stdout  # no device code either


def test_buffer_roles_and_links():
    b = ir.Buffer('v', ti.f32, (3, 4), (2,), role='field')
    assert b.ncomp == 2 and b.shape == (3, 4) and b.grad is None and b.primal is None
    g = b.derive('dual')
    assert b.dual is g and g.primal is b and g.role == 'dual' and g.elem_shape == (2,)
    assert {b: 1}[b] == 1 and b != ir.Buffer('v', ti.f32, (3, 4), (2,), role='field')
    with pytest.raises(ValueError, match='role'):
        ir.Buffer('w', ti.f32, (), role='bogus')


def test_field_holds_its_buffer_with_gradient_links():
    x = ti.field(ti.f32, shape=5, needs_grad=True, needs_dual=True)
    b = x.buffer
    assert b.role == 'field' and b.shape == (5,) and b.dtype is ti.f32 and b.name == x.name
    assert b.grad is x.grad.buffer and b.grad.role == 'grad' and b.grad.primal is b
    assert b.dual is x.dual.buffer and b.dual.role == 'dual'
    # placed later: the Buffer's shape follows; a lazy gradient is linked too
    y = ti.field(ti.f32)
    ti.root.dense(ti.i, 7).place(y)
    assert y.buffer.shape == (7,) and y.buffer.grad is None
    ti.root.lazy_grad()
    assert y.buffer.grad is y.grad.buffer and y.grad.buffer.shape == (7,)


def test_kernel_ir_names_buffers_and_temporaries_bind_to_storage():
    x = ti.field(ti.f32, shape=8, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def k():
        s = 0.0
        for i in x:
            s += x[i] * x[i]
        loss[None] = s

    x.from_numpy(np.arange(8, dtype=np.float32))
    with ti.Tape(loss):
        k()
    assert loss[None] == pytest.approx(float((np.arange(8) ** 2).sum()))
    np.testing.assert_allclose(x.grad.to_numpy(), 2 * np.arange(8))
    text = k.ir()
    assert 'buf=x' in text and 'buf=loss' in text and 'buf=k.local0' in text
    assert 'field=' not in text


def test_a_field_of_a_previous_init_is_a_clear_error_and_temporaries_start_fresh():
    old = ti.field(ti.f32, shape=4)

    @ti.kernel
    def total(src: ti.template(), out: ti.template()):
        s = 0.0
        for i in src:
            s += src[i]
        out[None] = s  # s is a temporary Buffer shared by the loop and the serial part

    out = ti.field(ti.f32, shape=())
    old.from_numpy(np.ones(4, np.float32))
    total(old, out)
    assert out[None] == 4.0
    ti.reset()
    ti.init()
    new, out2 = ti.field(ti.f32, shape=4), ti.field(ti.f32, shape=())
    new.from_numpy(np.full(4, 2, np.float32))
    total(new, out2)  # recompiled: new temporaries, fresh storage
    assert out2[None] == 8.0
    with pytest.raises(ti.VkdiffError, match='previous ti.init'):
        total(old, out2)


def test_tape_validation_marks_reads_of_a_column_matrix_field():
    # an n x 1 matrix field reads back as (..., n): the read mask has the same layout
    m = ti.Matrix.field(2, 1, ti.f32, shape=3, needs_grad=True)
    loss = ti.field(ti.f32, shape=(), needs_grad=True)

    @ti.kernel
    def f():
        for i in m:
            loss[None] += m[i][1, 0] * 2.0

    @ti.kernel
    def overwrite():
        m[1][1, 0] = 5.0

    with ti.Tape(loss, validation=True):
        f()
    np.testing.assert_allclose(m.grad.to_numpy()[:, 1], [2, 2, 2])
    with pytest.raises(ti.AutodiffError, match=r'1 element\(s\) of m'):
        with ti.Tape(loss, validation=True):
            f()
            overwrite()
