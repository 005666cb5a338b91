"""The IR verifier (passes/verify.py) on IR built by hand (irbuild.Builder): it accepts what the
passes make and reports, naming the pass, each kind of malformed IR -- an operand used before it
is defined or taken from another task, a statement in two blocks or with the wrong parent, a
comparison not typed u1, operands of a `same` op of another type than its result. The test suite
runs it between every pass (tests/conftest.py sets VKDIFF_VERIFY_IR), so every kernel the suite
compiles is checked after each pass; here, a pass that breaks the IR is caught in the pipeline."""
import pytest

import vkdiff as ti
from vkdiff import compiler, ir, irbuild
from vkdiff import types as T
from vkdiff.errors import CompileError
from vkdiff.passes.tasks import Task
from vkdiff.passes.verify import verify_tasks


def _task(build):
    """A serial task whose body `build(b, x)` fills, x a field Buffer of 4 f32."""
    x = ir.Buffer('x', T.f32, (4,), role='field')
    body = ir.Block()
    b = irbuild.Builder(body)
    build(b, x)
    return Task('serial', body, 'k')


def _store_sum(b, x):
    i = b.const(1, T.i32)
    v = b.insert(ir.Stmt('gload', T.f32, [i.stmt], {'buf': x, 'comp': 0}))
    s = b.binary('add', irbuild.Value(v), b.const(2.0, T.f32))
    b.insert(ir.Stmt('gstore', None, [i.stmt, s.stmt], {'buf': x, 'comp': 0}))
    return s


def test_well_formed_ir_passes():
    verify_tasks([_task(_store_sum)], 'hand')


def test_an_operand_used_before_its_definition():
    t = _task(_store_sum)
    stmts = t.body.stmts
    stmts.insert(0, stmts.pop(stmts.index(next(s for s in stmts if s.op == 'add'))))
    with pytest.raises(CompileError, match="after pass 'hand'.*`add`.*not defined before"):
        verify_tasks([t], 'hand')


def test_an_operand_from_another_task():
    t1, t2 = _task(_store_sum), _task(_store_sum)
    add2 = next(s for s in t2.body.stmts if s.op == 'add')
    add2.args[0] = next(s for s in t1.body.stmts if s.op == 'gload')
    with pytest.raises(CompileError, match='operand 0 .*not defined before'):
        verify_tasks([t1, t2], 'lower')


def test_a_statement_in_two_places_or_with_the_wrong_parent():
    t = _task(_store_sum)
    t.body.stmts.append(t.body.stmts[0])
    with pytest.raises(CompileError, match='two places'):
        verify_tasks([t], 'reductions')
    t = _task(_store_sum)
    t.body.stmts[0].parent = ir.Block()
    with pytest.raises(CompileError, match='parent'):
        verify_tasks([t], 'reductions')


def test_types():
    t = _task(lambda b, x: b.binary('lt', b.const(1.0, T.f32), b.const(2.0, T.f32)))
    next(s for s in t.body.stmts if s.op == 'lt').dtype = T.i32
    with pytest.raises(CompileError, match='comparison of type i32'):
        verify_tasks([t], 'lower')
    t = _task(_store_sum)
    next(s for s in t.body.stmts if s.op == 'add').dtype = T.f64
    with pytest.raises(CompileError, match=r"operands \['f32', 'f32'\] for a result of type f64"):
        verify_tasks([t], 'lower')
    t = _task(lambda b, x: b.insert(ir.Stmt('gload', T.f32, [b.const(0, T.i32).stmt],
                                            {'comp': 0})))
    with pytest.raises(CompileError, match='names no Buffer'):
        verify_tasks([t], 'lower')


def test_a_loop_variable_is_visible_in_its_body_only():
    x = ir.Buffer('x', T.f32, (4,), role='field')
    body = ir.Block()
    b = irbuild.Builder(body)
    inner = ir.Block()
    loop = b.insert(ir.Stmt('parfor', T.i32, [b.const(4, T.i32).stmt], blocks=[inner]))
    inner.append(ir.Stmt('gstore', None, [loop, ir.const(1.0, T.f32)], {'buf': x, 'comp': 0}))
    c = inner.stmts[0].args[1]
    inner.insert(0, c)
    verify_tasks([Task('parallel', body, 'k')], 'split_tasks')
    body.append(ir.Stmt('gstore', None, [loop, c], {'buf': x, 'comp': 0}))
    with pytest.raises(CompileError, match='operand 1 .*not defined'):
        verify_tasks([Task('parallel', body, 'k')], 'split_tasks')


def test_the_pipeline_runs_it_after_each_pass(monkeypatch):
    """A backend pass that breaks the IR is reported with its name (the suite sets
    VKDIFF_VERIFY_IR, so the check runs for every kernel compiled in it)."""
    x = ti.field(ti.f32, 8)

    @ti.kernel
    def k():
        for i in x:
            x[i] = x[i] * 2.0 + 1.0

    def breaking(tasks, name, options):
        for t in tasks:
            for s in ir.walk(t.body):
                if s.op == 'add':
                    s.dtype = T.f64
        return tasks
    passes = dict(compiler.BACKEND_PASSES)
    passes['reductions'] = breaking
    monkeypatch.setattr(compiler, 'BACKEND_PASSES', tuple(passes.items()))
    with pytest.raises(CompileError, match="after pass 'reductions'"):
        k.ir(after='codegen')
