"""Analysis: which Buffers of a parallel loop belong to one iteration each (Taichi's uniquely
accessed SNodes). When every access in the loop to a Buffer is at the same index tuple, and that
tuple is different in every iteration (a loop-unique index: the loop's own indices -- digits
`lin // S % C` of its iteration number `lin` -- each shifted by an invariant, scaled by a constant
or cast, never losing a difference to integer wrapping, together making up the whole iteration
number), no other iteration reads or writes the elements an iteration touches. Asked by
passes/forward_globals.py (an atomic whose old value is known becomes a store) and
passes/reduction.py (a float sum owned by one iteration is summed in order)."""
from .. import ir

_I31 = 1 << 31  # the iteration number of a parallel loop is an i32 below this


def loop_unique_buffers(loop, bufs=None):
    """The Buffers (of `bufs`, None: all) that the parallel `loop` accesses only at one
    loop-unique index tuple."""
    keys = {}  # Buffer -> the index key of every access, or None when they differ
    total = _trip_count(loop)
    for s in ir.walk(loop.blocks[0]):
        if s.op in ir.GLOBAL_ACCESS and s.buf is not None and (bufs is None or s.buf in bufs):
            if s.buf in keys and keys[s.buf] is None:
                continue
            k = _index_key(s.indices, loop, total)
            if s.buf not in keys:
                keys[s.buf] = k
            elif keys[s.buf] != k:
                keys[s.buf] = None
    return {b for b, k in keys.items() if k is not None and _injective(k)}


def _trip_count(loop):
    n = _const_int(loop.args[0]) if loop.args else None
    return n if n is not None and 0 < n < _I31 else _I31


# ------------------------------------------------------------------ loop-unique indices
def _invariant(x, loop, depth=0):
    """x has the same value in every iteration of `loop` (a constant, a kernel argument, or
    anything computed before the loop; not the loop's own number)."""
    if x.op in ('const', 'arg'):
        return True
    if x is loop:
        return False
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


def _digit(x, loop, total, depth=0):
    """(S, C, raw, span) when x is an injective function of the digit (lin // S) % C of the
    loop's iteration number lin (C None: no modulus), else None. raw: x is exactly the digit
    (nonnegative, below 2**31); span: x's values lie on a run of at most `span` consecutive
    integers modulo 2**bits (what a scale or a narrowing cast may not wrap). A `%` or `//`
    applies only to a raw digit: after a scale k, (k*lin) % C repeats when k and C share a
    factor and (2*lin)//4 is lin//2; after a shift, the residues of a wrapped value break
    (review2 defect 1)."""
    if x is loop:
        return (1, None, True, total)
    if depth > 8 or not x.dtype or not x.dtype.is_int or x.dtype.bits < 32:
        return None
    op, a, bits = x.op, x.args, x.dtype.bits
    if op in ('mod', 'floordiv'):
        c = _const_int(a[1])
        d = _digit(a[0], loop, total, depth + 1)
        if c is None or c <= 0 or d is None or not d[2]:
            return None
        s, m, _, span = d
        if op == 'mod':
            return None if m is not None and m % c else (s, c, True, min(c, span))
        return None if m is not None else (s * c, None, True, -(-span // c))
    if op in ('add', 'sub'):  # a rotation modulo 2**bits
        for this, other in [(a[0], a[1]), (a[1], a[0])] if op == 'add' else [(a[0], a[1])]:
            d = _digit(this, loop, total, depth + 1)
            if d is not None and _invariant(other, loop):
                return d[:2] + (False, d[3])
        return None
    if op == 'mul':
        for this, other in ((a[0], a[1]), (a[1], a[0])):
            k = _const_int(other)
            if k is not None:
                d = _digit(this, loop, total, depth + 1)
                return None if d is None else _scaled(d, k, bits)
        return None
    if op == 'cast' and a[0].dtype is not None and a[0].dtype.is_int:
        d = _digit(a[0], loop, total, depth + 1)
        if d is None:
            return None
        if bits < a[0].dtype.bits and d[3] > 1 << bits:  # narrowing: values 2**bits apart meet
            return None
        if bits > a[0].dtype.bits and not d[2]:  # widening a wrapped value: span unknown
            return d[:3] + (1 << a[0].dtype.bits,)
        return d  # (a raw digit is nonnegative and below 2**31: every cast keeps its value)
    return None


def _scaled(d, k, bits):
    """Digit d times the constant k in `bits`-bit arithmetic, or None where two of its values
    would meet: k = 2**t * odd multiplies injectively modulo 2**bits the values less than
    2**(bits - t) apart."""
    k %= 1 << bits
    if k == 0:
        return None
    t = (k & -k).bit_length() - 1
    if t == 0:  # odd: a bijection modulo 2**bits
        span = 1 << bits
    elif d[3] > 1 << (bits - t):
        return None
    else:
        span = min(1 << bits, min(k, (1 << bits) - k) * (d[3] - 1) + 1)
    return d[:2] + (k == 1 and d[2], span)


def _index_key(indices, loop, total):
    """A key equal for two accesses at the same element in every iteration: each index's
    digit with the statements that shift, scale and cast it (None: an index not made of the
    loop's digits)."""
    key = []
    for x in indices:
        d = _digit(x, loop, total)
        if d is None:
            return None
        key.append((d[:2], _shape_of(x, loop)))
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
