"""Frontend floor, statements: the `build_<Node>` methods of the FunctionBuilder (builder.py) for
assignments (locals, field elements, matrix entries, struct members), augmented assignments
(atomics on fields), if/while/break/continue, for (frontend/loops.py) and return (a func's
returns inside branches are restructured so each ends its path)."""
import ast
import copy

import numpy as np

from .. import ir
from .. import types as T
from ..errors import CompileError, TaichiSyntaxError, TaichiTypeError
from ..lang.field import Field
from ..lang.matrix import swizzle_indices
from . import ops
from .argarray import ArgArray
from .asserts import build_assert
from .compiletime import (Static, _StaticBreak, _StaticContinue, _compile_time,
                          _is_runtime_scalar_or_matrix, _is_struct_field, _is_struct_lv)
from .context import Value, current, emit, error
from .expressions import _BINOPS
from .loops import _decorator, build_for
from .lvalues import (ATOMIC_AUG, ArrayElem, DynamicEntry, FieldElem, LocalList, LocalVar,
                      MatrixLValue, field_lvalue, is_lvalue, new_local)


class StatementBuilder:
    """The statement half of FunctionBuilder (a mixin: scopes and dispatch live in builder.py)."""

    # ---------------------------------------------------------------- statements
    def build_Expr(self, node):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstring
        self(node.value)

    def build_Pass(self, node):
        pass

    def build_Assert(self, node):
        build_assert(self, node)  # checked with ti.init(debug=True) only, as in Taichi

    def build_Assign(self, node):
        value = self(node.value)
        for target in node.targets:
            self.assign(target, value)

    def check_mutable(self, target):
        """Taichi's rule: a kernel's arguments cannot be assigned to."""
        if isinstance(target, ast.Name) and target.id in self.kernel_args:
            raise error(f'Kernel argument "{target.id}" is immutable in the kernel. If you want '
                        'to change its value, please create a new variable.', TaichiSyntaxError)

    def build_AnnAssign(self, node):
        self.check_mutable(node.target)
        dtype = T.resolve(self(node.annotation))
        value = ops.cast(self(node.value), dtype) if node.value is not None else ops.cast(0, dtype)
        if isinstance(node.target, ast.Name) and not self._defined_local(node.target.id):
            var = LocalVar(dtype)
            var.store(value)
            self.scopes[-1][node.target.id] = var
        else:
            if isinstance(node.target, ast.Name):
                cur = self.lookup(node.target.id)
                if isinstance(cur, LocalVar) and cur.dtype is not (T.i32 if dtype is T.u1 else dtype):
                    raise error(f'Static assign cannot have type overloading: '
                                f'{node.target.id} is {cur.dtype}, annotated {dtype}',
                                TaichiSyntaxError)
            self.assign(node.target, value)

    def _defined_local(self, name):
        return any(name in sc for sc in self.scopes)

    def assign(self, target, value):
        if isinstance(target, (ast.Tuple, ast.List)):
            if getattr(value, 'ndim', None) == 2 and getattr(value, 'm', 1) > 1:
                raise error('Matrices with more than one columns cannot be unpacked (as in '
                            f'Taichi); got a {value.n}x{value.m} matrix')
            values = list(value.entries if hasattr(value, 'entries') else value)
            if len(values) != len(target.elts):
                raise error(f'cannot unpack {len(values)} values into {len(target.elts)} targets')
            for t, v in zip(target.elts, values):
                self.assign(t, v)
            return
        if isinstance(target, ast.Name):
            self.check_mutable(target)
            name = target.id
            cur = None
            for sc in reversed(self.scopes):
                if name in sc:
                    cur = sc[name]
                    break
            if isinstance(value, np.ndarray):  # as Taichi: a 0-D array is a scalar
                if value.ndim:
                    raise error('Only 0-dimensional numpy array can be used to initialize a scalar '
                                f'expression (got shape {value.shape})', TaichiTypeError)
                value = value[()]
            if is_lvalue(cur):  # (a template parameter: the caller's element)
                cur.store(value)
            elif _is_runtime_scalar_or_matrix(value):
                self.scopes[-1][name] = new_local(value)
            else:  # compile-time binding (field, function, tuple...); a list's run-time
                self.scopes[-1][name] = LocalList.wrap(value)  # elements become locals
            return
        self.lvalue(target).store(value)

    def lvalue(self, node):
        """What the assignment target `node` names; a CompileError when it is not assignable."""
        place = self.place(node)
        if is_lvalue(place):
            return place
        if isinstance(node, ast.Name):
            raise error(f'{node.id} is not a kernel variable and cannot be assigned here')
        if isinstance(node, ast.Subscript):
            raise error('this subscript cannot be assigned')
        raise error(f'cannot assign to {ast.unparse(node)}')

    def place(self, node):
        """What `node` names, each of its sub-expressions built once (an index that calls a
        func with a side effect runs once): an lvalue where it is assignable (a local, a field
        element, a matrix entry, a struct member), else what `self.read` turns into the value
        `self(node)` builds."""
        if isinstance(node, ast.Name):
            return self.lookup(node.id)
        if isinstance(node, ast.Subscript):
            base = self.place(node.value)
            return self.index_place(base, self(node.slice))
        if isinstance(node, ast.Attribute):
            inner = self.place(node.value)
            if _is_struct_lv(inner) and node.attr in inner.members:  # p.mass, s[i].pos
                return inner.members[node.attr]
            if isinstance(inner, MatrixLValue) and inner.ndim == 1:  # v.x, v.zyx
                idx = swizzle_indices(node.attr, inner.n)
                if idx is not None:
                    return inner.entries[idx[0]] if len(idx) == 1 else \
                        MatrixLValue([inner.entries[k] for k in idx], len(idx), 1, 1)
            return self.member(inner, node.attr)
        return self(node)

    def index_place(self, base, key):
        """`base[key]` for `base` as place() gives it (see there)."""
        if isinstance(base, (Field, ArgArray)):
            return field_lvalue(base, self.field_indices(base, key))
        if _is_struct_field(base):
            return base._lvalue(self.field_indices(base, key))
        if isinstance(base, MatrixLValue):
            return base.entry(key)
        if isinstance(base, LocalVar):
            raise error('a scalar cannot be indexed')
        if isinstance(base, LocalList) and ops.is_number(key) and int(key) == key:
            elem = base[int(key)]
            if isinstance(elem, (LocalVar, MatrixLValue)):
                return elem
        return self._subscript(self.read(base), key)

    def build_AugAssign(self, node):
        op = _BINOPS.get(type(node.op))
        value = self(node.value)
        self.check_mutable(node.target)
        target = self.lvalue(node.target)
        elems = target.entries if isinstance(target, MatrixLValue) else [target]
        if all(isinstance(e, FieldElem) for e in elems) and op in ATOMIC_AUG:
            target.atomic(op, value)
            return
        if op == 'matmul':
            target.store(target.load() @ value)
            return
        if op in ATOMIC_AUG and isinstance(target, (LocalVar, MatrixLValue, ArrayElem,
                                                    DynamicEntry)):
            # atomic on field entries (`v[i][d] += x` with a run-time d too), and on a local
            # once it turns out to be shared by tasks
            target.augment(op, value)
            return
        target.store(ops.binary(op, target.load(), value))

    def build_If(self, node):
        cond = self(node.test)
        if isinstance(cond, Static):
            cond = cond.value
        if _compile_time(cond):
            # Taichi: only `if ti.static(...)` is a static if; another if whose condition
            # happens to be compile-time is still a run-time if there, so the for loops inside
            # it are not the kernel's outermost (parallel) loops
            runtime_if = _decorator(self, node.test) != 'static'
            self.folded_if += runtime_if
            try:
                self.build_scoped(node.body if cond else node.orelse)
            finally:
                self.folded_if -= runtime_if
            return
        then_b, else_b = ir.Block(), ir.Block()
        emit('if', None, [ops.to_bool(cond)], blocks=[then_b, else_b])
        with current().open(then_b):
            self.build_scoped(node.body)
        with current().open(else_b):
            self.build_scoped(node.orelse)

    def build_scoped(self, stmts):
        self.scopes.append({})
        try:
            self.build_body(stmts)
        finally:
            self.scopes.pop()

    def build_While(self, node):
        if node.orelse:
            raise error('while ... else is not supported')
        body = ir.Block()
        emit('while', None, blocks=[body])
        with current().open(body):
            cond = self(node.test)
            if _compile_time(cond):
                if not cond:
                    emit('break')
            else:
                exit_b = ir.Block()
                emit('if', None, [ops.unary('not', cond)], blocks=[exit_b, ir.Block()])
                with current().open(exit_b):
                    emit('break')
            self.loop_depth += 1
            self.loops.append('serial')
            try:
                self.build_scoped(node.body)
            finally:
                self.loops.pop()
                self.loop_depth -= 1

    def build_Break(self, node):
        self._loop_control('break', _StaticBreak)

    def build_Continue(self, node):
        self._loop_control('continue', _StaticContinue)

    def _loop_control(self, what, static_exc):
        """break/continue act on the innermost loop, as in Python: a run-time loop gets the IR
        statement; a ti.static loop is cut short while unrolling."""
        if not self.loops:
            raise error(f'{what} outside a loop')
        inner = self.loops[-1]
        if isinstance(inner, tuple):
            if len(current().blocks) != inner[1]:
                raise error(f'You are trying to `{what}` a static `for` loop, but the `{what}` '
                            'statement is inside a non-static `if` (use ti.static(...) for the '
                            'condition)', TaichiSyntaxError)
            raise static_exc()
        if inner == 'parallel' and what == 'break':
            raise error('Cannot break in the outermost loop (a parallel for loop)',
                        TaichiSyntaxError)
        emit(what)

    # the kernel's own block: a for loop emitted straight into it is parallel (also from a func
    # inlined there, or under ti.static if/for, which emit nothing of their own)
    top_level = property(lambda self: current().blocks[-1] is self.kernel.body)

    def build_For(self, node):
        build_for(self, self._struct_for(node))

    def _struct_for(self, node):
        """`for i in s` / `for I in ti.grouped(s)` over a struct field: loop over its first member
        field (same shape). Only names and attributes of names are looked at (no side effects)."""
        it = node.iter
        call = it if isinstance(it, ast.Call) and len(it.args) == 1 and not it.keywords else None
        target = call.args[0] if call is not None else it
        if not (isinstance(target, ast.Name) or isinstance(target, ast.Attribute) and
                isinstance(target.value, ast.Name)):
            return node
        try:
            raw = self.lookup(target.value.id if isinstance(target, ast.Attribute) else target.id)
        except CompileError:
            return node
        if is_lvalue(raw):
            return node
        sf = getattr(raw, target.attr, None) if isinstance(target, ast.Attribute) else raw
        if not _is_struct_field(sf):
            return node
        node = copy.copy(node)
        const = ast.copy_location(ast.Constant(value=sf._first_field()), target)
        if call is not None:
            call = copy.copy(call)
            call.args = [const]
            node.iter = call
        else:
            node.iter = const
        return node

    def build_Return(self, node):
        value = self(node.value) if node.value is not None else None
        if self.is_kernel:
            if not self.top_level or any(not isinstance(lp, tuple) for lp in self.loops):
                raise error('Return inside non-static if/for is not supported: a kernel returns '
                            'only from its top level; assign the result to a variable and return '
                            'it last', TaichiSyntaxError)
            if value is not None:  # `return` / `return None` just end a kernel without a result
                self.kernel.set_return(value)
            self.returned = value is not None or self.kernel.ret_type is None
            return
        at_top = current().blocks[-1] is self.top_block
        if not at_top and self.loops:
            raise error('return inside a loop is not supported in a ti.func; store the result '
                        'in a variable, break, and return it after the loop')
        if self.result is None:
            if at_top:
                raise _Return(value)
            self.result = self._hoisted_local(value)
        self.result.store(value)
        if at_top:
            raise _Return(self.result.load())

    def _hoisted_local(self, value):
        """A local for a func's result, declared before the inlined body (returns may sit in
        branches)."""
        tmp = ir.Block()
        with current().open(tmp):
            var = new_local(ops.cast(0, ops.dtype_of(value)) if not hasattr(value, 'entries')
                            else value._map(lambda e: ops.cast(0, ops.dtype_of(e))))
        allocas = [st for st in tmp.stmts if st.op == 'alloca']
        for k, st in enumerate(allocas):
            self.top_block.insert(self.top_index + k, st)
        return var

    def build_FunctionDef(self, node):
        where = 'kernel' if self.is_kernel else 'func'
        raise error(f"Function definition is not allowed in 'ti.{where}' (define a @ti.func at "
                    'module level)', TaichiSyntaxError)


class _Return(Exception):
    def __init__(self, value):
        self.value = value


def _structure_returns(stmts):
    """A func body in which every return ends its path: the statements after an `if` that
    returns in some branch are moved into (copies for) the branches that go on, recursively,
    so a return inside a run-time if never lets later code run."""
    out = []
    for k, s in enumerate(stmts):
        out.append(s)
        if isinstance(s, ast.If) and _has_return(s):
            rest = stmts[k + 1:]
            for attr in ('body', 'orelse'):
                branch = getattr(s, attr)
                if rest and not _always_returns(branch):
                    branch = branch + copy.deepcopy(rest)
                setattr(s, attr, _structure_returns(branch))
            break
        if isinstance(s, ast.Return):
            break  # the rest is dead, as in Python
    return out


def _has_return(node):
    """A return in this if's branches (loops excluded: a return there is an error anyway)."""
    for s in node.body + node.orelse:
        if isinstance(s, ast.Return) or isinstance(s, ast.If) and _has_return(s):
            return True
    return False


def _always_returns(stmts):
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, ast.Return):
        return True
    return isinstance(last, ast.If) and _always_returns(last.body) and _always_returns(last.orelse)
