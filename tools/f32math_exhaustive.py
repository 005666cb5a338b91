#!/usr/bin/env python3
"""Exhaustive (or strided) accuracy check of vkdiff's own f32 math (ti.init(fast_math=False)):
every f32 bit pattern in [--lo, --hi) with step --stride (the defaults: all 2^32 of them) goes
through each unary op on the device (or, with --host, through the same lowering evaluated with
numpy: passes/f32ops.HostF32), compared with numpy's f64 result rounded to f32. Prints per op the
largest error in ulps, how many results are not correctly rounded, and the worst input; special
values (NaN, infinities, signed zeros) must be numpy's bit for bit (NaN payloads aside), and a
subnormal result flushed to zero by a driver that flushes (SwiftShader) is counted separately.

    PYTHONPATH=. .venv/bin/python tools/f32math_exhaustive.py --ops sin,cos,exp,log
        [--lo 0 --hi 4294967296 --stride 1] [--chunk 4194304] [--host]

All 2^32 inputs of one op take about 10 minutes on lavapipe with 16 free cores and hours on 2
shared ones: --stride 4099 (a prime: every exponent and mantissa pattern class is hit) samples
~1M inputs spread over the whole range; --lo 0x3f800000 --hi 0x40000000 is one whole binade."""
import argparse
import time

import numpy as np

REF = {'sin': np.sin, 'cos': np.cos, 'tan': np.tan, 'asin': np.arcsin, 'acos': np.arccos,
       'atan': np.arctan, 'exp': np.exp, 'exp2': np.exp2, 'expm1': np.expm1, 'log': np.log,
       'log2': np.log2, 'tanh': np.tanh, 'sqrt': np.sqrt, 'rsqrt': lambda x: 1 / np.sqrt(x)}


def host_fn(op):
    from vkdiff.passes import f32_atrig, f32_divsqrt, f32_explog, f32_trig
    from vkdiff.passes.f32ops import HostF32
    for mod in (f32_trig, f32_atrig, f32_explog, f32_divsqrt):
        if hasattr(mod, op):
            fn = getattr(mod, op)
            return lambda x: fn(HostF32(), x)
    raise SystemExit(f'unknown op {op}')


def device_fn(op, chunk):
    import vkdiff as ti
    x = ti.field(ti.f32, chunk)
    y = ti.field(ti.f32, chunk)
    f = getattr(ti, op)

    @ti.kernel
    def k():
        for i in x:
            y[i] = f(x[i])

    def run(v):
        n = len(v)
        buf = np.zeros(chunk, np.float32)
        buf[:n] = v
        x.from_numpy(buf)
        k()
        return y.to_numpy()[:n]
    return run


def check(op, fn, lo, hi, stride, chunk):
    from vkdiff.precision import ulp_error
    worst, worst_x, not_cr, flushed, special, total = 0.0, None, 0, 0, 0, 0
    t = time.perf_counter()
    for start in range(lo, hi, stride * chunk):
        bits = np.arange(start, min(hi, start + stride * chunk), stride, dtype=np.uint64)
        x = bits.astype(np.uint32).view(np.float32)
        with np.errstate(all='ignore'):
            y = np.asarray(fn(x), np.float32)
            ref = REF[op](x.astype(np.float64))
            ref32 = ref.astype(np.float32)
        total += len(x)
        err = ulp_error(y, ref)
        flush = (y == 0) & (np.abs(ref32) < np.float32(1.1754944e-38)) & (ref32 != 0)
        flushed += int(flush.sum())
        err[flush] = 0
        same = (y.view(np.uint32) == ref32.view(np.uint32)) | (np.isnan(y) & np.isnan(ref32))
        not_cr += int((~same & ~flush).sum())
        odd = ~np.isfinite(ref32) | (ref32 == 0)
        special += int((odd & ~same & ~flush).sum())
        i = int(np.argmax(err))
        if err[i] > worst:
            worst, worst_x = float(err[i]), (x[i], y[i], ref[i])
    dt = time.perf_counter() - t
    return dict(op=op, inputs=total, max_ulp=worst, worst=worst_x, not_correctly_rounded=not_cr,
                special_mismatch=special, flushed_subnormals=flushed, seconds=dt)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--ops', default=','.join(REF))
    ap.add_argument('--lo', type=lambda s: int(s, 0), default=0)
    ap.add_argument('--hi', type=lambda s: int(s, 0), default=1 << 32)
    ap.add_argument('--stride', type=int, default=1)
    ap.add_argument('--chunk', type=int, default=1 << 22)
    ap.add_argument('--host', action='store_true', help='numpy emulation instead of the device')
    a = ap.parse_args()
    if not a.host:
        import vkdiff as ti
        ti.init(fast_math=False)
        print(f'device: {ti.device_name()}')
    else:
        print('host emulation (numpy)')
    print(f'bits [{a.lo:#x}, {a.hi:#x}) step {a.stride}')
    for op in a.ops.split(','):
        fn = host_fn(op) if a.host else device_fn(op, a.chunk)
        r = check(op, fn, a.lo, a.hi, a.stride, a.chunk)
        w = r['worst']
        at = f' at x={w[0]!r}: {w[1]!r} vs {w[2]!r}' if w else ''
        print(f'{op:6s} {r["inputs"]:>11,d} inputs  max {r["max_ulp"]:.3f} ulp  '
              f'not correctly rounded {r["not_correctly_rounded"]:,d}  special mismatches '
              f'{r["special_mismatch"]}  subnormals flushed {r["flushed_subnormals"]}  '
              f'({r["seconds"]:.0f} s){at}', flush=True)


if __name__ == '__main__':
    main()
