"""API stage, launch-level AD: seeing what the Tape recorded — the launches, the fields each read and wrote, and the
order the adjoints run in — as text and as Graphviz DOT (no graphviz needed to produce it)."""
from ..lang.binding import owner


def launch_fields(kernel, args):
    """(fields read, fields written) by one launch of a kernel (the compiler's temporaries left
    out)."""
    inst, _ = kernel.instance(args)
    reads, writes = [], []
    for t in inst.tasks:
        r, w = t.accesses()
        reads += [f for f in map(owner, r) if f is not None and f not in reads]
        writes += [f for f in map(owner, w) if f is not None and f not in writes]
    return reads, writes


def entries(tape):
    out = []
    for k, e in enumerate(tape.entries):
        if e[0] == 'kernel':
            r, w = launch_fields(e[1], e[2])
            out.append((k, e[1].__name__, e[2], r, w, 'kernel'))
        else:
            out.append((k, e[1].__name__, e[2], [], [], 'custom'))
    return out


def describe(tape):
    lines = [f'Tape(loss={tape.loss.name if tape.loss is not None else None}): '
             f'{len(tape.entries)} recorded launches']
    for k, name, args, r, w, kind in entries(tape):
        a = ', '.join(repr(x) if isinstance(x, (int, float)) else type(x).__name__ for x in args)
        extra = ' [custom gradient]' if kind == 'custom' else ''
        lines.append(f'  #{k} {name}({a}){extra}: reads {_names(r)}; writes {_names(w)}')
    order = [f'{name}.grad' for k, name, *_ in reversed(entries(tape))]
    lines.append('adjoint order: ' + ' -> '.join(order))
    return '\n'.join(lines)


def _names(fields):
    return '{' + ', '.join(f.name for f in fields) + '}' if fields else '{}'


def to_dot(tape):
    """Launches as boxes, fields as ellipses; solid edges are data flow of the forward pass,
    dashed red edges the order of the adjoint pass."""
    out = ['digraph tape {', '  rankdir=LR;', '  node [fontname="Helvetica"];']
    fields = {}
    ents = entries(tape)
    for k, name, args, r, w, kind in ents:
        shape = 'box' if kind == 'kernel' else 'component'
        out.append(f'  k{k} [label="#{k} {name}", shape={shape}];')
        for f in r + w:
            if f.name not in fields:
                fields[f.name] = f'f{len(fields)}'
                out.append(f'  {fields[f.name]} [label="{f.name}", shape=ellipse];')
        for f in r:
            out.append(f'  {fields[f.name]} -> k{k};')
        for f in w:
            out.append(f'  k{k} -> {fields[f.name]};')
    rev = [k for k, *_ in reversed(ents)]
    for a, b in zip(rev, rev[1:]):
        out.append(f'  k{a} -> k{b} [style=dashed, color=red, label="adjoint", constraint=false];')
    out.append('}')
    return '\n'.join(out) + '\n'
