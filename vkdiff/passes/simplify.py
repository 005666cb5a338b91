"""Pass: simplification on the IR. Forwards locals that are stored once (so `n = N * 2` is a plain
value, not memory), folds constants, and removes dead code."""
import numpy as np

from .. import ir
from ..optable import OPS

REMOVABLE = ir.PURE | {'gload', 'load', 'alloca'}


def uses(block):
    count = {}
    for s in ir.walk(block):
        for a in s.args:
            count[a] = count.get(a, 0) + 1
    return count


def replace_uses(block, mapping):
    if not mapping:
        return
    for s in ir.walk(block):
        s.args = [_resolve(mapping, a) for a in s.args]


def _resolve(mapping, a):
    while a in mapping:
        a = mapping[a]
    return a


def remove(stmt):
    stmt.parent.stmts.remove(stmt)


def _top_ancestor(stmt, block):
    """The statement of `block` that contains `stmt` (or stmt itself)."""
    s = stmt
    while s.parent is not block:
        owner = s.parent.owner if s.parent is not None else None
        if owner is None:
            return None
        s = owner
    return s


def forward_single_stores(block):
    loads, stores = {}, {}
    for s in ir.walk(block):
        if s.op == 'load':
            loads.setdefault(s.args[0], []).append(s)
        elif s.op == 'store':
            stores.setdefault(s.args[0], []).append(s)
    mapping = {}
    for s in list(ir.walk(block)):
        if s.op != 'alloca' or len(stores.get(s, ())) != 1:
            continue
        st = stores[s][0]
        home = s.parent
        if st.parent is not home:
            continue
        pos = home.stmts.index(st)
        ok = True
        for ld in loads.get(s, ()):
            anc = _top_ancestor(ld, home)
            if anc is None or home.stmts.index(anc) <= pos:
                ok = False
                break
        if not ok:
            continue
        for ld in loads.get(s, ()):
            mapping[ld] = st.args[1]
            remove(ld)
        remove(st)
        remove(s)
    replace_uses(block, mapping)


# binary ops folded on constants of the operands' numpy type: the op table's host functions
_FOLD = {name: OPS[name].host for name in ('add', 'sub', 'mul', 'min', 'max', 'lt', 'le', 'gt',
                                           'ge', 'eq', 'ne')}


def fold_constants(block):
    mapping = {}
    for s in list(ir.walk(block)):
        args = [_resolve(mapping, a) for a in s.args]
        if not args or not all(a.op == 'const' for a in args):
            continue
        vals = [a.attrs['value'] for a in args]
        r = None
        with np.errstate(all='ignore'):
            if s.op in _FOLD and s.dtype.np is not None:
                t = args[0].dtype.np
                r = _FOLD[s.op](t.type(vals[0]), t.type(vals[1]))
            elif s.op == 'floordiv' and s.dtype.is_int and vals[1] != 0:
                r = vals[0] // vals[1]
            elif s.op == 'mod' and s.dtype.is_int and vals[1] != 0:
                r = vals[0] % vals[1]
            elif s.op == 'cast' and s.dtype.np is not None and not s.dtype.is_bool:
                r = np.array(vals[0]).astype(s.dtype.np)[()] if not (
                    args[0].dtype.is_float and s.dtype.is_int) else np.array(np.trunc(vals[0])).astype(s.dtype.np)[()]
            elif s.op == 'neg':
                r = -args[0].dtype.np.type(vals[0]) if args[0].dtype.np is not None else None
        if r is None:
            continue
        c = ir.const(r.item() if hasattr(r, 'item') else r, s.dtype)
        c.loc = s.loc
        s.parent.stmts[s.parent.stmts.index(s)] = c
        c.parent = s.parent
        mapping[s] = c
    replace_uses(block, mapping)


def eliminate_dead_code(block):
    changed = True
    while changed:
        changed = False
        count = uses(block)
        for s in list(ir.walk(block)):
            if s.op in REMOVABLE and count.get(s, 0) == 0:
                remove(s)
                changed = True
        # locals that are only written
        loaded = {s.args[0] for s in ir.walk(block) if s.op == 'load'}
        for s in list(ir.walk(block)):
            if s.op == 'store' and s.args[0] not in loaded:
                remove(s)
                changed = True
        # empty ifs
        for s in list(ir.walk(block)):
            if s.op == 'if' and not s.blocks[0].stmts and not s.blocks[1].stmts:
                remove(s)
                changed = True


def simplify(block):
    forward_single_stores(block)
    fold_constants(block)
    eliminate_dead_code(block)
    return block
