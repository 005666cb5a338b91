#!/usr/bin/env python3
"""Derives the polynomial coefficients of vkdiff's own f32 math (passes/f32_trig.py SIN_S,
COS_C; passes/f32_explog.py EXP_P, LOG_Q): near-minimax fits of the relative error (Lawson's
iteratively reweighted least squares on Chebyshev nodes, values from mpmath at 40 digits), then
rounded to f32. Prints each fit's relative error before and after the rounding; the error after
rounding is what the kernels see (it reaches the result scaled down by the term's size).

    PYTHONPATH=. .venv/bin/python tools/f32math_coeffs.py
"""
import mpmath as mp
import numpy as np

mp.mp.dps = 40


def fit(fn, lo, hi, deg, n=4000, rounds=60):
    t = np.cos(np.pi * (np.arange(n) + 0.5) / n) * (hi - lo) / 2 + (hi + lo) / 2
    y = np.array([float(fn(mp.mpf(float(v)))) for v in t])
    a = np.vstack([t ** k for k in range(deg + 1)]).T
    w = np.ones(n)
    for _ in range(rounds):
        sw = np.sqrt(w) / np.abs(y)
        c, *_ = np.linalg.lstsq(a * sw[:, None], y * sw, rcond=None)
        err = np.abs(a @ c - y) / np.abs(y)
        w = w * err
        w /= w.sum()
    c32 = [float(np.float32(v)) for v in c]
    return c32, float(np.max(err)), float(np.max(np.abs(a @ np.array(c32) - y) / np.abs(y)))


def main():
    z_trig = (np.pi / 4) ** 2 * 1.01
    s_log = (mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)

    def log_r(z):                 # R(z)/z, log(1+f) = f - f^2/2 + s*(f^2/2 + R), s^2 = z
        s = mp.sqrt(z)
        f = 2 * s / (1 - s)
        return ((mp.log(1 + f) - f + f * f / 2) / s - f * f / 2) / z
    fits = {
        'SIN_S (sin r - r)/r^3 in z = r^2': fit(
            lambda z: (mp.sin(mp.sqrt(z)) - mp.sqrt(z)) / mp.sqrt(z) ** 3, 1e-12, z_trig, 3),
        'COS_C (cos r - 1 + z/2)/z^2': fit(
            lambda z: (mp.cos(mp.sqrt(z)) - 1 + z / 2) / z ** 2, 1e-12, z_trig, 3),
        'EXP_P (e^r - 1 - r)/r^2': fit(
            lambda r: (mp.exp(r) - 1 - r) / r ** 2 if r else mp.mpf(0.5), -0.3466 * 1.01,
            0.3466 * 1.01, 5),
        'LOG_Q R(z)/z': fit(log_r, 1e-12, float(s_log ** 2) * 1.01, 3),
    }
    for name, (c, e64, e32) in fits.items():
        print(f'{name}: relative error {e64:.2e} (f64 coefficients), {e32:.2e} (f32)')
        print('    [' + ', '.join(repr(v) for v in c) + ']')


if __name__ == '__main__':
    main()
