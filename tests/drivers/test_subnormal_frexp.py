"""ti.frexp is exact on subnormals on every driver. Vulkan lets a device flush subnormal operands of
float operations to zero unless it offers shaderDenormPreserveFloat32 (neither software driver
does; SwiftShader flushes, lavapipe keeps them), so frexp works on the bits with integer
operations only. Before, SwiftShader gave frexp(1e-40) = (1e-40, 0): its comparison saw 0, the
select returned the unflushed bits."""
import numpy as np

import vkdiff as ti


def test_frexp_of_subnormals_and_specials_matches_numpy():
    tiny = np.finfo(np.float32).smallest_subnormal
    sub = np.array([tiny * k for k in (1, 2, 3, 7, 1000, 1 << 20, (1 << 23) - 1)], np.float32)
    rng = np.random.default_rng(3)
    rand = (rng.integers(1, 1 << 23, 200, dtype=np.uint32)
            | (rng.integers(0, 2, 200, dtype=np.uint32) << 31)).view(np.float32)  # random subnormals
    vals = np.concatenate([sub, -sub, rand, np.array([1e-40, np.finfo(np.float32).tiny, 0.0, -0.0,
                                                     1.4, -0.75, np.inf, -np.inf, np.nan], np.float32)])
    x, m = ti.field(ti.f32, shape=len(vals)), ti.field(ti.f32, shape=len(vals))
    e = ti.field(ti.i32, shape=len(vals))
    x.from_numpy(vals)

    @ti.kernel
    def f():
        for i in x:
            a, b = ti.frexp(x[i])
            m[i] = a
            e[i] = b

    f()
    wm, we = np.frexp(vals)
    got = m.to_numpy()
    same = (got.view(np.uint32) == wm.view(np.uint32)) | (np.isnan(got) & np.isnan(wm))
    assert same.all(), list(zip(vals[~same][:4], got[~same][:4], wm[~same][:4]))
    np.testing.assert_array_equal(e.to_numpy(), we)
    assert wm[0] == 0.5 and we[0] == -148  # the smallest subnormal, 2**-149
