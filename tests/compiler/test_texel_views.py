"""Which fields a task reads through storage texel buffer views (codegen/memory.py
plan_texels), compiled against lavapipe's options without a device; values:
tests/test_texel_reads.py."""
import re

import vkdiff as ti
from vkdiff import compiler
from vkdiff.lang import state

from test_texel_reads import make_fields, make_kernel


def _views(asm):
    return sorted(re.findall(r'OpTypeImage %\w+ Buffer 0 0 0 2 (\w+)', asm))


def test_which_fields_get_views():
    """Device-free (lavapipe's options): read-only fields of every format get a view; the field
    the task also writes, GPUs (cpu_driver False) and devices without texel_reads get none."""
    f = make_fields()
    asm = make_kernel(f).ir(after='codegen')
    assert _views(asm) == ['R32f', 'R32i', 'R32ui', 'Rg32f', 'Rgba32f']
    # k[i], a[j], a[i], v[j], w[i], w[j], m[j], m[i], s, u[j]
    assert asm.count('OpImageRead') == 10
    # views follow the 9 buffers: the 7 read-only fields (not rw, read and written; not out)
    assert re.search(r'OpDecorate %\w+ Binding 15\b', asm)
    assert not re.search(r'OpDecorate %\w+ Binding 16\b', asm)
    off = compiler.lavapipe_like()
    for opts in (compiler.lavapipe_like(cpu_driver=False),
                 compiler.lavapipe_like(features={**off.features, 'texel_reads': False})):
        ti.reset()
        state.init_offline(opts)
        f = make_fields()
        assert 'OpImageRead' not in make_kernel(f).ir(after='codegen')
