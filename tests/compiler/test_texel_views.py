"""Which fields a task reads through storage texel buffer views (codegen/memory.py
plan_texels), compiled against lavapipe's options without a device; values:
tests/pipeline/test_texel_reads.py (whose kernels this file compiles)."""
import re
import sys
from pathlib import Path

import vkdiff as ti
from vkdiff import compiler
from vkdiff.lang import state

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'pipeline'))
from test_texel_reads import make_fields, make_kernel  # noqa: E402


def _views(asm):
    return sorted(re.findall(r'OpTypeImage %\w+ Buffer 0 0 0 2 (\w+)', asm))


def test_which_fields_get_views():
    """Device-free (lavapipe's options): fields of every format the task loads (rw: before it
    stores to it) get a view; GPUs (cpu_driver False) and devices without texel_reads none."""
    f = make_fields()
    asm = make_kernel(f).ir(after='codegen')
    assert _views(asm) == ['R32f', 'R32i', 'R32ui', 'Rg32f', 'Rgba32f']
    # k[i], a[j], a[i], v[j], w[i], w[j], m[j], m[i], s, u[j], rw[i]
    assert asm.count('OpImageRead') == 11
    # views follow the 9 buffers: the 8 fields loaded (not out, only stored to)
    assert re.search(r'OpDecorate %\w+ Binding 16\b', asm)
    assert not re.search(r'OpDecorate %\w+ Binding 17\b', asm)
    off = compiler.lavapipe_like()
    for opts in (compiler.lavapipe_like(cpu_driver=False),
                 compiler.lavapipe_like(features={**off.features, 'texel_reads': False})):
        ti.reset()
        state.init_offline(opts)
        f = make_fields()
        assert 'OpImageRead' not in make_kernel(f).ir(after='codegen')
