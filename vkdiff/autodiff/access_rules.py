"""Autodiff pass: Taichi's global data access rules, enforced as AccessRuleError (an AutodiffError
and a TaichiAssertionError) instead of a silently
wrong gradient. Checked when an adjoint is built (a forward-only kernel is never rejected).

Rule 1: a field element that is read must not be overwritten later (the adjoint replays the read).
Rule 2: an element written more than once: every write after the first must be an atomic add,
or a plain store (whose adjoint clears the element's gradient: the writes before it are dead);
an in-place `*=`, `max=`... after a write is an error.
Across the launches of a Tape: a launch that overwrites elements an earlier launch read.
Bookkeeping Buffers (Buffer.is_bookkeeping: sparse activation masks and lengths, which a
struct-for reads and a store sets) are not differentiable data and are left out, as in Taichi."""
import collections

from .. import ir
from ..errors import AccessRuleError, located
from ..passes.host_eval import host_eval, host_known


def same_value(a, b, memo=None):
    """Structural equality of two index expressions (parallel loop indices over equal ranges are
    the same element set)."""
    if a is b:
        return True
    if a.op != b.op or a.dtype is not b.dtype:
        return False
    if a.op == 'const':
        return a.attrs['value'] == b.attrs['value']
    if a.op == 'parfor':
        return same_value(a.args[0], b.args[0])
    if a.op in ('for', 'while', 'load', 'random', 'alloca', 'gload', 'atomic'):
        return False
    if a.attrs != b.attrs or len(a.args) != len(b.args):
        return False
    return all(same_value(x, y) for x, y in zip(a.args, b.args))


def _split_offset(x):
    """(base, constant offset) of an index expression, constants gathered through nested adds:
    t + 1 -> (t, 1); 5 -> (None, 5); (2 + t * 6) + 1 -> (t * 6, 3)."""
    if x.op == 'const':
        return None, x.attrs['value']
    if x.op in ('add', 'sub') and x.args[1].op == 'const':
        k = x.args[1].attrs['value']
        base, off = _split_offset(x.args[0])
        return base, (off + k if x.op == 'add' else off - k)
    if x.op == 'add' and x.args[0].op == 'const':
        base, off = _split_offset(x.args[1])
        return base, off + x.args[0].attrs['value']
    return x, 0


def _uniform(x):
    """The same value in every iteration and invocation (constants and kernel arguments)."""
    return all(d.op in ir.PURE for d in ir.dependencies([x]))


def disjoint(a, b):
    """a and b provably touch different elements: different components, or at some index
    position two different constants, or one uniform base with two different offsets (x[t] and
    x[t + 1] with t a kernel argument)."""
    if a.buf is not b.buf or a.attrs.get('comp', 0) != b.attrs.get('comp', 0):
        return True
    for x, y in zip(a.indices, b.indices):
        (bx, ox), (by, oy) = _split_offset(x), _split_offset(y)
        if ox != oy and (bx is None and by is None or
                         bx is not None and by is not None and same_value(bx, by) and _uniform(bx)):
            return True
    return False


def written_before_read(a, b):
    """Read a = x[i + ra] and later write b = x[i + wa] in the body of one serial loop over i:
    the element b writes is read in a later iteration (wa > ra for a rising loop), never before,
    as in a prefix sum `c[i + 1] = c[i] + ...`."""
    for pos, (x, y) in enumerate(zip(a.indices, b.indices)):
        (bx, ra), (by, wa) = _split_offset(x), _split_offset(y)
        if bx is None or bx is not by or bx.op != 'for' or ra == wa:
            continue
        others = all(same_value(p, q) for k, (p, q) in enumerate(zip(a.indices, b.indices)) if k != pos)
        if not others:
            continue
        return wa > ra if bx.attrs['step'] > 0 else wa < ra
    return False


def same_element(a, b):
    if a.buf is not b.buf:
        return False
    if a.attrs.get('comp', 0) != b.attrs.get('comp', 0):
        return False
    return all(same_value(x, y) for x, y in zip(a.indices, b.indices))


def _path(s):
    """[(statement, branch index)] from the outermost enclosing statement down to s."""
    out = []
    while s.parent is not None and s.parent.owner is not None:
        owner = s.parent.owner
        out.append((owner, owner.blocks.index(s.parent)))
        s = owner
    return out[::-1]


def exclusive(a, b):
    """a and b sit in different branches of one `if`: never both executed."""
    pa, pb = _path(a), _path(b)
    for (sa, ba), (sb, bb) in zip(pa, pb):
        if sa is not sb:
            return False
        if ba != bb:
            return sa.op == 'if'
    return False


def _kind(s):
    if s.op == 'gload':
        return 'read'
    if s.op == 'gstore':
        return 'write'
    return 'accumulate' if s.attrs['fn'] in ('add', 'sub') else 'write'


def _describe(s):
    return f'line {s.loc.line}' if s.loc else 'an earlier statement'


def check_rules(tasks, kernel_name):
    accesses = [s for t in tasks for s in ir.walk(t.body) if s.op in ('gload', 'gstore', 'atomic')
                and s.buf.primal is None and not s.buf.is_bookkeeping]
    for i, a in enumerate(accesses):
        ka = _kind(a)
        for b in accesses[i + 1:]:
            kb = _kind(b)
            if kb == 'read' or disjoint(a, b) or exclusive(a, b) or written_before_read(a, b):
                continue
            name = a.buf.name
            if ka != 'read' and not (kb == 'write' and same_element(a, b)):
                continue  # an accumulation after a write: rule 2 allows it
            if ka != 'read' and b.op == 'gstore' and not a.buf.is_temp:
                continue  # a plain store after writes: its adjoint takes the element's gradient
                #           and clears it, so the dead writes before it get none (as in Taichi)
            if a.buf.is_temp:
                raise located(AccessRuleError,
                              f'in kernel {kernel_name}, a kernel-scope variable shared between its '
                              f'loops is assigned again after it was {"read" if ka == "read" else "set"} '
                              f'({_describe(a)}); the adjoint would replay its last value. Assign the '
                              'new value to a new variable.', b.loc)
            if ka == 'read':  # any element it may have read (conservative: not provably others)
                raise located(AccessRuleError,
                              f'global data access rule 1 broken in kernel {kernel_name}: {name} is read '
                              f'({_describe(a)}) and then overwritten here; the gradient would be '
                              'wrong. Write the result to another field.', b.loc)
            if kb == 'write' and same_element(a, b):
                raise located(AccessRuleError,
                              f'global data access rule 2 broken in kernel {kernel_name}: {name} is '
                              f'written ({_describe(a)}) and written again here by something other '
                              'than an atomic add (+=); the gradient would be wrong.', b.loc)


# ---------------------------------------------------------------- across Tape launches
def launch_summary(inst, args, written=None):
    """(writes, reads) of one launch of compiled kernel `inst`: lists of (Buffer, kind, index
    pattern, stmt); a pattern entry is an int where the index is known on the host (constants,
    kernel arguments) and None where it varies. Reads of Buffers outside `written` (a frozenset:
    the Buffers the Tape's launches may overwrite), when given, are left out.
    Which accesses and indices to evaluate is worked out once per kernel instance (a long Tape
    checks thousands of launches, and replays the same ones every iteration): constants are
    folded, accesses with the same pattern merged, each index made from kernel arguments is
    evaluated once per launch, and summaries are remembered by those values."""
    plan = _plan(inst)
    dynamic, exprs, memo = plan.dynamic, plan.exprs, plan.memo
    vals = tuple([_safe_eval(x, args) for x in exprs]) if dynamic else ()
    key = (vals, written)
    out = memo.get(key)
    if out is None:
        val = dict(zip(exprs, vals))
        writes, reads = plan.split
        # (an index pattern without run-time values is the plan's own tuple)
        out = ([(f, kind, tuple([val[x] if x.__class__ is ir.Stmt else x for x in idx])
                 if var else idx, s) for f, kind, idx, s, var in writes],
               [(f, kind, tuple([val[x] if x.__class__ is ir.Stmt else x for x in idx])
                 if var else idx, s) for f, kind, idx, s, var in reads
                if written is None or f in written])
        if len(memo) > 4096:
            memo.clear()
        memo[key] = out
    return out


# what launch_summary works out once per kernel instance: whether indices depend on kernel
# arguments, those index expressions, summaries by their values, the Buffers written, and the
# (writes, reads) entries each marked when its pattern holds run-time values
_Plan = collections.namedtuple('_Plan', 'dynamic exprs memo written split')


def _plan(inst):
    plan = getattr(inst, '_access_plan', None)
    if plan is None:
        seen, entries, dynamic, exprs = set(), [], False, {}
        for t in inst.tasks:
            for s in ir.walk(t.body):
                if (s.op not in ('gload', 'gstore', 'atomic') or s.buf.primal is not None
                        or s.buf.is_bookkeeping):
                    continue
                idx = []
                for x in s.indices:
                    if not host_known(x):
                        idx.append(None)
                    elif any(d.op == 'arg' for d in ir.dependencies([x])):
                        idx.append(exprs.setdefault(_shape(x), x))
                        dynamic = True
                    else:
                        idx.append(_safe_eval(x, ()))
                key = (s.buf, _kind(s), tuple(i if not isinstance(i, ir.Stmt) else _shape(i)
                                                for i in idx))
                if key not in seen:
                    seen.add(key)
                    entries.append((s.buf, _kind(s), tuple(idx), s))
                    if s.op == 'atomic' and s.attrs['fn'] in ('max', 'min'):
                        # its adjoint reads the value it left: a later accumulation breaks it
                        entries.append((s.buf, 'extremum', tuple(idx), s))
        # the writes and the reads, each marked when its index pattern holds run-time values
        split = tuple([e + (any(x.__class__ is ir.Stmt for x in e[2]),) for e in entries
                       if e[1] in kinds] for kinds in (('write', 'accumulate'), ('read', 'extremum')))
        plan = inst._access_plan = _Plan(dynamic, list(exprs.values()), {},
                                         frozenset(e[0] for e in entries if e[1] == 'write'), split)
    return plan


def has_adjoint(inst):
    """Does the adjoint of kernel instance `inst` do anything? Only where it writes or
    accumulates into a user's Buffer that has a gradient (or an argument array, whose gradient is
    bound per launch). A launch that writes only integer or gradient-less fields (sorting keys,
    counting) propagates nothing back, so what it read may be overwritten after it."""
    bufs = getattr(inst, '_written_user_buffers', None)
    if bufs is None:  # (the IR's part once per instance; whether a gradient exists, each time)
        bufs = inst._written_user_buffers = tuple({
            s.buf: None for t in inst.tasks for s in ir.walk(t.body)
            if s.op in ('gstore', 'atomic') and s.buf.primal is None and
            not s.buf.is_bookkeeping and not s.buf.is_temp})
    return any(b.grad is not None or b.role == 'arg' for b in bufs)


def written_fields(inst):
    """The Buffers a kernel instance (anything with `.tasks`) may overwrite (not accumulate
    into)."""
    return _plan(inst).written


def _shape(x):
    """A hashable structural form of a host-known expression (equal forms, equal values)."""
    a = x.attrs.get('value', x.attrs.get('index'))
    return (x.op, a, tuple(_shape(y) for y in x.args))


def _safe_eval(x, args):
    try:
        return host_eval(x, args)
    except Exception:
        return None


def _overlap(p, q):
    return all(a is None or b is None or a == b for a, b in zip(p, q))


def _breaks(read, kind, write):
    """Whether a later write (`kind` 'write' or 'accumulate', statement `write`) changes what
    the adjoint of an earlier `read` needs: for a read, any overwrite; for an atomic max/min
    (whose adjoint reads the value it left) an accumulation or an atomic of another kind, not a
    plain store (its adjoint clears the gradient) nor another atomic of the same kind (the
    latest launch that reached the result wins, autodiff/extremum.py)."""
    if read.op != 'atomic':
        return kind == 'write'
    return write.op == 'atomic' and write.attrs['fn'] != read.attrs['fn']


def check_tape(launches, written=None):
    """`launches`: [(kernel name, (writes, reads))] in recording order. Earlier reads are indexed by field
    and by the first index (the time step, in a time-stepped simulation), so a long tape checks
    in about linear time. Reads of fields no launch overwrites (`written`, when given) are not
    recorded: nothing could break rule 1 on them."""
    reads = {}   # field -> {first index or None -> {pattern: (kernel, stmt)}}
    for kname, (writes, summ_reads) in launches:
        for field, kind, pat, stmt in writes:
            if field not in reads:
                continue
            by_first = reads[field]
            if pat and pat[0] is not None:
                buckets = [by_first.get(pat[0], {}), by_first.get(None, {})]
            else:
                buckets = list(by_first.values())
            for bucket in buckets:
                for (p2, _), (kprev, s2) in bucket.items():
                    if _overlap(p2, pat) and _breaks(s2, kind, stmt):
                        raise located(AccessRuleError,
                                      f'inside this Tape, kernel {kname} '
                                      f'{"changes" if s2.op == "atomic" else "overwrites"} '
                                      f'{field.name}, which the earlier launch of {kprev} '
                                      f'{"took an atomic " + s2.attrs["fn"] + " into" if s2.op == "atomic" else "read"} '
                                      f'({_describe(s2)}); '
                                      'its gradient would be wrong. Write to a new field (e.g. one '
                                      'per time step), or use ti.ad.Tape(loss, undo=True), which '
                                      'saves the overwritten field before the launch.', stmt.loc)
        for field, kind, pat, stmt in summ_reads:
            if written is None or field in written:
                first = pat[0] if pat else None
                reads.setdefault(field, {}).setdefault(first, {}).setdefault((pat, kind), (kname, stmt))
