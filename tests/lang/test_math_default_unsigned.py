"""ti.math.uvec2/3/4 hold Taichi's default unsigned type: the unsigned of default_ip (u32, or u64
with ti.init(default_ip=ti.i64)), decided at use, as Taichi's cfg().default_up
(Taichi's test_math_module.py::test_vector_types_f64 asserts it in debug mode)."""
import vkdiff as ti


def _roundtrip():
    @ti.kernel
    def k(n: ti.u64) -> ti.u64:
        v = ti.math.uvec2(n)
        return v.x
    return k(2 ** 63 - 1)


def test_uvec_is_u64_with_default_ip_i64():
    ti.init(default_ip=ti.i64)
    assert _roundtrip() == 2 ** 63 - 1


def test_uvec_is_u32_by_default():
    ti.init()
    assert _roundtrip() == 2 ** 32 - 1
