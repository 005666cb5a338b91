"""Frontend floor, expressions: the `build_<Node>` methods of the FunctionBuilder (builder.py) for
names, literals, operators, comparisons, subscripts (field elements, with their index checks) and
calls (ti.func inlining, atomics, Python builtins). On compile-time operands Python computes the
result; on run-time Values frontend/ops.py emits IR."""
import ast
import operator
import warnings

import numpy as np

from .. import ir
from .. import types as T
from ..lang import layout
from ..lang.field import Field
from ..lang.matrix import Matrix, swizzle_indices
from . import ops, printing, sparse
from .argarray import ArgArray
from .compiletime import (Grouped, NDRange, Static, _compile_time, _is_struct_field, _is_struct_lv,
                          _struct_copy)
from ..errors import CompileError, TaichiSyntaxError, TaichiTypeError, VkdiffError, with_call_site
from .context import Value, current, emit, error
from .lvalues import METHOD_NAMES, LocalList, MatrixLValue, field_lvalue, is_lvalue

_BINOPS = {ast.Add: 'add', ast.Sub: 'sub', ast.Mult: 'mul', ast.Div: 'div', ast.FloorDiv: 'floordiv',
           ast.Mod: 'mod', ast.Pow: 'pow', ast.BitAnd: 'band', ast.BitOr: 'bor', ast.BitXor: 'bxor',
           ast.LShift: 'shl', ast.RShift: 'shr', ast.MatMult: 'matmul'}
_CMPOPS = {ast.Lt: 'lt', ast.LtE: 'le', ast.Gt: 'gt', ast.GtE: 'ge', ast.Eq: 'eq', ast.NotEq: 'ne'}


# statements of a plain expression (what Taichi builds lazily): arithmetic, reads
_EXPRESSION_OPS = (ir.PURE - {'random'}) | {'gload', 'load'}


class ExpressionBuilder:
    """The expression half of FunctionBuilder (a mixin: scopes and dispatch live in builder.py)."""

    # ---------------------------------------------------------------- reading names
    def read(self, value):
        """What a bound name evaluates to (locals are loaded)."""
        if is_lvalue(value):  # (a template parameter bound to x[i] reads x[i] here)
            return value.load()
        if isinstance(value, LocalList):
            return [self.read(e) for e in value]
        return value

    def build_Name(self, node):
        if isinstance(node.ctx, ast.Load):
            return self.read(self.lookup(node.id))
        raise error('internal: Name store handled by assign')

    def build_NamedExpr(self, node):
        """`(x := value)`: assign the name (like `x = value`) and yield the variable's value,
        as Taichi's build_NamedExpr does."""
        self.assign(node.target, self(node.value))
        return self.read(self.lookup(node.target.id))

    def build_Constant(self, node):
        return node.value

    def build_Attribute(self, node):
        if isinstance(node.value, ast.Subscript):
            container, key = self(node.value.value), self(node.value.slice)
            if _is_struct_field(container):  # s[i].pos: load only that member
                return self.member(container._lvalue(self.field_indices(container, key)),
                                   node.attr)
            return self.member(self._subscript(container, key), node.attr)
        if isinstance(node.value, ast.Name):  # p.pos of a local struct, v.x of a local vector
            return self.member(self.lookup(node.value.id), node.attr)
        return self.member(self(node.value), node.attr)

    def member(self, obj, attr):
        """`obj.attr` for `obj` as place() gives it: of a struct lvalue or a local vector, only
        the member or entry named is loaded."""
        if _is_struct_lv(obj) and attr in obj.members:
            return obj.members[attr].load()
        if isinstance(obj, MatrixLValue) and obj.ndim == 1:
            idx = swizzle_indices(attr, obj.n)
            if idx is not None and len(idx) == 1:
                return self.read(obj.entries[idx[0]])
        base = self.read(obj)
        v = getattr(base, attr)
        if attr in ('grad', 'dual') and isinstance(base, Field) and base.dtype.is_float \
                and (v is None or v._shape is None):  # (Taichi's: always one, maybe unplaced)
            raise error(f'Gradient {base.name}.{attr} has not been placed, check whether '
                        f'`needs_{attr}=True`', CompileError)
        return v

    def build_Tuple(self, node):
        return tuple(self(e) for e in node.elts)

    def build_List(self, node):
        return [self(e) for e in node.elts]

    def build_ListComp(self, node):
        """`[f(i) for i in range(4)]` over compile-time iterables: unrolled at compile time
        (Taichi does the same); `if` clauses must be compile-time too."""
        out = []
        self._comprehension(node, lambda: out.append(self(node.elt)))
        return out

    def build_DictComp(self, node):
        """`{k(i): v(i) for i in range(4)}`: unrolled at compile time, as a list comprehension;
        the keys must be compile-time values (the dict is Python's)."""
        out = {}

        def item():
            key = self(node.key)
            if isinstance(key, Value):
                raise error('a dict comprehension in a kernel needs compile-time keys')
            out[key] = self(node.value)
        self._comprehension(node, item)
        return out

    def _comprehension(self, node, emit_item):
        """Run emit_item() once per combination of the comprehension's (compile-time)
        generators whose `if` clauses hold, with the targets bound in a scope of their own."""
        def gen(k):
            if k == len(node.generators):
                emit_item()
                return
            g = node.generators[k]
            it = self.static_eval(g.iter)
            if isinstance(it, Static):
                it = it.value
            if isinstance(it, Value) or isinstance(it, (Grouped, NDRange)):
                raise error('a comprehension in a kernel needs a compile-time iterable '
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

    def build_Dict(self, node):
        """A dict display of compile-time keys; `**d` unpacks a dict (as in Python)."""
        out = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                d = self(v)
                if not isinstance(d, dict):
                    raise error(f"'{type(d).__name__}' object is not a mapping", TypeError)
                out.update(d)
            else:
                out[self(k)] = self(v)
        return out

    def build_JoinedStr(self, node):
        return printing.joined_str([self(v) for v in node.values])

    def build_FormattedValue(self, node):
        value = self(node.value)
        if node.conversion in (ord('r'), ord('s'), ord('a')) and not printing._runtime(value):
            value = {'r': repr, 's': str, 'a': ascii}[chr(node.conversion)](value)
        if node.format_spec is None:
            return value
        spec = self(node.format_spec)
        if not isinstance(spec, str):
            raise error('a format specifier in a kernel f-string must be a compile-time string')
        return printing.Spec(value, spec) if spec else value

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
        if isinstance(node.op, (ast.Not, ast.Invert)) and isinstance(v, Value) and v.dtype.is_float:
            name = 'logic_not' if isinstance(node.op, ast.Not) else 'bit_not'  # Taichi's names
            raise error(f"'{name}' takes integral inputs only, however '{v.dtype}' is provided",
                        TaichiTypeError)
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
            if isinstance(acc, Matrix):
                acc = ops.binary(fn, acc, self(v))
                continue
            acc = self._short_circuit(fn, acc, v)
        return acc

    def _short_circuit(self, fn, acc, node):
        """`acc and <node>` / `acc or <node>` with run-time `acc`: Taichi (and Python) value
        `y if x else x` / `x if x else y`. As in Taichi (short-circuit operators on lazily built
        expressions), an expression y that reads global memory is only evaluated when needed:
        it is built inside an `if` and the result goes through a local (a CPU driver runs
        each load as a loop over the SIMD lanes; an out-of-range read guarded by x does not
        happen). Otherwise -- no read, or y calls a function, whose body Taichi builds (side
        effects included) before the operator -- both are evaluated and selected."""
        em = current()
        truth = ops.to_bool(acc)
        then_b, else_b = ir.Block(), ir.Block()
        branch = emit('if', None, [truth], blocks=[then_b, else_b])
        inner = then_b if fn == 'land' else else_b
        with em.open(inner):
            rhs = self(node)
        stmts = inner.stmts
        costly = isinstance(rhs, Value) and any(s.op == 'gload' for s in stmts) and all(
            s.op in _EXPRESSION_OPS and not s.blocks for s in stmts)
        if not costly:  # evaluate y unconditionally: its statements go before the if
            parent = branch.parent
            i = parent.stmts.index(branch)
            parent.stmts.remove(branch)
            for s in list(inner.stmts):
                parent.insert(i, s)
                i += 1
            if isinstance(acc, Matrix) or isinstance(rhs, Matrix):
                return ops.binary(fn, acc, rhs)
            return ops.select(truth, rhs, acc) if fn == 'land' else ops.select(truth, acc, rhs)
        t = em.operand_types(rhs, acc)
        parent = branch.parent
        with em.open(parent, parent.stmts.index(branch)):
            var = emit('alloca', t)
        with em.open(inner):
            emit('store', None, [var, em.value(rhs, t)])
        with em.open(else_b if fn == 'land' else then_b):
            emit('store', None, [var, em.value(acc, t)])
        return Value(emit('load', t, [var]))

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
        if isinstance(cond, Matrix):
            raise error('Using conditional expression for element-wise select operation on '
                        'Taichi vectors/matrices is deprecated and removed starting from Taichi '
                        'v1.5.0 Please use "ti.select" instead.', TaichiSyntaxError)
        if _compile_time(cond):
            return self(node.body) if cond else self(node.orelse)
        return ops.select(cond, self(node.body), self(node.orelse))

    def build_Subscript(self, node):
        base = self(node.value)
        return self._subscript(base, self(node.slice))

    def _subscript(self, base, key):
        if _is_struct_field(base):
            return base._lvalue(self.field_indices(base, key)).load()
        if isinstance(base, (Field, ArgArray)):
            return field_lvalue(base, self.field_indices(base, key)).load()
        if isinstance(base, (list, tuple, dict, str, np.ndarray)) or hasattr(base, '__getitem__'):
            return base[key]
        raise error(f'{type(base).__name__} cannot be indexed')

    def field_indices(self, field, key):
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
        flat = self._constant_alias(field, flat, offset)
        constant = all(ops.is_number(k) for k in flat)  # else its address is known at run time
        for k, n, o in zip(flat, field.shape, offset):  # IR indices count from 0 (`offset=`)
            if isinstance(field, ArgArray):  # run-time shape (boundary='clamp': clamped)
                out.append(field.index(k, n))
                continue
            if ops.is_number(k):
                k = int(k) - o
                if not 0 <= k < n and constant and not current().check_bounds:  # else at run time
                    raise error(f'index {k + o} out of range [{o}, {o + n}) in field {field.name}')
            elif not isinstance(k, Value) or not k.dtype.is_int and k.dtype is not T.u1:
                what = f'a {k.dtype} value' if isinstance(k, Value) else repr(k)
                raise error(f'field index must be an integer, got {what}')
            elif o:
                k = ops.binary('sub', k, o)
            out.append(ops.as_value(k, T.i32).stmt)
        return out

    @staticmethod
    def _constant_alias(field, flat, offset):
        """Constant indices out of range on an axis, without bound checks: the element Taichi's
        address puts them on when that is an element of the same field (lang/layout.py; warned
        once per field), as constants in range; else the indices as they are."""
        if isinstance(field, ArgArray) or current().check_bounds or \
                not all(ops.is_number(k) for k in flat):
            return flat
        stored = [int(k) - o for k, o in zip(flat, offset)]
        if all(0 <= k < n for k, n in zip(stored, field.shape)):
            return flat
        target = layout.alias(field, stored)
        if target is None:
            return flat
        layout.warn_alias(field, tuple(flat), target)
        return [k + o for k, o in zip(target, offset)]

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

    def _template_params(self, func, node):
        """The argument positions and keywords of the call `node` that go to a ti.template()
        parameter of `func` (not a struct-typed one: StructType subclasses Template)."""
        from .func import Template  # cycle: func.py imports the builder, which imports this module
        if any(isinstance(a, ast.Starred) for a in node.args):
            return set()
        inner = getattr(func, '_func', func)  # a func bound to an instance takes self first
        params = list(inner.sig.parameters.values())[1 if inner is not func else 0:]
        by_name = {p.name: p for p in params}
        pairs = list(enumerate(params[:len(node.args)])) + \
            [(k.arg, by_name.get(k.arg)) for k in node.keywords]
        return {key for key, p in pairs if p is not None and (
            type(p.annotation) is Template or p.annotation is Template)}

    def _argument(self, node, build, by_reference):
        """A call's argument: what a ti.template() parameter gets (`by_reference`) is the
        expression itself where it is assignable, as Taichi passes it, so a local, a field
        element (`x[i]`, `s[i]`, `v[i]`), a local vector's entry (`tmp[1]`) or a member
        (`s[i].pos`) is read and written through by the func; anything else is its value."""
        if not by_reference or not isinstance(node, (ast.Name, ast.Subscript, ast.Attribute)):
            return build(node)
        place = self.place(node)
        return place if is_lvalue(place) else self.read(place)

    def _callee(self, node):
        """What the call `node` calls, `node.func` built once: for `obj.m(...)` with `m` a
        @ti.dataclass method's name, the method bound by reference to an assignable struct `obj`
        (Taichi passes a func's `self` defined in a class body as a ti.template()); `v.fill`
        writing through an assignable vector or matrix; a dynamic node's `append`, `length`,
        `deactivate` (frontend/sparse.py); else `obj.m` of obj's value."""
        f = node.func
        if not isinstance(f, ast.Attribute) or f.attr not in METHOD_NAMES and \
                f.attr not in sparse.METHODS and f.attr != 'fill':
            return self(f)
        if isinstance(f.value, ast.Subscript):
            base, key = self.place(f.value.value), self(f.value.slice)
            method = sparse.dynamic_method(self.read(base), key, f.attr)  # x[i].append(v)
            obj = method or self.index_place(base, key)
        else:
            obj = self.place(f.value)
            method = sparse.dynamic_method(self.read(obj), None, f.attr)  # x.length()
        if method:
            return method
        methods = getattr(getattr(obj, 'stype', None), 'methods', None) or {}
        if _is_struct_lv(obj) and f.attr not in obj.members and f.attr in methods:
            from .func import _BoundFunc  # (as above)
            return _BoundFunc(methods[f.attr], obj)
        if f.attr == 'fill' and isinstance(obj, MatrixLValue):  # v.fill(x), s[i].vel.fill(x)
            return obj.fill
        return self.member(obj, f.attr)

    def build_Call(self, node):
        fn = self._callee(node)
        if getattr(fn, '_vkdiff_atomic', None):
            if len(node.args) != 2:
                raise error(f'{fn.__name__} takes (target, value)')
            if not isinstance(node.args[0], (ast.Name, ast.Subscript, ast.Attribute)):
                raise error('cannot use a non-writable target as the first operand of '
                            f"'{fn.__name__}'", TaichiSyntaxError)
            target = self.lvalue(node.args[0])
            return target.atomic(fn._vkdiff_atomic, self(node.args[1]))
        # the arguments of ti.static(...) / ti.static_assert(...) are in Taichi's static scope
        build = self.static_eval if getattr(fn, '_vkdiff_static_scope', False) else self
        func = getattr(fn, '_vkdiff_func', None)
        refs = self._template_params(func, node) if func else ()
        args = []
        for i, a in enumerate(node.args):
            v = self._argument(a, build, i in refs)
            args.extend(v.value) if isinstance(v, _Starred) else args.append(v)
        kwargs = {}
        for k in node.keywords:
            kwargs[k.arg] = self._argument(k.value, build, k.arg in refs)
        if fn is print:
            return printing.build_print(args, kwargs)
        if isinstance(node.func, ast.Attribute) and node.func.attr == 'format' and \
                isinstance(getattr(fn, '__self__', None), str):
            return printing.format_call(fn.__self__, args, kwargs)
        if func:
            # structs are passed by value: the func gets a local copy it may assign to; what a
            # ti.template() argument names is passed by reference (Taichi: `_reference`)
            args = [_struct_copy(a) for a in args]
            kwargs = {k: _struct_copy(v) for k, v in kwargs.items()}
            loc = current().loc
            try:
                return func.inline(self.kernel, args, kwargs)
            except VkdiffError as e:  # located in the func: show the call site first, as Taichi
                raise with_call_site(e, loc) from None
        if getattr(fn, '_vkdiff_kernel', None):
            raise error('a kernel cannot call another kernel; make the callee a @ti.func')
        if fn in _PY_BUILTINS:
            return _PY_BUILTINS[fn](*args, **kwargs)
        if isinstance(fn, T.DataType):
            return typed_literal(fn, args, kwargs)
        return fn(*args, **kwargs)


def typed_literal(dtype, args, kwargs):
    """`ti.u32(x)` in a kernel, by Taichi's rules: one scalar expression; a run-time value is
    cast, a Python literal becomes a constant of that type and must be of its kind and range."""
    if len(args) != 1 or kwargs:
        raise error('A primitive type can only decorate a single expression.', TaichiSyntaxError)
    x = args[0]
    if not isinstance(x, Value) and not ops.is_number(x):
        raise error('A primitive type cannot decorate an expression with a compound type.',
                    TaichiSyntaxError)
    if isinstance(x, Value) or isinstance(x, (bool, np.bool_)):
        return ops.cast(x, dtype)
    if isinstance(x, (float, np.floating)) and not dtype.is_float:
        raise error('Floating-point literals must be annotated with a floating-point type. '
                    'For type casting, use `ti.cast`.', TaichiTypeError)
    if isinstance(x, (int, np.integer)):
        if not dtype.is_int:
            raise error('Integer literals must be annotated with a integer type. For type '
                        'casting, use `ti.cast`.', TaichiTypeError)
        info = np.iinfo(dtype.np)
        if not info.min <= int(x) <= info.max:
            raise error(f'Integer literal {x} exceeded the range of specified dtype: {dtype}',
                        TaichiTypeError)
    return ops.cast(x, dtype, exact=True)  # ti.f64(1.1) is exact (not an f32 literal first)


class _Starred:
    def __init__(self, value):
        self.value = value


def _py_binop(op, a, b):
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


def _static_truth(v):
    if isinstance(v, Value):
        raise error('an `if` in a list comprehension in a kernel must be a compile-time condition')
    return bool(v)


_PY_BUILTINS = {
    abs: lambda x: ops.unary('abs', x),
    min: lambda *a: ops.reduce('min', a),
    max: lambda *a: ops.reduce('max', a),
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
