"""Tool (face floor, above launch): the f32 precision of the device's math, measured.

`measure(fast_math)` runs one kernel of every f32 math op on a fixed sample (in the current
program: the caller has run ti.init) and returns each op's largest error against numpy's f64
result, in ulps of the correctly rounded f32 (away from the zeros of sin/cos/tan, where the
absolute error is reported instead), and whether the driver flushes subnormal results.

Per driver the default math's (fast_math=True) measurement is cached as JSON next to the SPIR-V
cache (keyed by vendor, device name, driver and API version). `python -m vkdiff doctor` prints it
(its "precision" section); `ti.init()` with fast_math=True reads it (measuring it once, in a
subprocess, when it is missing: about a second on lavapipe) and warns once per process where an
op is worse than WARN_ULP, naming ti.init(fast_math=False). VKDIFF_PRECISION_WARNING=0 turns the
check off."""
import hashlib
import json
import os
import subprocess
import sys
import warnings

import numpy as np

from .codegen import tools
from .lang import state

WARN_ULP = 16
SAMPLE = 4096
VERSION = 1                              # of the sample and the JSON (part of the cache key)


class PrecisionWarning(UserWarning):
    """The device's default f32 math is less accurate than WARN_ULP ulps for some op."""


def _inputs():
    """{op: (a, b or None, reference f64 values)} on a fixed sample with edges."""
    rng = np.random.default_rng(12345)
    n = SAMPLE
    f = np.float32

    def u(lo, hi, k=n):
        return rng.uniform(lo, hi, k).astype(f)

    def logu(lo, hi, k=n):
        return np.exp(rng.uniform(lo, hi, k)).astype(f)
    trig = np.concatenate([u(-10, 10, n - 64), (np.arange(-16, 16) * (np.pi / 2)).astype(f),
                           np.nextafter((np.arange(1, 33) * np.pi).astype(f), f(0))])
    pos = np.concatenate([logu(-80, 80, n // 2), u(0.5, 2, n - n // 2)])
    cases = {
        'sin': (trig, None), 'cos': (trig, None), 'tan': (trig, None),
        'asin': (u(-1, 1), None), 'acos': (u(-1, 1), None),
        'atan': (np.concatenate([u(-4, 4, n // 2), logu(-20, 20, n // 2)]), None),
        'atan2': (u(-5, 5), np.concatenate([u(-5, 5, n // 2), logu(-10, 10, n // 2)])),
        'exp': (u(-87, 88), None), 'exp2': (u(-126, 127), None),
        'expm1': (np.concatenate([u(-1, 1, n // 2), u(-20, 80, n // 2)]), None),
        'log': (pos, None), 'log2': (pos, None), 'tanh': (u(-10, 10), None),
        'pow': (logu(-5, 5), u(-10, 10)),
        'sqrt': (pos, None), 'rsqrt': (pos, None),
        'div': (u(-10, 10) * logu(-20, 20), u(-10, 10) * logu(-20, 20)),
    }
    refs = {
        'sin': np.sin, 'cos': np.cos, 'tan': np.tan, 'asin': np.arcsin, 'acos': np.arccos,
        'atan': np.arctan, 'atan2': np.arctan2, 'exp': np.exp, 'exp2': np.exp2,
        'expm1': np.expm1, 'log': np.log, 'log2': np.log2, 'tanh': np.tanh, 'pow': np.power,
        'sqrt': np.sqrt, 'rsqrt': lambda x: 1 / np.sqrt(x), 'div': np.divide}
    out = {}
    for name, (a, b) in cases.items():
        args = (a,) if b is None else (a, b)
        out[name] = (a, b, refs[name](*[v.astype(np.float64) for v in args]))
    return out


OPS = ('sin', 'cos', 'tan', 'asin', 'acos', 'atan', 'atan2', 'exp', 'exp2', 'expm1', 'log',
       'log2', 'tanh', 'pow', 'sqrt', 'rsqrt', 'div')
NEAR_ZERO = ('sin', 'cos', 'tan')        # ulps away from their zeros, absolute error near them


def ulp_error(y, ref):
    """|y - ref| in ulps of ref rounded to f32 (0 where y is that f32 or both are NaN)."""
    y = np.asarray(y, np.float32)
    ref32 = ref.astype(np.float32)
    a = np.minimum(np.abs(ref32.astype(np.float64)), 3.4e38)
    ulp = 2.0 ** (np.floor(np.log2(np.maximum(a, 2.0 ** -126))) - 23)
    with np.errstate(invalid='ignore'):
        err = np.abs(y.astype(np.float64) - ref) / ulp
    err[(y == ref32) | (np.isnan(y) & np.isnan(ref32))] = 0.0
    err[np.isnan(err)] = np.inf
    return err


def run_ops(xs):
    """{op: f32 results} of `xs` ({op: (a, b or None)}) computed on the device (one kernel)."""
    import vkdiff as ti  # cycle: vkdiff/__init__.py imports this module
    names = list(xs)
    n = max(len(a) for a, _ in xs.values())
    fa = ti.field(ti.f32, (len(names), n))
    fb = ti.field(ti.f32, (len(names), n))
    fo = ti.field(ti.f32, (len(names), n))
    A = np.zeros((len(names), n), np.float32)
    B = np.ones((len(names), n), np.float32)
    for k, nm in enumerate(names):
        a, b = xs[nm]
        A[k, :len(a)] = a
        if b is not None:
            B[k, :len(b)] = b
    fa.from_numpy(A)
    fb.from_numpy(B)
    fns = {'rsqrt': lambda a, b: ti.rsqrt(a), 'div': lambda a, b: a / b,
           'atan2': lambda a, b: ti.atan2(a, b), 'pow': lambda a, b: ti.pow(a, b),
           'exp2': lambda a, b: ti.exp2(a)}
    calls = [fns.get(nm) or (lambda a, b, f=getattr(ti, nm): f(a)) for nm in names]

    @ti.kernel
    def k():
        for i in range(n):
            for j in ti.static(range(len(names))):
                fo[j, i] = calls[j](fa[j, i], fb[j, i])
    k()
    out = fo.to_numpy()
    return {nm: out[j, :len(xs[nm][0])] for j, nm in enumerate(names)}


def flushes_subnormals():
    """Does the device flush subnormal f32 results of arithmetic to zero?"""
    import vkdiff as ti  # cycle: vkdiff/__init__.py imports this module
    x = ti.field(ti.f32, 2)
    x.from_numpy(np.array([2.0 ** -126, 0.0], np.float32))

    @ti.kernel
    def half():
        x[1] = x[0] * 0.5
    half()
    return float(x.to_numpy()[1]) == 0.0


def measure(fast_math=True):
    """The errors of the current program's f32 math (the caller ran ti.init(fast_math=...)):
    {'ops': {op: {'ulp': max ulps, 'abs': max absolute error (sin/cos/tan)}}, 'subnormals':
    'flushed' or 'kept', 'sample': inputs per op}."""
    cases = _inputs()
    got = run_ops({nm: (a, b) for nm, (a, b, _) in cases.items()})
    ops = {}
    for nm, (a, b, ref) in cases.items():
        err = ulp_error(got[nm], ref)
        rec = {}
        if nm in NEAR_ZERO:
            away = np.abs(ref) >= 1e-3
            rec['ulp'] = float(err[away].max())
            near = np.abs(ref) < 0.01
            with np.errstate(invalid='ignore'):
                rec['abs'] = float(np.nanmax(np.abs(got[nm][near].astype(np.float64) - ref[near])))
        else:
            rec['ulp'] = float(err.max())
        ops[nm] = rec
    return {'ops': ops, 'subnormals': 'flushed' if flushes_subnormals() else 'kept',
            'sample': SAMPLE, 'version': VERSION}


# ---------------------------------------------------------------- the per-driver cache
def device_key(rt):
    dev = rt.device
    return (f'{getattr(dev, "vendor_id", 0):04x} {rt.name} driver {getattr(dev, "driver_version", "?")}'
            f' api {getattr(dev, "api_version", "?")} v{VERSION}')


def _cache_path(key):
    d = tools.cache_dir()
    if d is None:
        return None
    d = os.path.join(os.path.dirname(d), 'precision')
    os.makedirs(d, exist_ok=True)
    return os.path.join(d, hashlib.sha256(key.encode()).hexdigest()[:24] + '.json')


def cached(key):
    """The cached measurement for the device `key`, or None."""
    try:
        path = _cache_path(key)
        if path is None:
            return None
        with open(path) as fh:
            rec = json.load(fh)
        return rec if rec.get('key') == key else None
    except (OSError, ValueError):
        return None


def store(key, rec):
    try:
        path = _cache_path(key)
        if path is None:
            return
        tmp = f'{path}.{os.getpid()}.tmp'
        with open(tmp, 'w') as fh:
            json.dump(dict(rec, key=key), fh, indent=1)
        os.replace(tmp, path)
    except OSError:
        pass


def measure_default(rt_key=None):
    """Measure the current device's default math (ti.init() with fast_math=True) and cache it."""
    import vkdiff as ti  # cycle: vkdiff/__init__.py imports this module
    global _measuring
    _measuring = True
    try:
        ti.init(fast_math=True)
    finally:
        _measuring = False
    key = rt_key or device_key(state.runtime())
    rec = measure(True)
    store(key, rec)
    return key, rec


def loose_ops(rec):
    return {nm: r['ulp'] for nm, r in rec['ops'].items() if not r['ulp'] <= WARN_ULP}


_warned = set()
_measuring = False


def check_at_init():
    """ti.init()'s check (state.after_init): warn once per process and device where the default
    math has an op worse than WARN_ULP ulps (from the cache; measured in a subprocess when
    missing)."""
    if (_measuring or not state.config.get('fast_math', True) or state.offline is not None
            or os.environ.get('VKDIFF_PRECISION_WARNING', '1') == '0'
            or os.environ.get('VKDIFF_CACHE', '1') == '0'):
        return
    key = device_key(state.runtime())
    if key in _warned:
        return
    _warned.add(key)
    rec = cached(key)
    if rec is None:
        env = dict(os.environ, VKDIFF_PRECISION_WARNING='0',
                   VKDIFF_DEVICE=str(state.config.get('device', 0)))
        try:
            subprocess.run([sys.executable, '-c', 'from vkdiff import precision; '
                            'precision.measure_default()'], env=env, timeout=120,
                           capture_output=True)
        except (OSError, subprocess.SubprocessError):
            return
        rec = cached(key)
        if rec is None:
            return
    bad = loose_ops(rec)
    if bad:
        worst = ', '.join(f'{nm} {u:.3g}' for nm, u in sorted(bad.items(), key=lambda t: -t[1]))
        warnings.warn(f'vkdiff: this device\'s f32 math is loose (max error in ulps: {worst}; '
                      f'`python -m vkdiff doctor` lists it); ti.init(fast_math=False) computes '
                      f'every op within 2 ulps, the same bits on every driver',
                      PrecisionWarning, stacklevel=4)   # (the caller of ti.init)


def table(rec):
    """Text lines of a measurement."""
    lines = [f'    {"op":6s} {"max ulp":>10s} {"abs near zeros":>15s}']
    for nm in OPS:
        r = rec['ops'].get(nm)
        if r is None:
            continue
        a = f'{r["abs"]:.2g}' if 'abs' in r else ''
        flag = '  > %d ulp' % WARN_ULP if not r['ulp'] <= WARN_ULP else ''
        lines.append(f'    {nm:6s} {r["ulp"]:10.3g} {a:>15s}{flag}')
    lines.append(f'    subnormal results: {rec["subnormals"]}; {rec["sample"]} inputs per op')
    return lines
