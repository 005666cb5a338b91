"""Frontend stage: walks the Python AST of a `@kernel` / `@func` and emits IR.

Expressions are evaluated as they are walked: on compile-time values (numbers, fields, modules,
`ti.static(...)`) Python computes the result; on run-time Values the ops module emits IR. One
`build_<Node>` per AST node type; anything else raises CompileError at the user's line."""
import ast
import builtins
import inspect
import textwrap
import warnings

import numpy as np

from .. import ir
from .. import types as T
from ..errors import CompileError, SourceLocation, TaichiSyntaxError, VkdiffError, located
from . import ops
from .context import Value, emit, error, current
from .lvalues import ATOMIC_AUG, FieldElem, LocalVar, MatrixLValue, field_lvalue, new_local

_BINOPS = {ast.Add: 'add', ast.Sub: 'sub', ast.Mult: 'mul', ast.Div: 'div', ast.FloorDiv: 'floordiv',
           ast.Mod: 'mod', ast.Pow: 'pow', ast.BitAnd: 'band', ast.BitOr: 'bor', ast.BitXor: 'bxor',
           ast.LShift: 'shl', ast.RShift: 'shr', ast.MatMult: 'matmul'}
_CMPOPS = {ast.Lt: 'lt', ast.LtE: 'le', ast.Gt: 'gt', ast.GtE: 'ge', ast.Eq: 'eq', ast.NotEq: 'ne'}


class Static:
    """`ti.static(x)`: x is compile-time."""

    def __init__(self, value):
        self.value = value

    def __getitem__(self, key):  # `ti.static(offsets)[0]`: a compile-time element
        return self.value[key]

    def __len__(self):
        return len(self.value)


class NDRange:
    def __init__(self, *bounds):
        self.bounds = [(0, b) if not isinstance(b, (tuple, list)) else tuple(b) for b in bounds]

    def __iter__(self):  # Python-scope use
        import itertools
        return itertools.product(*[range(lo, hi) for lo, hi in self.bounds])


class Grouped:
    def __init__(self, target):
        self.target = target


class _LoopCtl(Exception):
    pass


class _StaticBreak(_LoopCtl):
    """`break` directly in a ti.static loop body: stop unrolling."""


class _StaticContinue(_LoopCtl):
    """`continue` directly in a ti.static loop body: skip the rest of this unrolled copy."""


def parse_function(fn):
    """The function's AST, with its file and first line for error messages."""
    try:
        src = textwrap.dedent(inspect.getsource(fn))
        file = inspect.getsourcefile(fn)
    except (OSError, TypeError) as e:
        raise CompileError(f'cannot read the source of {fn.__qualname__}: {e}') from None
    tree = ast.parse(src)
    fdef = tree.body[0]
    if not isinstance(fdef, ast.FunctionDef):
        raise CompileError(f'{fn.__qualname__} is not a plain function definition')
    return fdef, file, fn.__code__.co_firstlineno - 1, src.splitlines()


def function_scope(fn):
    """Globals and closure variables visible to the function body."""
    names = dict(fn.__globals__)
    if fn.__closure__:
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
            try:
                names[name] = cell.cell_contents
            except ValueError:
                pass
    return names


class FunctionBuilder:
    """Builds one function body (a kernel, or an inlined func) into the current emitter."""

    def __init__(self, fn, kernel, is_kernel):
        self.fn = fn
        self.kernel = kernel  # the KernelBuilder state: args, return
        self.is_kernel = is_kernel
        self.fdef, self.file, self.line0, self.lines = parse_function(fn)
        if not is_kernel:
            self.fdef.body = _structure_returns(self.fdef.body)
        self.returned = False    # a kernel's top-level return was built: the rest is dead
        self.globals = function_scope(fn)
        self.scopes = [{}]
        self.loop_depth = 0      # serial loops enclosing the current statement
        self.static_depth = 0
        self.static_scope = 0    # > 0 inside the arguments of ti.static(...) / comprehensions
        self.kernel_args = set()  # a kernel's parameter names: Taichi makes them immutable
        self.in_parfor = False
        self.folded_if = 0       # inside non-static ifs folded at compile time
        self.loops = []          # enclosing loops, innermost last: 'serial', 'parallel', or
        #                          ('static', emitter block depth at the unrolled body)
        self.result = None       # (lvalue) for funcs that return from inside branches
        self.top_block = None    # the block a func is inlined into, and where it starts
        self.top_index = 0

    # ---------------------------------------------------------------- scopes
    def lookup(self, name):
        for sc in reversed(self.scopes):
            if name in sc:
                return sc[name]
        if name in self.globals:
            return self.globals[name]
        if hasattr(builtins, name):
            return getattr(builtins, name)
        raise error(f'name {name!r} is not defined')

    def bind(self, name, value):
        for sc in reversed(self.scopes):
            if name in sc:
                sc[name] = value
                return
        self.scopes[-1][name] = value

    # ---------------------------------------------------------------- dispatch
    def loc(self, node):
        line = getattr(node, 'lineno', None)
        if line is None:
            return current().loc
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ''
        return SourceLocation(self.file, line + self.line0, text, self.fn.__name__)

    def __call__(self, node):
        em = current()
        saved = em.loc
        em.loc = self.loc(node)
        try:
            method = getattr(self, 'build_' + type(node).__name__, None)
            if method is None:
                raise error(f'Unsupported node "{type(node).__name__}" (not supported in '
                            'vkdiff kernels)', TaichiSyntaxError)
            return method(node)
        except (VkdiffError, _LoopCtl):
            raise
        except RecursionError:
            raise located(CompileError, 'recursion too deep while inlining: a ti.func that calls '
                          'itself must stop on compile-time values', em.loc) from None
        except (TypeError, ValueError, IndexError, KeyError, AttributeError, ZeroDivisionError,
                NotImplementedError, ArithmeticError) as e:
            raise located(CompileError, f'{type(e).__name__}: {e}', em.loc) from None
        finally:
            em.loc = saved

    def build_body(self, stmts):
        for s in stmts:
            if self.returned:
                return
            self(s)

    # ---------------------------------------------------------------- reading names
    def read(self, value):
        """What a bound name evaluates to (locals are loaded)."""
        if isinstance(value, (LocalVar, MatrixLValue)) or _is_struct_lv(value):
            return value.load()
        return value

    def build_Name(self, node):
        if isinstance(node.ctx, ast.Load):
            return self.read(self.lookup(node.id))
        raise error('internal: Name store handled by assign')

    def build_Constant(self, node):
        return node.value

    def build_Attribute(self, node):
        if isinstance(node.value, ast.Subscript):
            container, key = self(node.value.value), self(node.value.slice)
            if _is_struct_field(container):  # s[i].pos: load only that member
                lv = container._lvalue(self.field_indices(container, key))
                if node.attr in lv.members:
                    return lv.members[node.attr].load()
                return getattr(lv.load(), node.attr)
            return getattr(self._subscript(container, key), node.attr)
        if isinstance(node.value, ast.Name):
            raw = self.lookup(node.value.id)
            if _is_struct_lv(raw) and node.attr in raw.members:  # p.pos of a local struct
                return raw.members[node.attr].load()
        base = self(node.value)
        if isinstance(node.value, ast.Name):
            if isinstance(raw, MatrixLValue) and node.attr in 'xyzwrgba' and len(node.attr) == 1:
                return self.read(raw.entries['xyzw'.find(node.attr) if node.attr in 'xyzw'
                                             else 'rgba'.find(node.attr)])
        return getattr(base, node.attr)

    def build_Tuple(self, node):
        return tuple(self(e) for e in node.elts)

    def build_List(self, node):
        return [self(e) for e in node.elts]

    def build_ListComp(self, node):
        """`[f(i) for i in range(4)]` over compile-time iterables: unrolled at compile time
        (Taichi does the same); `if` clauses must be compile-time too."""
        out = []

        def gen(k):
            if k == len(node.generators):
                out.append(self(node.elt))
                return
            g = node.generators[k]
            it = self.static_eval(g.iter)
            if isinstance(it, Static):
                it = it.value
            if isinstance(it, Value) or isinstance(it, (Grouped, NDRange)):
                raise error('a list comprehension in a kernel needs a compile-time iterable '
                            '(range of constants, a list, ti.static(...))')
            names = ([g.target.id] if isinstance(g.target, ast.Name)
                     else [e.id for e in g.target.elts])
            for item in it:
                self.scopes.append({})
                try:
                    vals = [item] if len(names) == 1 else list(
                        item.entries if hasattr(item, 'entries') else item)
                    for n, v in zip(names, vals):
                        self.scopes[-1][n] = v
                    if all(_static_truth(self.static_eval(c)) for c in g.ifs):
                        gen(k + 1)
                finally:
                    self.scopes.pop()
        gen(0)
        return out

    def build_Dict(self, node):
        return {self(k): self(v) for k, v in zip(node.keys, node.values)}

    def build_JoinedStr(self, node):
        return ''.join(str(self(v)) for v in node.values)

    def build_FormattedValue(self, node):
        return self(node.value)

    # ---------------------------------------------------------------- expressions
    def build_BinOp(self, node):
        a, b = self(node.left), self(node.right)
        op = _BINOPS.get(type(node.op))
        if op is None:
            raise error(f'operator {type(node.op).__name__} is not supported')
        if op == 'matmul':
            return a @ b
        if _compile_time(a) and _compile_time(b) and not (ops.is_number(a) and ops.is_number(b)):
            return _py_binop(node.op, a, b)
        return ops.binary(op, a, b)

    def build_UnaryOp(self, node):
        v = self(node.operand)
        if isinstance(node.op, ast.Not):
            return ops.unary('not', v)
        if isinstance(node.op, ast.USub):
            return ops.unary('neg', v)
        if isinstance(node.op, ast.UAdd):
            return v
        if isinstance(node.op, ast.Invert):
            return ops.unary('bnot', v)
        raise error('unsupported unary operator')

    def build_BoolOp(self, node):
        fn = 'land' if isinstance(node.op, ast.And) else 'lor'
        acc = self(node.values[0])
        for v in node.values[1:]:
            if _compile_time(acc):  # Python's short circuit on compile-time values
                if (fn == 'land' and not acc) or (fn == 'lor' and acc):
                    return acc
                acc = self(v)
                continue
            acc = ops.binary(fn, acc, self(v))
        return acc

    def build_Compare(self, node):
        left = self(node.left)
        result = None
        for op, comp in zip(node.ops, node.comparators):
            right = self(comp)
            if isinstance(op, (ast.Is, ast.IsNot)):  # Taichi: never in kernel code
                name = 'is' if isinstance(op, ast.Is) else 'is not'
                raise error(f'Operator "{name}" in Taichi scope is not supported.', TaichiSyntaxError)
            if isinstance(op, (ast.In, ast.NotIn)):
                if not self.static_scope:
                    raise error(f'"{type(op).__name__}" is only supported inside `ti.static`.',
                                TaichiSyntaxError)
                if not (_compile_time(left) and _compile_time(right)):
                    raise error('is / in comparisons need compile-time values')
                r = {ast.Is: lambda: left is right, ast.IsNot: lambda: left is not right,
                     ast.In: lambda: left in right, ast.NotIn: lambda: left not in right}[type(op)]()
            else:
                r = ops.binary(_CMPOPS[type(op)], left, right)
            result = r if result is None else ops.binary('land', result, r)
            left = right
        return result

    def build_IfExp(self, node):
        cond = self(node.test)
        if _compile_time(cond):
            return self(node.body) if cond else self(node.orelse)
        return ops.select(cond, self(node.body), self(node.orelse))

    def build_Subscript(self, node):
        base = self(node.value)
        return self._subscript(base, self(node.slice))

    def _subscript(self, base, key):
        from ..lang.field import Field
        if _is_struct_field(base):
            return base._lvalue(self.field_indices(base, key)).load()
        if isinstance(base, Field):
            return field_lvalue(base, self.field_indices(base, key)).load()
        if isinstance(base, (list, tuple, dict, str, np.ndarray)) or hasattr(base, '__getitem__'):
            return base[key]
        raise error(f'{type(base).__name__} cannot be indexed')

    def field_indices(self, field, key):
        from ..lang.matrix import Matrix
        if key is None:
            key = ()
        if not isinstance(key, tuple):
            key = (key,)
        flat = []
        for k in key:
            if isinstance(k, Matrix):  # ti.grouped index vector
                flat.extend(k.entries)
            else:
                flat.append(k)
        if len(flat) != len(field.shape):
            raise error(f'field {field.name} has {len(field.shape)} indices, got {len(flat)}'
                        + (' (use x[None] for a 0-D field)' if not field.shape else ''))
        out = []
        offset = getattr(field, 'offset', None) or (0,) * len(flat)
        for k, n, o in zip(flat, field.shape, offset):  # IR indices count from 0 (`offset=`)
            if ops.is_number(k):
                k = int(k) - o
                if not 0 <= k < n:
                    raise error(f'index {k + o} out of range [{o}, {o + n}) in field {field.name}')
            elif not isinstance(k, Value) or not k.dtype.is_int and k.dtype is not T.u1:
                what = f'a {k.dtype} value' if isinstance(k, Value) else repr(k)
                raise error(f'field index must be an integer, got {what}')
            elif o:
                k = ops.binary('sub', k, o)
            out.append(ops.as_value(k, T.i32).stmt)
        return out

    def build_Slice(self, node):
        return slice(*(self(x) if x is not None else None for x in (node.lower, node.upper, node.step)))

    def build_Starred(self, node):
        return _Starred(self(node.value))

    def static_eval(self, node):
        """Build an expression in Taichi's static scope (where `in` is allowed)."""
        self.static_scope += 1
        try:
            return self(node)
        finally:
            self.static_scope -= 1

    def build_Call(self, node):
        fn = self(node.func)
        if getattr(fn, '_vkdiff_atomic', None):
            if len(node.args) != 2:
                raise error(f'{fn.__name__} takes (target, value)')
            target = self.lvalue(node.args[0])
            return target.atomic(fn._vkdiff_atomic, self(node.args[1]))
        # the arguments of ti.static(...) / ti.static_assert(...) are in Taichi's static scope
        build = self.static_eval if getattr(fn, '_vkdiff_static_scope', False) else self
        args = []
        for a in node.args:
            v = build(a)
            args.extend(v.value) if isinstance(v, _Starred) else args.append(v)
        kwargs = {k.arg: build(k.value) for k in node.keywords}
        if fn is print:
            _warn_once('print() in a vkdiff kernel is ignored')
            return None
        if getattr(fn, '_vkdiff_func', None):
            # structs are passed by value: the func gets a local copy it may assign to
            args = [_struct_copy(a) for a in args]
            kwargs = {k: _struct_copy(v) for k, v in kwargs.items()}
            return fn._vkdiff_func.inline(self.kernel, args, kwargs)
        if getattr(fn, '_vkdiff_kernel', None):
            raise error('a kernel cannot call another kernel; make the callee a @ti.func')
        if fn in _PY_BUILTINS:
            return _PY_BUILTINS[fn](*args, **kwargs)
        return fn(*args, **kwargs)

    # ---------------------------------------------------------------- statements
    def build_Expr(self, node):
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return  # docstring
        self(node.value)

    def build_Pass(self, node):
        pass

    def build_Assert(self, node):
        _warn_once('assert in a vkdiff kernel is not checked at run time')

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
            self.assign(node.target, value)

    def _defined_local(self, name):
        return any(name in sc for sc in self.scopes)

    def assign(self, target, value):
        if isinstance(target, (ast.Tuple, ast.List)):
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
            if isinstance(cur, (LocalVar, MatrixLValue)) or _is_struct_lv(cur):
                cur.store(value)
            elif _is_runtime_scalar_or_matrix(value):
                self.scopes[-1][name] = new_local(value)
            else:
                self.scopes[-1][name] = value  # compile-time binding (field, function, tuple...)
            return
        self.lvalue(target).store(value)

    def lvalue(self, node):
        from ..lang.field import Field
        if isinstance(node, ast.Name):
            v = self.lookup(node.id)
            if isinstance(v, (LocalVar, MatrixLValue)) or _is_struct_lv(v):
                return v
            raise error(f'{node.id} is not a kernel variable and cannot be assigned here')
        if isinstance(node, ast.Subscript):
            key = self(node.slice)
            if isinstance(node.value, (ast.Name, ast.Attribute)):
                base = self.lookup(node.value.id) if isinstance(node.value, ast.Name) else self(node.value)
                if isinstance(base, Field):
                    return field_lvalue(base, self.field_indices(base, key))
                if _is_struct_field(base):
                    return base._lvalue(self.field_indices(base, key))
                if isinstance(base, MatrixLValue):
                    return base.entry(key)
                if isinstance(base, LocalVar):
                    raise error('a scalar cannot be indexed')
            if isinstance(node.value, ast.Subscript):
                base = self._compile_time_field(node.value)  # fields[k][i] with k static
                if base is not None:
                    return field_lvalue(base, self.field_indices(base, key))
            inner = self.lvalue(node.value)
            if isinstance(inner, MatrixLValue):
                return inner.entry(key)
            raise error('this subscript cannot be assigned')
        if isinstance(node, ast.Attribute) and isinstance(node.value, (ast.Name, ast.Subscript,
                                                                       ast.Attribute)):
            try:
                inner = self.lvalue(node.value)
            except CompileError:
                inner = None
            if _is_struct_lv(inner):  # p.mass = ..., s[i].pos = ...
                return inner.member(node.attr)
            if len(node.attr) == 1 and node.attr in 'xyzwrgba' and isinstance(inner, MatrixLValue):
                k = 'xyzw'.find(node.attr) if node.attr in 'xyzw' else 'rgba'.find(node.attr)
                return inner.entries[k]
        raise error(f'cannot assign to {ast.unparse(node)}')

    def _compile_time_field(self, node):
        """The field a compile-time expression like `fields[k]` names, or None."""
        from ..lang.field import Field
        try:
            base = self(node.value)
        except CompileError:
            return None
        if isinstance(base, (list, tuple, dict)):
            k = self(node.slice)
            if not isinstance(k, Value):
                v = base[k]
                return v if isinstance(v, Field) else None
        return None

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
        if op in ATOMIC_AUG and isinstance(target, (LocalVar, MatrixLValue)):
            target.augment(op, value)  # atomic if the local turns out to be shared by tasks
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
            from .loops import _decorator
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
        from .loops import build_for
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
        if isinstance(raw, (LocalVar, MatrixLValue)) or _is_struct_lv(raw):
            return node
        sf = getattr(raw, target.attr, None) if isinstance(target, ast.Attribute) else raw
        if not _is_struct_field(sf):
            return node
        import copy
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
    import copy
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


class _Starred:
    def __init__(self, value):
        self.value = value


def _compile_time(x):
    from ..lang.matrix import Matrix
    if isinstance(x, Value):
        return False
    if isinstance(x, Matrix):
        return all(_compile_time(e) for e in x.entries)
    return True


def _is_runtime_scalar_or_matrix(v):
    from ..lang.matrix import Matrix
    from ..lang.struct import Struct
    if isinstance(v, Value) or ops.is_number(v):
        return True
    return isinstance(v, (Matrix, Struct))


def _is_struct_lv(v):
    return getattr(type(v), '_vkdiff_struct_lvalue', False)


def _is_struct_field(v):
    return getattr(type(v), '_vkdiff_struct_field', False)


def _struct_copy(v):
    from ..lang.struct import Struct
    return new_local(v) if isinstance(v, Struct) else v


def _py_binop(op, a, b):
    import operator
    f = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
         ast.Div: operator.truediv, ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod,
         ast.Pow: operator.pow, ast.BitAnd: operator.and_, ast.BitOr: operator.or_,
         ast.BitXor: operator.xor, ast.LShift: operator.lshift, ast.RShift: operator.rshift}
    return f[type(op)](a, b)


_warned = set()


def _warn_once(msg):
    if msg not in _warned:
        _warned.add(msg)
        warnings.warn(msg, stacklevel=2)


def _api():
    from ..lang import api
    return api


def _static_truth(v):
    if isinstance(v, Value):
        raise error('an `if` in a list comprehension in a kernel must be a compile-time condition')
    return bool(v)


_PY_BUILTINS = {
    abs: lambda x: ops.unary('abs', x),
    min: lambda *a: _api().min(*a),
    max: lambda *a: _api().max(*a),
    # on compile-time numbers int() and float() stay Python's (`ti.static(range(int(n)))`)
    int: lambda x=0: (int(x) if ops.is_number(x) or isinstance(x, str)
                      else ops.cast(x, T.Defaults.ip)),
    float: lambda x=0.0: (float(x) if ops.is_number(x) or isinstance(x, str)
                          else ops.cast(x, T.Defaults.fp)),
    bool: lambda x=False: ops.to_bool(x) if isinstance(x, Value) else bool(x),
    # all(v == w) / any(v > 0) on a vector: Taichi reduces the entries at run time
    all: lambda x: x.all() if hasattr(x, 'all') and hasattr(x, 'entries') else all(x),
    any: lambda x: x.any() if hasattr(x, 'any') and hasattr(x, 'entries') else any(x),
}
