"""Analysis: which Buffers of a parallel task belong to one invocation each (Taichi's uniquely
accessed SNodes). When every access of the task to a Buffer is at the same index tuple, and that
tuple is different in every iteration (a loop-unique index: the loop's own indices -- digits
`lin // S % C` of its iteration number -- shifted by invariants or scaled by nonzero constants,
together making up the whole iteration number), no other invocation reads or writes the
elements an invocation touches. passes/forward_globals.py demotes atomics on such Buffers."""
from .. import ir


def loop_unique_buffers(task):
    """The Buffers of parallel `task` accessed only at one loop-unique index tuple."""
    loop = task.loop
    keys = {}  # Buffer -> the index key of every access, or None when they differ
    for s in ir.walk(loop.blocks[0]):
        if s.op in ir.GLOBAL_ACCESS and s.buf is not None:
            k = _index_key(s.indices, loop)
            if s.buf not in keys:
                keys[s.buf] = k
            elif keys[s.buf] != k:
                keys[s.buf] = None
    return {b for b, k in keys.items() if k is not None and _injective(k)}


# ------------------------------------------------------------------ loop-unique indices
def _invariant(x, loop, depth=0):
    """x has the same value in every iteration of `loop` (a constant, a kernel argument, or
    anything computed before the loop)."""
    if x.op in ('const', 'arg'):
        return True
    if depth > 8:
        return False
    b = x.parent
    while b is not None:
        if b.owner is loop:
            break
        b = b.owner.parent if b.owner is not None else None
    else:
        return True  # defined outside the loop
    return x.op in ir.PURE and x.op not in ('random',) and bool(x.args) and \
        all(_invariant(a, loop, depth + 1) for a in x.args)


def _const_int(x):
    if x.op == 'const' and isinstance(x.attrs.get('value'), (int, bool)):
        return int(x.attrs['value'])
    return None


def _digit(x, loop, depth=0):
    """When x = shift + scale * ((lin // S) % C) of the loop's iteration number lin, with
    invariant shift and a nonzero constant scale: the digit (S, C) (C None: no modulus);
    else None. The shift and scale do not matter for injectivity once applied; a `//` or `%`
    applies only to the digit itself (see _raw_digit)."""
    d = _raw_digit(x, loop, depth)
    return None if d is None else d[:2]


def _raw_digit(x, loop, depth):
    """(S, C, raw): the digit x holds, raw when x is exactly (lin // S) % C (nonnegative, no
    shift, scale or wrapping cast applied). A `%` or `//` takes only a raw digit: after a scale
    k, (k*lin) % C repeats when k and C share a factor and (2*lin)//4 is lin//2; after a shift
    cast to unsigned, the 2**32 wrap breaks the residues (review2 defect 1)."""
    if x is loop:
        return (1, None, True)
    if depth > 8 or not x.dtype or not x.dtype.is_int:
        return None
    op, a = x.op, x.args
    if op == 'mod' or op == 'floordiv':
        c = _const_int(a[1])
        d = _raw_digit(a[0], loop, depth + 1)
        if c is None or c <= 0 or d is None or not d[2]:
            return None
        s, m, _ = d
        if op == 'mod':
            if m is not None and m % c != 0:
                return None
            return (s, c, True)
        if m is not None:
            return None  # (lin // S % C) // c: not a digit of lin
        return (s * c, None, True)
    if op in ('add', 'sub'):
        pairs = [(a[0], a[1]), (a[1], a[0])] if op == 'add' else [(a[0], a[1])]
        for this, other in pairs:
            d = _raw_digit(this, loop, depth + 1)
            if d is not None and _invariant(other, loop):
                return d[:2] + (False,)
        return None
    if op == 'mul':
        for this, other in ((a[0], a[1]), (a[1], a[0])):
            k = _const_int(other)
            if k:
                d = _raw_digit(this, loop, depth + 1)
                if d is not None:
                    return d[:2] + (k == 1 and d[2],)
        return None
    if op == 'cast' and x.dtype.bits >= 32 and a[0].dtype is not None and a[0].dtype.is_int:
        d = _raw_digit(a[0], loop, depth + 1)
        return d  # a raw digit is nonnegative and below 2**31: every cast keeps its value
    return None


def _index_key(indices, loop):
    """A key equal for two accesses at the same element in every iteration: the index statements
    themselves when they are identical, else their digits with the statements that shift and
    scale them (None: an index not made of the loop's digits)."""
    key = []
    for x in indices:
        d = _digit(x, loop)
        if d is None:
            return None
        key.append((d, _shape_of(x, loop)))
    return tuple(key)


def _shape_of(x, loop, depth=0):
    """A structural description of how x is computed from the loop's number: equal for two
    index expressions computing the same value."""
    if x is loop:
        return 'lin'
    if x.op == 'const':
        return ('c', x.attrs.get('value'), str(x.dtype))
    if depth > 8 or _invariant(x, loop):
        return ('v', x.id)
    return (x.op, str(x.dtype)) + tuple(_shape_of(a, loop, depth + 1) for a in x.args)


def _injective(key):
    """The index tuple takes a different value in each iteration: its digits together make
    up the whole iteration number (the strides chain from 1 to a digit without a modulus)."""
    digits = {d for d, _ in key}
    s = 1
    for _ in range(len(digits) + 1):
        nxt = [d for d in digits if d[0] == s]
        if not nxt:
            return False
        if any(m is None for _, m in nxt):
            return True
        s *= max(m for _, m in nxt)
    return False
