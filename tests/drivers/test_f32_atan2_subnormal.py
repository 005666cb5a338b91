"""ti.init(fast_math=False): atan2 with a subnormal result keeps it on a driver that flushes
subnormal arithmetic (SwiftShader), as README's precision table says ("subnormal results: kept
(built from bits)"). Found by review: the quotient was built from the bits, then `hi + 0.0`
flushed it, so SwiftShader gave 0 where lavapipe gave numpy's value (atan2(-6.577e-31,
2.6215e11): lavapipe -2.5083e-42, SwiftShader -0.0). tests/drivers/test_f32_accurate_math.py
forgives a flushed subnormal result on a flushing driver, so it did not see this."""
import numpy as np

import vkdiff as ti


def test_atan2_subnormal_results_are_kept():
    ti.init(fast_math=False)
    y = np.float32([-6.577020197229289e-31, 9.976776561469329e-36, 6.202271362514347e-14,
                    -1.8255524567284986e-19, 1e-45, -1e-40, 3e-39, 1e-40])
    x = np.float32([262145540096.0, 23065.5, 4.457799590015688e+26, 2.5654032712586056e+26,
                    1.0, 1.0, 1.0, 1e-40])
    Y = ti.field(ti.f32, shape=y.size)
    X = ti.field(ti.f32, shape=y.size)
    O = ti.field(ti.f32, shape=y.size)
    Y.from_numpy(y)
    X.from_numpy(x)

    @ti.kernel
    def k():
        for i in Y:
            O[i] = ti.atan2(Y[i], X[i])

    k()
    want = np.arctan2(y.astype(np.float64), x.astype(np.float64)).astype(np.float32)
    assert (np.abs(want[:7]) < 1.1754944e-38).all() and (want[:7] != 0).all()  # subnormal
    np.testing.assert_array_equal(O.to_numpy().view(np.uint32), want.view(np.uint32))
