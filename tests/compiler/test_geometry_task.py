"""passes/geometry.py, device-free: the geometry task of a loop whose trip count is read from a
field computes the workgroups the host-side geometry (launch.compiled.CompiledTask._groups) would
for the same bound, 0 for no iterations (a reduction: at least 2), and is refused where the trip
count depends on values only the task computes. Its IR is evaluated on the host here
(passes.host_eval, the field load answered by the test), its SPIR-V is compiled as well."""
import dataclasses

import pytest

import vkdiff as ti
from vkdiff import compiler, ir
from vkdiff import types as T
from vkdiff.lang import state
from vkdiff.passes import geometry
from vkdiff.passes.host_eval import host_eval
from vkdiff.passes.tasks import Task


def _geometry_of(kernel, task_index=0):
    inst, _ = kernel.instance(())
    ct = inst.ctasks[task_index]
    made = compiler.geometry(ct.code, inst.push, inst.options)
    assert made is not None
    code, out = made
    assert code.binary[:4] == b'\x03\x02\x23\x07' and out in code.write_fields
    stores = [s for s in ir.walk(code.task.body) if s.op == 'gstore' and s.buf is out]

    def groups(n):
        words = [host_eval(s.args[-1], (), lambda buf, k: n) for s in stores]
        assert words[1:] == [1, 1]
        return words[0]
    return ct, groups


def _field_bound_kernels():
    num = ti.field(ti.i32, ())
    x = ti.field(ti.f32, 1 << 20)
    s = ti.field(ti.f32, ())

    @ti.kernel
    def scale():
        for i in range(num[None] * 2 + 1):
            x[i] *= 2.0

    @ti.kernel
    def total():
        for i in range(num[None]):
            s[None] += x[i]
    return scale, total


NS = (-7, 0, 1, 63, 64, 127, 128, 129, 1000, 10 ** 6, 10 ** 9)


def test_gpu_geometry_fits_the_bound():
    state.init_offline(compiler.lavapipe_like(cpu_driver=False, iters_per_thread=1,
                                              min_groups=1, reduction_groups=1024))
    scale, total = _field_bound_kernels()
    ct, groups = _geometry_of(scale)
    for n in NS:
        trips = max(n * 2 + 1, 0)
        assert groups(n) == min(-(-trips // 128), 65535), n
    ct, groups = _geometry_of(total)
    assert ct.max_groups == 1024
    for n in NS:  # a reduction: 2 workgroups at least, its partials' room at most
        assert groups(n) == min(max(-(-max(n, 0) // 128), 2), 1024), n


def test_grid_stride_geometry_is_the_host_geometry():
    """With several iterations per invocation (a CPU driver's grid-stride tasks) the device
    computes what CompiledTask._groups computes on the host, for n > 0 (0 launches nothing)."""
    state.init_offline(compiler.lavapipe_like())
    scale, _ = _field_bound_kernels()
    ct, groups = _geometry_of(scale)
    assert ct.per_thread == 32 and ct.min_groups == 8
    for n in NS:
        trips = n * 2 + 1
        assert groups(n) == (ct._groups(trips) if trips > 0 else 0), n


def test_trip_count_only_the_task_computes_is_refused():
    """A bound held in a local of the task (or read from a field the loop writes) has no
    geometry task: the launcher falls back to the host-side geometry."""
    var = ir.Stmt('alloca', T.i32)
    load = ir.Stmt('load', T.i32, [var])
    loop = ir.Stmt('parfor', T.i32, [load], blocks=[ir.Block()])
    task = Task('parallel', ir.Block([var, load, loop]), 'k_t0')
    assert 'only the task computes' in geometry.unsupported(task)
    assert geometry.geometry_task(task, 128, 65535) is None

    f = ir.Buffer('n', T.i32, ())
    read = ir.Stmt('gload', T.i32, [], {'buf': f, 'comp': 0})
    body = ir.Block()
    loop = ir.Stmt('parfor', T.i32, [read], blocks=[body])
    body.append(ir.Stmt('gstore', None, [ir.const(0, T.i32)], {'buf': f, 'comp': 0}))
    task = Task('parallel', ir.Block([read, loop]), 'k_t1')
    assert 'writes' in geometry.unsupported(task)
    assert geometry.geometry_task(task, 128, 65535) is None
