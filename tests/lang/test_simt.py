"""`ti.simt.subgroup`: subgroup reductions and elect, checked against numpy (as Taichi's
test_simt.py does on Vulkan)."""
import numpy as np
import pytest

import vkdiff as ti

sg = ti.simt.subgroup


@pytest.mark.parametrize('dtype,npd', [(ti.i32, np.int32), (ti.f32, np.float32)])
@pytest.mark.parametrize('fn', ['add', 'max', 'min'])
def test_subgroup_reduce_then_elect_matches_numpy(dtype, npd, fn):
    n = 2677  # prime: the last subgroup is partly inactive
    rng = np.random.default_rng(3)
    vals = rng.integers(1, 100, n).astype(npd) if npd is np.int32 else rng.random(n).astype(npd)
    f = ti.field(dtype, n)
    f.from_numpy(vals)
    reduce_ = getattr(sg, f'reduce_{fn}')
    atomic = {'add': ti.atomic_add, 'max': ti.atomic_max, 'min': ti.atomic_min}[fn]
    init = {'add': 0, 'max': -1000, 'min': 1000}[fn]

    @ti.kernel
    def k() -> dtype:
        acc = ti.cast(init, dtype)
        for i in f:
            r = reduce_(f[i])
            if sg.elect():
                atomic(acc, r)
        return acc

    want = {'add': np.sum, 'max': np.max, 'min': np.min}[fn](vals.astype(np.float64))
    assert k() == pytest.approx(want, rel=3e-5)


def test_subgroup_ids_and_errors():
    out = ti.field(ti.i32, 2)

    @ti.kernel
    def k():
        for i in range(64):
            if i == 0:
                out[0] = sg.group_size()
                out[1] = sg.invocation_id()

    k()
    size = out[0]
    assert size >= 1 and size & (size - 1) == 0 and out[1] == 0
    with pytest.raises(TypeError):
        sg.elect()  # Python scope
