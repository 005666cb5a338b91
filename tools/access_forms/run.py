#!/usr/bin/env python3
"""Which global-memory access forms does the Vulkan driver compile to vector code? (benchmark
tool; not part of the package). Builds access.c (cc, -lvulkan) and access.comp
(glslangValidator) in a temporary folder and times, on the default device, 8 loads / stores /
atomic adds per invocation through each form, contiguous across the subgroup (index g + k*n/8)
and scattered (a hash), rounds interleaved, best of each. Prints microseconds per access per
16K elements (the dispatch without those accesses subtracted) and the ratio to the storage
buffer form, side by side.

    python3 tools/access_forms/run.py [--n 262144] [--rounds 3]

Mesa 22.3 lavapipe (2 cores, AVX2): storage-buffer loads run as a loop over the SIMD lanes with
a bounds check per lane, texel-buffer loads as one gather: loads are 10-30x cheaper through a
storage texel buffer, stores and atomics cost the same in every form (codegen/memory.py
plan_texels reads read-only fields through texel views)."""
import argparse
import os
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
# name: (L load form, S store form, K loads, NS stores, NA atomics, binding types, format)
FORMS = {
    'none': (0, 0, 0, 0, 0, 'ss', 0),
    'load storage buffer': (0, 0, 8, 0, 0, 'ss', 0),
    'load device address': (1, 0, 8, 0, 0, 'ss', 0),
    'load storage texel r32f': (2, 0, 8, 0, 0, 'ts', 0),
    'load uniform texel r32f': (3, 0, 8, 0, 0, 'us', 0),
    'load vec2 storage buffer': (5, 0, 8, 0, 0, 'ss', 1),
    'load vec2 as 64-bit word': (6, 0, 8, 0, 0, 'ss', 1),
    'load vec2 texel rg32f': (4, 0, 8, 0, 0, 'ts', 1),
    'store storage buffer': (0, 0, 0, 8, 0, 'ss', 0),
    'store device address': (0, 1, 0, 8, 0, 'ss', 0),
    'store storage texel': (0, 2, 0, 8, 0, 'st', 0),
    'atomic storage buffer': (0, 0, 0, 0, 8, 'ss', 2),
    'atomic device address': (0, 1, 0, 0, 8, 'ss', 2),
    'atomic storage texel': (0, 2, 0, 0, 8, 'st', 2),
}

REF = {'load': 'load storage buffer', 'load vec2': 'load vec2 storage buffer',
       'store': 'store storage buffer', 'atomic': 'atomic storage buffer'}


def build(tmp):
    exe = os.path.join(tmp, 'access')
    subprocess.run(['cc', '-O2', '-o', exe, os.path.join(HERE, 'access.c'), '-lvulkan'], check=True)
    spv = {}
    for name, (ld, st, k, ns, na, _, _) in FORMS.items():
        for pat in (0, 1):
            out = os.path.join(tmp, f'{name.replace(" ", "_")}_{pat}.spv')
            subprocess.run(['glslangValidator', '--target-env', 'vulkan1.2', '-S', 'comp',
                            '-DWG=64', f'-DL={ld}', f'-DS={st}', f'-DPAT={pat}', f'-DK={k}',
                            f'-DNS={ns}', f'-DNA={na}', '-o', out,
                            os.path.join(HERE, 'access.comp')], check=True,
                           stdout=subprocess.DEVNULL)
            spv[name, pat] = out
    return exe, spv


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--n', type=int, default=1 << 18, help='elements (a power of two)')
    ap.add_argument('--rounds', type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        exe, spv = build(tmp)
        best = {}
        for _ in range(args.rounds):
            for (name, pat), path in spv.items():
                types, fmt = FORMS[name][5], FORMS[name][6]
                out = subprocess.run([exe, path, types, str(args.n), '64', '20', str(fmt)],
                                     check=True, capture_output=True, text=True).stdout
                t = float(out) * 16384 / args.n
                best[name, pat] = min(best.get((name, pat), t), t)
    print(f'us per access per 16K elements (n={args.n}); ratio: the storage-buffer form / this one')
    print(f'{"form":28s} {"contiguous":>10s} {"ratio":>6s} {"scattered":>10s} {"ratio":>6s}')
    for name in FORMS:
        if name == 'none':
            continue
        kind = 'load vec2' if 'vec2' in name else name.split()[0]
        row = f'{name:28s}'
        for pat in (0, 1):
            per = (best[name, pat] - best['none', pat]) / 8
            ref = (best[REF[kind], pat] - best['none', pat]) / 8
            row += f' {per:10.1f} {ref / per if per > 0 else float("inf"):6.1f}'
        print(row)


if __name__ == '__main__':
    main()
