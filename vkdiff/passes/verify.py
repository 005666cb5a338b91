"""Pass helper: the IR verifier. Checks a task list's IR after a pass -- block structure, operand
kinds and types -- and raises CompileError naming the pass that broke it. compiler.run_ir_passes
runs it between passes when VKDIFF_VERIFY_IR is set (the test suite sets it: tests/conftest.py);
a compile never pays for it otherwise.

Block structure: each statement's `parent` is the block that holds it, each nested block's
`owner` is its statement, no statement sits in two places. Operands: every argument is a
statement defined before its use in the same block or an enclosing one (a `for` / `parfor`
statement's value, its loop variable, inside its own body), in the same task (tasks share no
statements). Types: a statement with a value has a DataType; the op table's ops take and give
the types its typing rule says (a comparison gives u1; `same` ops take and give one type);
`if`, `select` and `check` conditions are u1; `gload` / `gstore` / `atomic` name a Buffer.
"""
from .. import ir
from .. import types as T
from ..errors import CompileError
from ..optable import OPS

_NO_VALUE = {'store', 'astore', 'gstore', 'if', 'while', 'break', 'continue', 'ret', 'print',
             'check', 'barrier', 'sg_barrier', 'device_fence'}
_LOOPS = {'for', 'parfor'}


def verify_tasks(tasks, after):
    """Check the IR of `tasks` (passes.tasks.Task), as left by the pass `after`."""
    seen = set()
    for t in tasks:
        if not isinstance(t.body, ir.Block):
            _fail(after, t, None, f'the body is a {type(t.body).__name__}, not an ir.Block')
        _block(t.body, set(), seen, after, t)


def _fail(after, task, s, what):
    where = f'task {task.name}' + (f', `{s.op}` statement' if s is not None else '')
    raise CompileError(f'internal: the IR after pass {after!r} is malformed ({where}): {what}')


def _block(block, visible, seen, after, task):
    visible = set(visible)
    for s in block.stmts:
        if not isinstance(s, ir.Stmt):
            _fail(after, task, None, f'a block holds {s!r}, not a statement')
        if id(s) in seen:
            _fail(after, task, s, 'the statement sits in two places')
        seen.add(id(s))
        if s.parent is not block:
            _fail(after, task, s, 'its parent is not the block that holds it')
        for k, a in enumerate(s.args):
            if not isinstance(a, ir.Stmt):
                _fail(after, task, s, f'operand {k} is {a!r}, not a statement')
            if a not in visible:
                _fail(after, task, s, f'operand {k} (`{a.op}`) is not defined before this use '
                      'in this block or an enclosing one')
            if a.op in _NO_VALUE:
                _fail(after, task, s, f'operand {k} is a `{a.op}`, which has no value')
        _types(s, after, task)
        for b in s.blocks:
            if not isinstance(b, ir.Block) or b.owner is not s:
                _fail(after, task, s, 'a nested block is not owned by its statement')
            _block(b, visible | {s} if s.op in _LOOPS else visible, seen, after, task)
        visible.add(s)


def _types(s, after, task):
    op = s.op
    if op in _NO_VALUE:
        if op == 'if' and s.args and s.args[0].dtype is not T.u1:
            _fail(after, task, s, f'the condition is {s.args[0].dtype}, not u1')
        if op == 'check' and s.args and s.args[0].dtype is not T.u1:
            _fail(after, task, s, f'the condition is {s.args[0].dtype}, not u1')
    elif not isinstance(s.dtype, T.DataType):
        _fail(after, task, s, f'its type is {s.dtype!r}, not a DataType')
    if op in ir.GLOBAL_ACCESS and not isinstance(s.attrs.get('buf'), ir.Buffer):
        _fail(after, task, s, 'it names no Buffer')
    if op == 'select' and s.args[0].dtype is not T.u1:
        _fail(after, task, s, f'the condition is {s.args[0].dtype}, not u1')
    o = OPS.get(op)
    if o is None or len(s.args) != o.arity:
        if o is not None:
            _fail(after, task, s, f'{len(s.args)} operands; the op takes {o.arity}')
        return
    if o.typing == 'compare' and s.dtype is not T.u1:
        _fail(after, task, s, f'a comparison of type {s.dtype}, not u1')
    if o.typing == 'same' and any(a.dtype is not s.dtype for a in s.args):
        _fail(after, task, s, f'operands {[str(a.dtype) for a in s.args]} for a result of '
              f'type {s.dtype}')
