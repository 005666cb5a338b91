"""`vkdiff/types.py` holds dtypes only (the compiler core imports it); the public `ti.types`
namespace (vkdiff/lang/types_api.py) is those same dtype objects plus vector/matrix/struct/
template/ndarray. Checks both halves and the `ti.f32(x)` cast that crosses them."""
import ast
import pathlib
import sys

import numpy as np
import pytest

import vkdiff as ti


def test_dtypes_module_imports_nothing_above_errors():
    src = pathlib.Path(sys.modules['vkdiff.types'].__file__).read_text()
    internal = set()
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, ast.ImportFrom) and node.level:
            internal.add(node.module or '')
        elif isinstance(node, ast.Import):
            assert all(not a.name.startswith('vkdiff') for a in node.names)
    assert internal == {'errors'}
    dtypes = sys.modules['vkdiff.types']
    for name in ('vector', 'matrix', 'struct', 'template', 'ndarray'):
        assert not hasattr(dtypes, name)


def test_public_namespace_shares_the_dtype_objects():
    dtypes = sys.modules['vkdiff.types']
    for name in ('f32', 'f64', 'i32', 'u8', 'f16', 'DataType', 'Defaults', 'primitive_types',
                 'is_integral', 'resolve', 'promote'):
        assert getattr(ti.types, name) is getattr(dtypes, name)
    assert ti.types.f32 is ti.f32 and ti.types.float64 is ti.f64
    v3 = ti.types.vector(3, ti.f32)
    m23 = ti.types.matrix(2, 3, ti.i32)
    assert dtypes.is_tensor_type(v3) and dtypes.is_tensor_type(m23)
    assert ti.types.is_tensor(ti.math.vec2) and not ti.types.is_tensor(ti.f32)
    assert isinstance(ti.types.template(), type(ti.template()))
    S = ti.types.struct(a=ti.f32, b=v3)
    s = S(a=1.5, b=[1, 2, 3])
    assert s.a == 1.5 and list(s.b.to_numpy()) == [1, 2, 3]
    nd = ti.types.ndarray(dtype=v3, ndim=2)      # the ndarray parameter annotation (issue 12)
    assert nd.ndim == 2 and nd.elem_shape == (3,) and nd.scalar is ti.f32
    with pytest.raises(ti.VkdiffError, match='vector/matrix type'):
        ti.types.resolve(v3)


def test_dtype_call_casts_in_python_scope_and_in_kernels():
    assert ti.i32(3.9) == 3 and ti.u8(300) == 44
    assert ti.f32(0.1) == float(np.float32(0.1)) and ti.f32(0.1) != 0.1
    x = ti.field(ti.f32, shape=3)

    @ti.kernel
    def k(a: ti.f32):
        x[0] = ti.i32(a)          # truncates toward zero
        x[1] = ti.f32(ti.i32(7) // 2)
        x[2] = ti.types.f64(a) * 2

    k(-2.75)
    np.testing.assert_array_equal(x.to_numpy(), np.array([-2.0, 3.0, -5.5], np.float32))
