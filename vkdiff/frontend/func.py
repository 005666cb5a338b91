"""Frontend floor: `@ti.func`, inlined at every call site in a kernel (or in another func), and
`ti.template()`. Binding a call's arguments (`bind_arguments`, shared with `@ti.kernel` in
launch/kernel.py), passing them by value, casting to annotated types, and normalising `return`
statements (allowed last in the body, or last in both branches of a final if/else)."""
import ast
import functools
import inspect

from .. import types as T
from ..errors import TaichiSyntaxError, VkdiffError
from ..lang.matrix import Matrix
from ..lang.ndarray import NdarrayType
from . import ops
from .builder import FunctionBuilder
from .compiletime import _struct_copy
from .context import Value, current, error
from .lvalues import new_local
from .statements import _Return


class Template:
    """`ti.template()`: a compile-time argument (a field, a number, any Python object)."""

    def __repr__(self):
        return 'template()'


def template():
    return Template()


def bind_arguments(sig, args, kwargs, make_error):
    """The arguments of a kernel or func call in parameter order, checked as Taichi does
    (kernel_impl._process_args): too many, unexpected or repeated keywords, missing ones."""
    params = list(sig.parameters.values())
    if any(p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params):
        try:  # *args, **kwargs or keyword-only parameters: Python's own binding
            bound = sig.bind(*args, **kwargs)
        except TypeError as e:
            raise make_error(f'arguments: {e}') from None
        bound.apply_defaults()
        return tuple(bound.arguments.values())
    if len(args) > len(params):
        expected = ', '.join(f'{p.name} : {_annotation_text(p)}' for p in params)
        raise make_error(f'Too many arguments. Expected ({expected}), got '
                         f'({", ".join(str(a) for a in args)}).')
    out = list(args) + [p.default for p in params[len(args):]]
    names = [p.name for p in params]
    for key, value in kwargs.items():
        if key not in names:
            raise make_error(f"Unexpected argument '{key}'.")
        i = names.index(key)
        if i < len(args):
            raise make_error(f"Multiple values for argument '{key}'.")
        out[i] = value
    for p, a in zip(params, out):
        if a is inspect.Parameter.empty:
            raise make_error(f'Parameter `{p.name}` missing.' if p.annotation is
                             inspect.Parameter.empty else
                             f'Parameter `{p.name} : {_annotation_text(p)}` missing.')
    return tuple(out)


def _annotation_text(p):
    a = p.annotation
    return getattr(a, '__name__', None) if isinstance(a, type) else str(a)


class _BoundFunc:
    """A func looked up on an instance (`self.helper(...)` in a kernel method)."""

    def __init__(self, func, obj):
        self._func, self._obj = func, obj
        self._vkdiff_func = self

    def __call__(self, *args, **kwargs):
        return self._func(self._obj, *args, **kwargs)

    def inline(self, kernel_ir, args, kwargs):
        # a struct value's self: an assignable copy (called on a field element or a local, self
        # is that lvalue: frontend._struct_method)
        return self._func.inline(kernel_ir, [_struct_copy(self._obj), *args], kwargs)


class Func:
    """`@ti.func`: inlined at every call site."""

    def __init__(self, fn):
        self.fn = fn
        self.sig = inspect.signature(fn)
        functools.update_wrapper(self, fn)
        self._vkdiff_func = self

    def __call__(self, *args, **kwargs):
        em = current()
        if em is None:
            raise VkdiffError(f'ti.func {self.fn.__name__} can only be called from a kernel or func')
        return self.inline(em.kernel_ir, args, kwargs)  # called from library code (ti.svd...)

    def __get__(self, obj, objtype=None):
        return self if obj is None else _BoundFunc(self, obj)

    def inline(self, kernel_ir, args, kwargs):
        values = bind_arguments(self.sig, args, kwargs, lambda m: error(m, TaichiSyntaxError))
        fb = FunctionBuilder(self.fn, kernel_ir, is_kernel=False)
        fb.top_block = current().blocks[-1]
        fb.top_index = len(fb.top_block.stmts)
        for name, value in zip(self.sig.parameters, values):
            ann = self.sig.parameters[name].annotation
            if isinstance(ann, (Template, NdarrayType)) or ann is Template:
                fb.scopes[0][name] = value
                continue
            if T.is_tensor_type(ann):
                _check_matrix_arg(name, ann, value)
                value = ops.cast(value, T.resolve(ann.dtype))
            elif ann is not inspect.Parameter.empty and not isinstance(ann, str):
                value = ops.cast(value, T.resolve(ann))
            # pass by value: run-time scalars and matrices get a fresh local
            if isinstance(value, Value) or _is_matrix(value):
                fb.scopes[0][name] = new_local(value)
            else:
                fb.scopes[0][name] = value
        body = _normalize_returns(fb.fdef.body)
        try:
            fb.build_body(body)
        except _Return as r:
            return self._cast_return(r.value)
        if fb.result is not None:
            return self._cast_return(fb.result.load())
        ann = self.sig.return_annotation
        if ann is not inspect.Signature.empty and ann is not None:
            raise error('Function has a return type but does not have a return statement',
                        TaichiSyntaxError)
        return None

    def _cast_return(self, value):
        """The returned value in the declared return type (`-> ti.i32` truncates 1.5 to 1)."""
        ann = self.sig.return_annotation
        if T.is_tensor_type(ann):
            ann = ann.dtype
        if value is None or not (isinstance(ann, T.DataType) or ann in (float, int, bool)):
            return value  # no annotation, or a struct / tuple one: returned as built
        dt = T.resolve(ann)
        if _is_matrix(value):
            return value._map(lambda e: ops.cast(e, dt))
        return ops.cast(value, dt)


def _is_matrix(v):
    return isinstance(v, Matrix)


def _check_matrix_arg(name, ann, value):
    """A func parameter annotated with a vector / matrix type takes a matrix of that shape
    (Taichi's TaichiSyntaxError messages)."""
    what = f'Argument {name} of type {ann} is expected to be a Matrix'
    if not _is_matrix(value):
        raise error(f'{what}, but got {type(value)}.', TaichiSyntaxError)
    ndim = 2 if hasattr(ann, 'm') else 1
    if value.ndim != ndim:
        raise error(f'{what} with ndim {ndim}, but got {value.ndim}.', TaichiSyntaxError)
    if ann.n is not None and value.n != ann.n:
        raise error(f'{what} with n {ann.n}, but got {value.n}.', TaichiSyntaxError)
    if ndim == 2 and ann.m is not None and value.m != ann.m:
        raise error(f'{what} with m {ann.m}, but got {value.m}.', TaichiSyntaxError)


def _normalize_returns(body):
    """Return statements: allowed last in the body, or last in both branches of a final if/else;
    `if c: return a` followed by more code becomes if/else. Others are a CompileError."""
    body = list(body)
    for i, s in enumerate(body):
        if isinstance(s, ast.If) and _ends_with_return(s.body) and not s.orelse and i + 1 < len(body):
            s.orelse = body[i + 1:]
            body = body[:i + 1]
            break
    return body


def _ends_with_return(stmts):
    return bool(stmts) and isinstance(stmts[-1], ast.Return)


def func(fn):
    return Func(fn)
