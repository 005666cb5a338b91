#!/usr/bin/env python3
"""Benchmark: size and cold compile cost of the adjoint kernels of a real program, with SSA
adjoints (autodiff/reverse.py, the default) and with every adjoint a Function variable
(VKDIFF_AD_SSA=0), side by side in one run.

    .venv/bin/python tools/bench_ad_compile.py [--program mass_spring_robot] [--repeat 2]

For each kernel of the program (tools/programs/NAME.py, its first launch's arguments) the
adjoint is built and compiled in a fresh process per setting, with vkdiff's SPIR-V cache off
(VKDIFF_CACHE=0) and Mesa's shader cache off (MESA_SHADER_CACHE_DISABLE=true), so the driver
compiles every pipeline. Printed per kernel: SPIR-V lines (disassembly), Function-storage
variables, vkdiff's compile time (passes, codegen, in-process assembly and validation) and the
driver's pipeline creation time (lavapipe: NIR, then LLVM), in ms of CPU time of the process
(the machine may be loaded; medians over --repeat runs, settings alternating)."""
import argparse
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CHILD = r'''
import json, os, re, runpy, sys, time
sys.path.insert(0, os.path.join(sys.argv[1], 'tools'))
from taichi_harness import alias_vkdiff
ti = alias_vkdiff()
from vkdiff import compiler
from vkdiff.lang import state
from vkdiff.codegen import tools
from vkdiff.launch.compiled import CompiledTask, TaskList
ti.init(arch=ti.vulkan)
from vkdiff.launch.kernel import Kernel
calls = {}
call = Kernel.__call__
def spy(self, *args):  # the arguments of each kernel's first launch
    calls.setdefault(self, args)
    return call(self, *args)
Kernel.__call__ = spy
g = runpy.run_path(sys.argv[2])
with ti.ad.Tape(g['loss']):
    g['forward']()
Kernel.__call__ = call
rt = state.runtime()
out = {}
cpu = time.process_time
for kernel, args in calls.items():
    name = kernel.fn.__name__
    inst, _ = kernel.instance(args)
    t0 = cpu()
    try:
        tasks, _flags = compiler.adjoint(inst.tasks, inst.name, inst.options)
    except Exception:
        continue
    codes = compiler.backend(inst.name + '.grad', tasks, inst.push, inst.options)
    t1 = cpu()
    for c in codes:
        CompiledTask(c).bind(rt, inst.push)
    t2 = cpu()
    adj = TaskList(inst.name + '.grad', tasks, inst.push, inst.packer, inst.converters)
    adj.overflow_flags = _flags
    inst._adjoint = adj
    ti.sync()
    t3 = cpu()
    kernel.grad(*args)  # lavapipe's LLVM compiles the shader at its first dispatch
    ti.sync()
    t4 = cpu()
    asm = '\n'.join(tools.disassemble(c.binary) for c in codes)
    out[name] = dict(tasks=len(codes), lines=asm.count('\n') + 1,
                     vars=len(re.findall(r'OpVariable %\S+ Function', asm)),
                     compile=(t1 - t0) * 1e3, pipeline=(t2 - t1) * 1e3,
                     first=(t4 - t3) * 1e3)
print(json.dumps(out))
'''


def run(program, ssa):
    env = dict(os.environ, VKDIFF_AD_SSA='1' if ssa else '0', VKDIFF_CACHE='0',
               MESA_SHADER_CACHE_DISABLE='true', PYTHONPATH=ROOT)
    import tempfile
    with tempfile.NamedTemporaryFile('w', suffix='.py', delete=False) as fh:
        fh.write(CHILD)
    try:
        r = subprocess.run([sys.executable, fh.name, ROOT, program], env=env,
                           capture_output=True, text=True)
    finally:
        os.unlink(fh.name)
    if r.returncode != 0:
        sys.exit(f'child failed:\n{r.stderr[-3000:]}')
    return json.loads(r.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--program', default='mass_spring_robot')
    ap.add_argument('--repeat', type=int, default=2)
    a = ap.parse_args()
    path = os.path.join(ROOT, 'tools', 'programs', a.program + '.py')
    runs = {False: [], True: []}
    for _ in range(a.repeat):
        for ssa in (False, True):
            runs[ssa].append(run(path, ssa))
    names = list(runs[True][0])
    med = lambda ssa, n, key: statistics.median(r[n][key] for r in runs[ssa])
    print(f'{a.program}: adjoint kernels, VKDIFF_AD_SSA=0 -> 1 (default); SPIR-V cache and Mesa '
          f'shader cache off; CPU ms, median of {a.repeat}')
    hdr = f'{"kernel":20} {"tasks":>5} {"SPIR-V lines":>15} {"Function vars":>15} ' \
          f'{"compile ms":>17} {"pipeline ms":>17} {"1st dispatch ms":>17}'
    print(hdr)
    print('-' * len(hdr))
    keys = ('lines', 'vars', 'compile', 'pipeline', 'first')
    tot = {k: [0.0, 0.0] for k in keys}
    for n in names:
        cells = []
        for key, fmt in zip(keys, ('{:.0f}', '{:.0f}', '{:.1f}', '{:.1f}', '{:.1f}')):
            old, new = med(False, n, key), med(True, n, key)
            tot[key][0] += old
            tot[key][1] += new
            cells.append(f'{fmt.format(old)} -> {fmt.format(new)}')
        print(f'{n:20} {runs[True][0][n]["tasks"]:>5} {cells[0]:>15} {cells[1]:>15} '
              f'{cells[2]:>17} {cells[3]:>17} {cells[4]:>17}')
    cells = [f'{tot[k][0]:.0f} -> {tot[k][1]:.0f}' for k in keys]
    print(f'{"total":20} {"":>5} {cells[0]:>15} {cells[1]:>15} {cells[2]:>17} {cells[3]:>17} '
          f'{cells[4]:>17}')


if __name__ == '__main__':
    main()
