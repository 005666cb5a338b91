#!/usr/bin/env python3
"""The warp-shuffle sum against the shared-memory sum of the same array, one run, same device.

    PYTHONPATH=. .venv/bin/python tools/bench_simt.py [--n 4194304] [--block 128] [--repeat 15]
    VK_ICD_FILENAMES=.../vk_swiftshader_icd.json ... (SwiftShader: subgroups of 4)

Both kernels sum an i32 field into one counter, one iteration per invocation in workgroups of
`--block` (ti.loop_config(block_dim=...)):
- shuffle: a butterfly of ti.simt.warp.shfl_down_i32 over the warp's W = min(S, 32) lanes
  (S: the device's subgroup size, offsets W/2 ... 1), then warp lane 0 adds its warp's sum
  atomically (one atomic per warp);
- shared: each invocation stores its value in a ti.simt.block.SharedArray, a tree of
  block.sync() halves it down to one, and invocation 0 adds the block's sum (one atomic per
  block).
Each result is checked against numpy before timing. The repeats alternate the two kernels; the
table gives the median launch+sync time and the spread (min .. max). Timings on a shared
machine are noisy: compare within one run.
"""
import argparse
import statistics
import time

import numpy as np

import vkdiff as ti


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--n', type=int, default=1 << 22)
    ap.add_argument('--block', type=int, default=128)
    ap.add_argument('--repeat', type=int, default=15)
    args = ap.parse_args()
    ti.init()
    n, B = args.n, args.block
    n -= n % B
    x = ti.field(ti.i32, n)
    total = ti.field(ti.i32, ())
    vals = np.random.default_rng(0).integers(-1000, 1000, n).astype(np.int32)
    x.from_numpy(vals)

    probe = ti.field(ti.i32, ())

    @ti.kernel
    def size():
        for i in range(1):
            probe[None] = ti.simt.subgroup.group_size()

    size()
    S = int(probe[None])
    W = min(S, 32)
    offsets = [W >> k for k in range(1, W.bit_length())]  # W/2 ... 1

    @ti.kernel
    def shuffle_sum():
        ti.loop_config(block_dim=B)
        for i in range(n):
            v = x[i]
            for off in ti.static(offsets):
                v += ti.simt.warp.shfl_down_i32(ti.u32(0xFFFFFFFF), v, off)
            if (i % B) % W == 0:
                ti.atomic_add(total[None], v)

    steps = [B >> k for k in range(1, B.bit_length())]  # B/2 ... 1

    @ti.kernel
    def shared_sum():
        ti.loop_config(block_dim=B)
        for i in range(n):
            sh = ti.simt.block.SharedArray((B,), ti.i32)
            t = i % B
            sh[t] = x[i]
            ti.simt.block.sync()
            for h in ti.static(steps):
                if t < h:
                    sh[t] += sh[t + h]
                ti.simt.block.sync()
            if t == 0:
                ti.atomic_add(total[None], sh[0])

    want = int(vals.astype(np.int64).sum())
    times = {'shuffle': [], 'shared': []}
    kernels = {'shuffle': shuffle_sum, 'shared': shared_sum}
    for name, k in kernels.items():
        total[None] = 0
        k()
        got = int(total[None])
        assert got == want, f'{name}: {got} != numpy {want}'
    for _ in range(args.repeat):
        for name, k in kernels.items():
            total[None] = 0
            ti.sync()
            t0 = time.perf_counter()
            k()
            ti.sync()
            times[name].append(time.perf_counter() - t0)
    from vkdiff.lang import state
    print(f'device: {state.runtime().name}, subgroup size {S} (warp width {W}), '
          f'n = {n}, block_dim = {B}, {args.repeat} repeats, alternating')
    print(f'{"kernel":<10} {"median ms":>10} {"min .. max ms":>18} {"GB/s":>7}')
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f'{name:<10} {med * 1e3:10.2f} {min(ts) * 1e3:8.2f} .. {max(ts) * 1e3:7.2f} '
              f'{n * 4 / med / 1e9:7.2f}')
    print(f'shuffle / shared: {statistics.median(times["shuffle"]) / statistics.median(times["shared"]):.2f}')


if __name__ == '__main__':
    main()
