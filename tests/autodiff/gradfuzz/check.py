"""Gradient fuzzer, checker: load a generated program (written to a file and imported, since
vkdiff reads kernel source) and check it in f64:

- reverse mode (one Tape over all launches) against central finite differences of the forward
  kernels, along two random directions per input field (`<grad, u>` vs (L(x+hu) - L(x-hu))/2h);
  an element-wise table is computed only to describe a disagreement. Where differences taken
  with two step sizes disagree the function is not smooth there (a branch, min/max or abs
  switching within a step), and the comparison is skipped, not failed;
- the dot test: forward mode (FwdMode, one JVP per input field) against the Tape's VJP,
  <JVP, u> = <VJP, u>;
- an input no kernel reads has a zero gradient."""
import importlib.util
import itertools
import os
import sys
import tempfile

import numpy as np

import vkdiff as ti

from .gen import STACK

RTOL = 1e-6          # reverse vs finite differences (f64, h = 1e-6 and 1e-5)
DOT_RTOL = 1e-9      # forward vs reverse mode: both exact
DOT_ATOL = 1e-13     # ... up to rounding of terms that cancel (per unit of the seed |u|)
_counter = itertools.count()


class Mismatch(AssertionError):
    pass


def load(source, directory=None, fp='f64'):
    """Write `source` to a file and import it as a fresh module (after a fresh ti.init); with
    fp='f32' its fields and literals are f32."""
    ti.init(default_fp=getattr(ti, fp), ad_stack_size=STACK)
    if fp != 'f64':
        source = source.replace('\nF = ti.f64\n', f'\nF = ti.{fp}\n', 1)
    directory = directory or os.path.join(tempfile.gettempdir(), f'vkdiff_fuzz_{os.getpid()}')
    os.makedirs(directory, exist_ok=True)
    name = f'vkdiff_fuzz_case_{next(_counter)}'
    path = os.path.join(directory, name + '.py')
    with open(path, 'w') as f:
        f.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    mod.init_inputs()
    return mod, path


def unload(mod):
    sys.modules.pop(mod.__name__, None)
    try:
        os.remove(mod.__file__)
    except OSError:
        pass


def _zero(f):
    f.from_numpy(np.zeros(f.shape + f.elem_shape))   # on the host: fill() compiles per field


def _reset(mod, kind=None):
    """Temporaries and the loss to 0 (and, with kind='grad'/'dual', every gradient/dual)."""
    for t in mod.TEMPS + [mod.loss]:
        _zero(t)
    if kind:
        for f in mod.TEMPS + [mod.loss] + _inputs(mod):
            _zero(getattr(f, kind))


def evaluate(mod):
    _reset(mod)
    mod.forward()
    return float(mod.loss[None])


def _inputs(mod):
    return [mod.x, mod.s, mod.y, mod.v, mod.A]


def _name(mod, f):
    return next(n for n in ('x', 's', 'y', 'v', 'A') if getattr(mod, n) is f)


def check(mod, rng=None):
    """Raises Mismatch (with the details) on a disagreement; returns a summary dict."""
    rng = rng or np.random.default_rng(0)
    fields = _inputs(mod)
    x0 = {f: f.to_numpy() for f in fields}
    L0 = evaluate(mod)
    if not np.isfinite(L0):
        raise Mismatch(f'the loss is {L0} (the generator keeps values bounded)')
    _reset(mod, 'grad')
    with ti.Tape(mod.loss, clear_gradients=False):
        mod.forward()
    grads = {f: f.grad.to_numpy() for f in fields}
    gscale = max([1.0, abs(L0)] + [float(np.abs(g).max()) for g in grads.values()])
    summary = {'loss': L0, 'fd_checked': 0, 'fd_skipped': 0}
    problems = []
    used = {id(f) for f in mod.INPUTS}
    for f in fields:
        if id(f) not in used:
            if np.any(grads[f] != 0):
                problems.append(f'{_name(mod, f)} is never read but its gradient is {grads[f]}')
            continue
        for _ in range(2):
            u = rng.standard_normal(x0[f].shape)
            want = float(np.sum(grads[f] * u))
            fd1 = _fd(mod, f, x0[f], u, 1e-6)
            tol = RTOL * gscale * np.abs(u).sum()
            if abs(fd1 - want) <= tol:
                summary['fd_checked'] += 1
                continue
            fd2 = _fd(mod, f, x0[f], u, 1e-5)
            if abs(fd1 - fd2) > tol:        # not smooth within a step: no verdict
                summary['fd_skipped'] += 1
                continue
            summary['fd_checked'] += 1
            problems.append(f'{_name(mod, f)}: <Tape grad, u> = {want!r}, central differences '
                            f'{fd1!r} (h=1e-6), {fd2!r} (h=1e-5)\n' + _table(mod, f, x0[f], grads[f]))
    if not problems:
        _dot_test(mod, fields, grads, x0, rng, problems)
    if problems:
        raise Mismatch('\n'.join(problems))
    return summary


def _fd(mod, f, x0, u, h):
    vals = []
    for sgn in (1, -1):
        f.from_numpy(x0 + sgn * h * u)
        vals.append(evaluate(mod))
    f.from_numpy(x0)
    return (vals[0] - vals[1]) / (2 * h)


def _table(mod, f, x0, g):
    """Element-wise reverse gradient vs central differences, for the report."""
    rows = []
    for idx in np.ndindex(x0.shape):
        u = np.zeros_like(x0)
        u[idx] = 1
        fd = _fd(mod, f, x0, u, 1e-6)
        if abs(fd - g[idx]) > RTOL * max(1.0, abs(fd)):
            rows.append(f'    {_name(mod, f)}.grad{list(idx)}: Tape {g[idx]!r}, finite differences {fd!r}')
    return '\n'.join(rows[:12]) if rows else '    (no single element differs)'


def _dot_test(mod, fields, grads, x0, rng, problems):
    jvp = vjp = scale = usum = 0.0
    for f in fields:
        if all(f is not g for g in mod.INPUTS):
            continue
        u = rng.standard_normal(x0[f].shape)
        _reset(mod, 'dual')
        with ti.ad.FwdMode(loss=mod.loss, param=f, seed=list(u.ravel()), clear_gradients=False):
            mod.forward()
        d = float(mod.loss.dual[None])
        jvp += d
        vjp += float(np.sum(grads[f] * u))
        scale += float(np.sum(np.abs(grads[f] * u))) + abs(d)
        usum += float(np.sum(np.abs(u)))
    # a derivative that cancels exactly (log(x[a] / x[b]) summed over a permutation) leaves
    # rounding residue of O(1) terms in both modes, ~1e-16 each: that floor, not their ratio
    if abs(jvp - vjp) > DOT_RTOL * max(scale, 1e-300) + DOT_ATOL * usum:
        problems.append(f'dot test: <JVP, u> = {jvp!r} (FwdMode), <VJP, u> = {vjp!r} (Tape)')


def check_f32(source, L64, rtol=2e-3):
    """The same program in f32: its loss within rtol of the f64 one (scaled by 1 + |loss|), unless
    the f64 loss itself jumps under relative input perturbations of 1e-5 (a branch, floor or
    min/max switching close by: then no verdict). Returns True (agrees), None (no verdict)."""
    mod, _ = load(source, fp='f32')
    try:
        L32 = evaluate(mod)
    finally:
        unload(mod)
    tol = rtol * (1 + abs(L64))
    if abs(L32 - L64) <= tol:
        return True
    mod, _ = load(source)
    try:
        rng = np.random.default_rng(1)
        for _ in range(4):
            for f in _inputs(mod):
                a = f.to_numpy()
                f.from_numpy(a * (1 + 1e-5 * rng.standard_normal(a.shape)))
            if abs(evaluate(mod) - L64) > tol / 4:
                return None
            mod.init_inputs()
    finally:
        unload(mod)
    raise Mismatch(f'f32 forward value {L32!r}, f64 {L64!r} (tolerance {tol:.3g})')
