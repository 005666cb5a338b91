"""The typed IR that every stage shares: statements in nested blocks, printable.

A statement is a node `Stmt(op, dtype, args, attrs, blocks)`; its value (if any) is the statement
itself, referenced by later statements through `args`. Locals are memory (`alloca`/`load`/`store`),
so control flow needs no phi nodes; spirv-opt turns them into registers.

Ops (args in brackets; attrs after the bar):
  const | value            arg | index            random | -          (values)
  unary and binary ops [a] / [a, b]: the op table's (vkdiff/optable.py: sin, add, lt, ...)
  cast [a] | -   bitcast [a] | -   select [c, a, b]
  alloca | size? (dtype is the element type; with `size`, a per-thread array)
  load [var]    store [var, value]    aload [array, index]    astore [array, index, value]
  gload [*indices] | buf, comp            gstore [*indices, value] | buf, comp
  atomic [*indices, value] | buf, comp, fn (add sub min max band bor bxor); value is the old one
  if [cond] blocks=[then, else]
  for [begin, end] | step; blocks=[body]; the stmt's value is the loop variable inside its body
  while blocks=[body] (exits by `break`)     break    continue
  parfor [total] blocks=[body]; value = the linear iteration index (top level only)
  local_index, group_index, group_count: the invocation's index in its workgroup, the
  workgroup's index, the number of workgroups launched (reductions, ti.simt.block)
  sg_* (subgroup operations), device_fence, global_index: codegen/subgroup.py lists them
  ret [value]
  print [*values] | text, specs: prints text[0] v0 text[1] v1 ... (values by their printf
      specifiers; frontend/printing.py); lowered to device-log appends (passes/device_log.py)
  check [cond, *values] | message, exc?: ti.init(debug=True)'s `assert` and run-time component
      index checks (exc='index'), lowered by passes/debug_checks.py

Global memory is named by `Buffer`s (a user field, its gradient or dual, a compiler temporary, a
kernel argument array): the compiler creates and reads Buffers only; the API layer binds each to
device storage at launch.
"""
import math

import numpy as np

from . import types as T
from .optable import UNARY, BINARY, COMPARE, PURE  # noqa: F401  views of the op table

GLOBAL_ACCESS = {'gload', 'gstore', 'atomic'}


class ElementShape:
    """`n`, `m` and `ncomp` of an array of `elem_shape` elements (() scalars, (n,) vectors,
    (n, m) matrices): a Buffer, and the API's fields and ndarray arguments."""
    __slots__ = ()

    @property
    def n(self):
        return self.elem_shape[0] if self.elem_shape else 1

    @property
    def m(self):
        return self.elem_shape[1] if len(self.elem_shape) > 1 else 1

    @property
    def ncomp(self):
        return math.prod(self.elem_shape)


class Buffer(ElementShape):
    """An array of global memory the IR reads and writes: `shape` (None while a field is not
    placed yet) of elements of `elem_shape` components of `dtype`, row-major (or, for a field
    stored in its SNode nesting order, element `sum(index * meta['strides'])`), components
    innermost. `role` says what it is: 'field' (a user field), 'grad' / 'dual' (the gradient /
    tangent of `primal`), 'temp' (a compiler temporary: kernel-scope locals shared between tasks,
    reduction partials, autodiff bookkeeping), 'arg' (a kernel argument array, bound per
    launch) or 'shared' (a ti.simt.block.SharedArray: workgroup memory, never bound). `grad` / `dual` link to the derived Buffers, `primal` back. `meta` holds what a pass
    wants to pass on (e.g. `overflow_loc`). Compared and hashed by identity; no device state."""

    __slots__ = ('name', 'dtype', 'shape', 'elem_shape', 'role', 'grad', 'dual', 'primal', 'meta',
                 '__weakref__')
    ROLES = ('field', 'grad', 'dual', 'temp', 'arg', 'shared')

    def __init__(self, name, dtype, shape=(), elem_shape=(), role='temp', primal=None, meta=None):
        if role not in self.ROLES:
            raise ValueError(f'Buffer role {role!r} is not one of {self.ROLES}')
        self.name = name
        self.dtype = dtype
        self.shape = None if shape is None else tuple(shape)
        self.elem_shape = tuple(elem_shape)
        self.role = role
        self.grad = self.dual = None
        self.primal = primal
        self.meta = dict(meta or {})

    @property
    def is_temp(self):
        """A compiler temporary (not a user's data; the API layer allocates its storage)."""
        return self.role == 'temp'

    @property
    def is_bookkeeping(self):
        """Run-time bookkeeping, not differentiable data (a sparse node's activation mask or
        list length, meta['bookkeeping']): the autodiff access rules do not apply to it."""
        return bool(self.meta.get('bookkeeping'))

    def derive(self, kind):
        """A new gradient ('grad') or tangent ('dual') Buffer of this one, linked both ways."""
        d = Buffer(f'{self.name}.{kind}', self.dtype, self.shape, self.elem_shape, kind, self)
        if 'strides' in self.meta:  # (its element order: lang/layout.py)
            d.meta['strides'] = self.meta['strides']
        setattr(self, kind, d)
        return d

    def __repr__(self):
        return f'Buffer({self.name}: {self.role} {self.dtype} {self.shape} {self.elem_shape})'


class Stmt:
    __slots__ = ('op', 'dtype', 'args', 'attrs', 'blocks', 'loc', 'parent', 'id')
    _counter = 0

    def __init__(self, op, dtype=None, args=(), attrs=None, blocks=(), loc=None):
        self.op = op
        self.dtype = dtype
        self.args = list(args)
        self.attrs = dict(attrs or {})
        self.blocks = list(blocks)
        for b in self.blocks:
            b.owner = self
        self.loc = loc
        self.parent = None  # the Block holding this statement
        Stmt._counter += 1
        self.id = Stmt._counter

    # --- convenient accessors for global accesses
    @property
    def buf(self):
        return self.attrs.get('buf')

    @property
    def indices(self):
        if self.op == 'gload':
            return self.args
        return self.args[:-1]

    @property
    def value_arg(self):
        return self.args[-1]

    def __repr__(self):
        return f'%{self.id}'


class Block:
    __slots__ = ('stmts', 'owner')

    def __init__(self, stmts=None):
        self.stmts = []
        self.owner = None
        for s in stmts or ():
            self.append(s)

    def append(self, stmt):
        stmt.parent = self
        self.stmts.append(stmt)
        return stmt

    def insert(self, i, stmt):
        stmt.parent = self
        self.stmts.insert(i, stmt)
        return stmt

    def __iter__(self):
        return iter(self.stmts)

    def __len__(self):
        return len(self.stmts)


def walk(block):
    """Every statement in a block, depth first, in program order. (A stack of the open blocks'
    iterators rather than nested generators: the compiler walks IR a great deal, and each level
    of `yield from` costs every statement below it a resumption.)"""
    stack = [iter(block.stmts)]
    while stack:
        for s in stack[-1]:
            yield s
            if s.blocks:
                stack.extend([iter(b.stmts) for b in reversed(s.blocks)])
                break
        else:
            stack.pop()


def dependencies(roots):
    """The statements `roots` are computed from (themselves included), in dependency order."""
    order, seen = [], set()

    def visit(x):
        if x in seen:
            return
        seen.add(x)
        for a in x.args:
            visit(a)
        order.append(x)
    for r in roots:
        visit(r)
    return order


def upstream(roots, descend=None):
    """Each statement `roots` are computed from (themselves included) once, depth first, so a
    caller may stop early; with `descend`, only the operands of statements x with descend(x)
    are followed."""
    seen, stack = set(), list(roots)
    while stack:
        x = stack.pop()
        if x in seen:
            continue
        seen.add(x)
        yield x
        if descend is None or descend(x):
            stack.extend(x.args)


def enclosing(stmt, ops):
    """The nearest enclosing statement whose op is in `ops`, or None."""
    b = stmt.parent
    while b is not None and b.owner is not None:
        if b.owner.op in ops:
            return b.owner
        b = b.owner.parent
    return None


def clone_block(block, mapping):
    """Deep-copy a block. `mapping` maps old statements to new ones (pre-seed it to rebind
    operands defined outside); it is filled with every copied statement."""
    new = Block()
    for s in block.stmts:
        new.append(clone_stmt(s, mapping))
    return new


def clone_stmt(s, mapping):
    c = Stmt(s.op, s.dtype, [mapping.get(a, a) for a in s.args], s.attrs, loc=s.loc)
    mapping[s] = c
    c.blocks = []
    for b in s.blocks:
        nb = clone_block(b, mapping)
        nb.owner = c
        c.blocks.append(nb)
    if 'var' in c.attrs:
        c.attrs['var'] = mapping.get(c.attrs['var'], c.attrs['var'])
    return c


# ---------------------------------------------------------------- printing
class Names:
    """Print names of statements, numbered 0..n in order of appearance in one print (not the
    process-wide `Stmt.id`), so the same kernel prints the same whatever compiled before. One
    Names may be shared by several blocks printed together (the tasks of a kernel)."""

    def __init__(self):
        self.ids = {}

    def __call__(self, s):
        k = self.ids.get(s)
        if k is None:
            k = self.ids[s] = len(self.ids)
        return f'%{k}'


def _fmt_value(v, names):
    if isinstance(v, Stmt):
        return names(v)
    if isinstance(v, (list, tuple)) and any(isinstance(x, Stmt) for x in v):
        return '[' + ', '.join(_fmt_value(x, names) for x in v) + ']'
    return repr(v)


def _fmt_attr(k, v, names):
    if k == 'buf':
        return f'buf={v.name}'
    return f'{k}={_fmt_value(v, names)}'


def format_block(block, indent=0, out=None, names=None):
    out = [] if out is None else out
    names = Names() if names is None else names
    pad = '  ' * indent
    for s in block.stmts:
        lhs = f'{names(s)}:{s.dtype} = ' if s.dtype is not None else ''
        args = ', '.join(names(a) for a in s.args)
        attrs = ' '.join(_fmt_attr(k, v, names) for k, v in s.attrs.items())
        line = f'{pad}{lhs}{s.op}({args})' + (f' [{attrs}]' if attrs else '')
        out.append(line)
        for i, b in enumerate(s.blocks):
            if s.op == 'if':
                out.append(f'{pad}  {"then" if i == 0 else "else"}:')
                format_block(b, indent + 2, out, names)
            else:
                format_block(b, indent + 1, out, names)
    return out


def format_ir(block, names=None):
    """The block as text; statements named %0, %1... in order of appearance (see Names)."""
    return '\n'.join(format_block(block, names=names))


def const(value, dtype):
    """A constant statement (not attached to any block); a float value is rounded to its type
    (an f32 constant 0.1 is 0.10000000149011612 wherever it is folded or widened)."""
    if dtype.is_float:
        value = float(value)
        if dtype.bits != 64:
            with np.errstate(over='ignore'):  # beyond the type's range: inf, as on the device
                value = float(dtype.np.type(value))
    elif dtype.is_bool:
        value = bool(value)
    else:
        value = int(value)
    return Stmt('const', dtype, attrs={'value': value})


def is_const(s, value=None):
    return s.op == 'const' and (value is None or s.attrs['value'] == value)


BOOL = T.u1
