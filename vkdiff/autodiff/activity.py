"""Autodiff: activity analysis. A float value is *varied* if it depends on a field that has a
gradient (or a dual, in forward mode), *useful* if a differentiable output (a write into a field
with a gradient) depends on it; only values that are both need derivative code."""
from .. import ir


def _diff(buf, kind):
    return getattr(buf, kind) is not None


def analyse(block, kind='grad'):
    """Returns the set of active statements (values and locals) of a task body."""
    stmts = list(ir.walk(block))
    varied = set()
    changed = True
    while changed:
        changed = False
        for s in stmts:
            if s in varied:
                continue
            v = False
            if s.op == 'gload':
                v = s.dtype.is_float and _diff(s.buf, kind) and not s.attrs.get('stop_grad')
            elif s.op == 'load':
                v = s.args[0] in varied
            elif s.op == 'store':
                if s.args[1] in varied and s.args[0] not in varied:
                    varied.add(s.args[0])
                    changed = True
                continue
            elif s.op == 'atomic':
                v = False
            elif s.dtype is not None and s.dtype.is_float and s.op not in ('const', 'arg', 'random'):
                v = any(a in varied for a in s.args)
            if v:
                varied.add(s)
                changed = True
    useful = set()
    changed = True
    while changed:
        changed = False
        for s in reversed(stmts):
            new = []
            if s.op in ('gstore', 'atomic') and _diff(s.buf, kind):
                new.append(s.value_arg)
            if s in useful:
                if s.op == 'load':
                    new.append(s.args[0])
                elif s.op != 'alloca':
                    new.extend(a for a in s.args if a.dtype is not None and a.dtype.is_float)
            if s.op == 'store' and s.args[0] in useful:
                new.append(s.args[1])
            for a in new:
                if a not in useful:
                    useful.add(a)
                    changed = True
    return varied & useful
