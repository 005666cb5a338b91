"""Frontend floor: `for` loops. The outermost loops of a kernel become parallel `parfor`s (range,
ndrange, struct-for over a field, ti.grouped); inner loops run serially; `ti.static` loops unroll."""
import ast
import builtins
import contextlib

from .. import ir
from .. import types as T
from ..errors import TaichiSyntaxError
from ..lang.field import Field, SNode
from ..lang.matrix import Vector
from ..lang import hooks, sparse as sparse_layout
from . import ops, sparse
from .argarray import ArgArray
from .compiletime import Grouped, NDRange, Static, _StaticBreak, _StaticContinue, _is_struct_field
from .context import Value, emit, error, current
from .lvalues import field_lvalue
from . import blockpool, dynpool


def _bounds_of_range(fb, call):
    if call.keywords:
        raise error('range() takes no keyword arguments')
    args = [_python_int(fb(a)) for a in call.args]
    for a in args:
        if isinstance(a, Value) and not a.dtype.is_int:
            raise error('range() bounds must be integers')
        if not isinstance(a, Value) and not isinstance(a, int):
            raise error(f'range() bounds must be integers, got {a!r}')
    if len(args) == 1:
        return 0, args[0], 1
    if len(args) == 2:
        return args[0], args[1], 1
    if len(args) == 3:
        if isinstance(args[2], Value) or args[2] == 0:
            raise error('the step of range() must be a non-zero compile-time integer')
        return args[0], args[1], args[2]
    raise error('range() takes 1 to 3 arguments')


def _python_int(a):
    """numpy integers (and 0-d integer arrays) as range() bounds are Python ints."""
    import numpy as np
    if isinstance(a, (np.integer, np.ndarray)) and np.ndim(a) == 0 and \
            np.issubdtype(np.asarray(a).dtype, np.integer):
        return int(a)
    return a


def _target_names(target):
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts):
        return [e.id for e in target.elts]
    raise error('the loop target must be a name or a tuple of names')


def build_for(fb, node):
    if node.orelse:
        raise error('for ... else is not supported')
    config, current().loop_config = current().loop_config, None  # ti.loop_config: this loop only
    it_node = node.iter
    _check_decorators(fb, it_node)
    # range(...) is read specially so that run-time bounds are allowed
    if isinstance(it_node, ast.Call) and isinstance(it_node.func, ast.Name) and \
            fb.lookup(it_node.func.id) is builtins.range:
        _check_loop_vars(fb, node.target)
        lo, hi, step = _bounds_of_range(fb, it_node)
        dims, grouped, it = [(lo, hi, step)], False, None
    else:
        it = fb(it_node)
        if isinstance(it, Static):
            return _static_for(fb, node, it.value)
        grouped = isinstance(it, Grouped)
        if grouped:
            it = it.target
        if _is_struct_field(it):  # `for i in s`: over its first member's cells
            it = it._first_field()
        if isinstance(it, Field):
            guards = sparse_layout.guards_of(it)
            _check_loop_vars(fb, node.target)  # Taichi checks range- and struct-for targets
            # storage indices from 0 (what the sparse masks are indexed by); `offset=` is
            # added where the loop variables are bound
            dims = [(0, n, 1) for n in it.shape]
        elif isinstance(it, SNode) and it.levels and it._below is not None:  # x.parent(2): cells
            _check_loop_vars(fb, node.target)
            dims = [(0, n, 1) for n in it.shape]  # the node's own cells (Taichi's indices)
            guards = sparse_layout.guards_of_node(it)
        elif isinstance(it, ArgArray):  # an ndarray argument: its run-time shape
            dims = [(0, n, 1) for n in it.shape]
        elif isinstance(it, NDRange):
            dims = [(lo, hi, 1) for lo, hi in it.bounds]
        elif isinstance(it, range):
            dims = [(it.start, it.stop, it.step)]
        else:
            raise error(f'cannot loop over {type(it).__name__} in a kernel (use range, ti.ndrange, '
                        'a field, or ti.static(...) to unroll)')
    names = _target_names(node.target)
    offset = it.offset if isinstance(it, Field) else None
    if not isinstance(it, (Field, SNode)):
        guards = ()
    if grouped:
        if len(names) != 1:
            raise error('ti.grouped loops bind one index vector')
    elif len(names) != len(dims) and isinstance(it, NDRange):
        raise error('Ndrange for loop with number of the loop variables not equal to the dimension '
                    'of the ndrange is not supported (use ti.grouped(ti.ndrange(...)) for one '
                    'index vector)', TaichiSyntaxError)
    elif len(names) != len(dims):
        raise error(f'the loop binds {len(names)} names but iterates over {len(dims)} dimensions')
    parallel = fb.loop_depth == 0 and not fb.in_parfor and fb.top_level and not fb.folded_if and \
        not (config and config['serialize'])
    if parallel:
        _parallel_for(fb, node, names, dims, grouped, config, guards, offset)
    else:
        _serial_for(fb, node, names, dims, grouped, guards, offset)


def _decorator(fb, node):
    """'static', 'grouped' or 'ndrange' when `node` calls ti.static/ti.grouped/ti.ndrange. Only
    a callee named by a dotted name is looked up (the call itself is built by the caller: a
    callee like `s[f()].m` would run f twice)."""
    if not isinstance(node, ast.Call):
        return ''
    name = node.func
    while isinstance(name, ast.Attribute):
        name = name.value
    if not isinstance(name, ast.Name):
        return ''
    try:
        fn = fb(node.func)
    except Exception:
        return ''
    return getattr(fn, '_vkdiff_marker', '') if callable(fn) else ''  # (frontend/compiletime.py)


def _check_decorators(fb, it_node):
    """Taichi's rules on nesting ti.static / ti.grouped / ti.ndrange in a loop's iterable."""
    outer = _decorator(fb, it_node)
    if not outer or len(it_node.args) != 1:
        return
    inner = _decorator(fb, it_node.args[0])
    bad = {('static', 'static'): "'ti.static' cannot be nested",
           ('grouped', 'static'): "'ti.static' is not allowed inside 'ti.grouped'",
           ('grouped', 'grouped'): "'ti.grouped' cannot be nested"}.get((outer, inner))
    if outer == 'ndrange' and inner:
        bad = "No decorator is allowed inside 'ti.ndrange'"
    if bad:
        raise error(bad, TaichiSyntaxError)


def _check_loop_vars(fb, target):
    """Taichi's rule: a range-for or struct-for target must be a new name."""
    for name in _target_names(target):
        if any(name in sc for sc in fb.scopes):
            raise error(f"Variable '{name}' is already declared in the outer scope and cannot be "
                        'used as loop variable', TaichiSyntaxError)


@hooks.provides('fill_in_kernel')  # (Field.fill called in a kernel: lang/field.py)
def fill_in_kernel(field, value):
    """`x.fill(v)` in kernel code: a loop over every element of the field storing v (parallel
    when written at the kernel's top level)."""
    em = current()
    dims = [(0, n, 1) for n in field.shape]
    counts, total = _flat_count(dims)
    body = ir.Block()
    if em.blocks[-1] is em.kernel_ir.body:
        loop = emit('parfor', T.i32, [ops.as_value(total, T.i32)], blocks=[body])
    else:
        loop = emit('for', T.i32, [ops.as_value(0, T.i32), ops.as_value(total, T.i32)],
                    attrs={'step': 1}, blocks=[body])
    with em.open(body):
        idx = _unflatten(Value(loop), dims, counts)
        with sparse.only_active(sparse_layout.guards_of(field), idx):  # (Taichi: a struct-for)
            field_lvalue(field, [ops.as_value(i, T.i32).stmt for i in idx]).store(value)


def _bind_indices(fb, names, idx, grouped, offset=None):
    if offset:  # a field's `offset=`: the loop runs over storage indices from 0
        idx = [ops.binary('add', i, o) if o else i for i, o in zip(idx, offset)]
    if grouped:
        fb.scopes[-1][names[0]] = Vector(idx)
    else:
        for n, v in zip(names, idx):
            fb.scopes[-1][n] = v


def _trip_count(lo, hi, step):
    if step > 0:
        return ops.binary('max', ops.binary('floordiv', ops.binary('add', ops.binary('sub', hi, lo),
                                                                      step - 1), step), 0)
    return ops.binary('max', ops.binary('floordiv', ops.binary('add', ops.binary('sub', lo, hi),
                                                                  -step - 1), -step), 0)


def _flat_count(dims):
    """Trip count of each dimension, and of all of them together (one flat loop)."""
    counts = [_trip_count(lo, hi, step) for lo, hi, step in dims]
    total = counts[0] if counts else 1  # a 0-D field: one iteration
    for c in counts[1:]:
        total = ops.binary('mul', total, c)
    return counts, total


def _unflatten(lin, dims, counts):
    """The loop indices of the flat iteration number `lin` (last dimension fastest)."""
    idx = []
    stride = 1
    for d in reversed(range(len(dims))):
        (lo, _, step), c = dims[d], counts[d]
        k = ops.binary('floordiv', lin, stride) if not (ops.is_number(stride) and stride == 1) else lin
        if d > 0:
            k = ops.binary('mod', k, c)
        idx.append(ops.binary('add', lo, ops.binary('mul', k, step)) if step != 1 else
                   ops.binary('add', lo, k) if not (ops.is_number(lo) and lo == 0) else k)
        stride = ops.binary('mul', stride, c)
    idx.reverse()
    return idx


def _parallel_for(fb, node, names, dims, grouped, config=None, guards=(), offset=None):
    g = dynpool.struct_for_plan(guards, dims)
    if g is not None:  # a pooled dynamic node's lists, tile by tile (frontend/dynpool.py)
        return dynpool.struct_for(fb, node, names, grouped, guards, g, offset)
    g = blockpool.struct_for_plan(guards, dims)
    if g is not None:  # a pooled pointer's blocks given out (frontend/blockpool.py)
        return _pooled_struct_for(fb, node, names, dims, grouped, guards, g, offset)
    plan = sparse_layout.block_plan(guards, [hi for _, hi, _ in dims]) \
        if guards and all(lo == 0 and st == 1 for lo, _, st in dims) else None
    if plan is not None:  # one invocation per sparse cell (lang/sparse.block_plan)
        return _block_struct_for(fb, node, names, dims, grouped, guards, plan, offset)
    counts, total = _flat_count(dims)
    body = ir.Block()
    loop = emit('parfor', T.i32, [ops.as_value(total, T.i32)], blocks=[body])
    with current().open(body), _loop_body(fb, 'parallel'):
        idx = _unflatten(Value(loop), dims, counts)
        _bind_indices(fb, names, idx, grouped, offset)
        with sparse.only_active(guards, idx):  # a struct-for under sparse nodes
            fb.build_body(node.body)
    if any(s.op in _LANE_OPS or (s.buf is not None and s.buf.role == 'shared')
           for s in ir.walk(body)):
        # ti.simt.block / warp: the block of B consecutive iterations is one workgroup of B
        # invocations, one iteration each (so the lanes of a subgroup are consecutive ones)
        bd = (config or {}).get('block_dim') or 128
        if not isinstance(bd, int) or not 1 <= bd <= 1024:
            raise error(f'ti.loop_config(block_dim=...) must be an integer in [1, 1024], got {bd!r}')
        loop.attrs['block_dim'] = bd


# ops whose result depends on which iterations share a workgroup or subgroup (ti.simt.block's
# barriers and ids, ti.simt.warp / subgroup lane operations); not sg_reduce / sg_elect, which the
# dynamic-pool writes emit for any loop (frontend/dynpool.py)
_LANE_OPS = frozenset(('barrier', 'local_index', 'global_index', 'sg_shuffle', 'sg_ballot',
                       'sg_barrier', 'sg_vote', 'sg_all_equal', 'sg_broadcast_first',
                       'sg_invocation_id', 'sg_size'))


def _pooled_struct_for(fb, node, names, dims, grouped, guards, g, offset):
    """A struct-for under a pooled pointer: one iteration per element of each block given
    out, skipping blocks no longer live (frontend/blockpool.walk_blocks)."""
    total, blocks = blockpool.walk_blocks(g, [hi for _, hi, _ in dims])
    body = ir.Block()
    loop = emit('parfor', T.i32, [total], blocks=[body])
    with current().open(body), _loop_body(fb, 'parallel'):
        live, idx = blocks(Value(loop), lambda v, ext: _unflatten(v, [(0, n, 1) for n in ext],
                                                                   list(ext)))
        then_b, else_b = ir.Block(), ir.Block()
        emit('if', None, [ops.to_bool(live)], blocks=[then_b, else_b])
        with current().open(then_b):
            _bind_indices(fb, names, idx, grouped, offset)
            with sparse.only_active(guards[:-1], idx):
                fb.build_body(node.body)


def _block_struct_for(fb, node, names, dims, grouped, guards, plan, offset=None):
    """A struct-for under pointer/bitmasked nodes: a parallel loop over the deepest node's
    cells, each checked once, and inside an active one a serial loop over its elements."""
    deep, steps = plan
    cells = deep.store.shape
    body = ir.Block()
    total = 1
    for c in cells:
        total *= c
    loop = emit('parfor', T.i32, [ops.as_value(total, T.i32)], blocks=[body])
    with current().open(body), _loop_body(fb, 'parallel'):
        cell = _unflatten(Value(loop), [(0, c, 1) for c in cells], list(cells))
        base = [0] * len(dims)
        for (p, s), c in zip(deep.cell, cell):
            base[p] = ops.binary('mul', c, s)
        with sparse.only_active(guards, base):
            inner_dims = [(0, hi if s is None else s, 1) for (_, hi, _), s in zip(dims, steps)]
            counts, n = _flat_count(inner_dims)
            inner = ir.Block()
            loop2 = emit('for', T.i32, [ops.as_value(0, T.i32), ops.as_value(n, T.i32)],
                         attrs={'step': 1}, blocks=[inner])
            with current().open(inner):
                r = _unflatten(Value(loop2), inner_dims, counts)
                idx = [k if s is None else ops.binary('add', b, k)
                       for k, b, s in zip(r, base, steps)]
                _bind_indices(fb, names, idx, grouped, offset)
                fb.build_body(node.body)


@contextlib.contextmanager
def _loop_body(fb, kind):
    """The scope and loop bookkeeping around one run-time loop body ('parallel' or 'serial')."""
    fb.scopes.append({})
    fb.loops.append(kind)
    if kind == 'parallel':
        fb.in_parfor = True
    else:
        fb.loop_depth += 1
    try:
        yield
    finally:
        fb.loops.pop()
        if kind == 'parallel':
            fb.in_parfor = False
        else:
            fb.loop_depth -= 1
        fb.scopes.pop()


def _serial_for(fb, node, names, dims, grouped, guards=(), offset=None):
    """One run-time loop; several dimensions are flattened into it, so that `break` leaves the
    whole loop as in Python."""
    if len(dims) == 1:
        lo, hi, step = dims[0]
    else:
        counts, total = _flat_count(dims)
        lo, hi, step = 0, total, 1
    body = ir.Block()
    loop = emit('for', T.i32, [ops.as_value(lo, T.i32), ops.as_value(hi, T.i32)],
                attrs={'step': int(step)}, blocks=[body])
    with current().open(body), _loop_body(fb, 'serial'):
        idx = [Value(loop)] if len(dims) == 1 else _unflatten(Value(loop), dims, counts)
        _bind_indices(fb, names, idx, grouped, offset)
        with sparse.only_active(guards, idx):
            fb.build_body(node.body)


def _static_for(fb, node, iterable):
    names = _target_names(node.target)
    fb.static_depth += 1
    fb.loops.append(('static', len(current().blocks)))
    try:
        for item in iterable:
            fb.scopes.append({})
            try:
                if len(names) == 1:
                    fb.scopes[-1][names[0]] = item
                else:
                    vals = list(item.entries if hasattr(item, 'entries') else item)
                    if len(vals) != len(names):
                        raise error(f'cannot unpack {len(vals)} values into {len(names)} names')
                    for n, v in zip(names, vals):
                        fb.scopes[-1][n] = v
                fb.build_body(node.body)
            except _StaticContinue:
                pass
            except _StaticBreak:
                break
            finally:
                fb.scopes.pop()
    finally:
        fb.loops.pop()
        fb.static_depth -= 1
