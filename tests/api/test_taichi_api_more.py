"""More Taichi 1.7.4 API semantics (issue 11, conformance): field names, gradient dtypes, shape
checks, the runtime queries Taichi programs make (`ti.lang.impl`), each checked against values."""
import numpy as np
import pytest

import vkdiff as ti


def test_field_name_is_kept_for_scalar_vector_and_matrix_fields():
    a = ti.field(dtype=ti.f32, shape=(2, 3), name="a")
    b = ti.field(ti.math.vec3, shape=(2, 3), name="b")
    c = ti.field(ti.math.mat3, shape=(5, 4), name="c")
    assert (a._name, b._name, c._name) == ("a", "b", "c")
    assert b.snode._name == "b" and c.snode._name == "c"
    d = ti.field(ti.f32, shape=2)  # no name: Taichi leaves it empty-ish, vkdiff names it
    assert isinstance(d._name, str)


def test_shape_with_a_zero_dimension_is_a_runtime_error():
    with pytest.raises(ti.TaichiRuntimeError, match="Every dimension of a Taichi field should be positive"):
        ti.field(dtype=ti.f32, shape=0)
    with pytest.raises(ti._lib.core.TaichiRuntimeError):
        ti.field(dtype=ti.f32, shape=(3, 0))
    with pytest.raises(ValueError):  # still a ValueError for code that catches that
        ti.Vector.field(2, ti.f32, shape=(0, 2))


def test_needs_grad_on_a_struct_with_an_integer_member_is_refused_as_in_taichi():
    st = {"pos": ti.types.vector(3, int), "vel": ti.types.vector(3, float), "mass": ti.f32}
    for kw in ({"needs_grad": True}, {"needs_dual": True}):
        with pytest.raises(RuntimeError, match="is not supported for field with `needs_grad=True` or `needs_dual=True`"):
            ti.Struct.field(st, shape=1, **kw)
    # float-only structs get gradients per member
    s = ti.Struct.field({"vel": ti.types.vector(3, float), "mass": ti.f32}, shape=1, needs_grad=True)
    assert s.vel.grad is not None and s.mass.grad is not None


@pytest.mark.parametrize("fp", [ti.f32, ti.f64])
def test_runtime_reports_the_default_float_and_int_types(fp):
    from vkdiff.lang import impl
    ti.init(default_fp=fp, default_ip=ti.i64 if fp is ti.f64 else ti.i32)
    x = ti.field(ti.types.vector(3, float), ())
    y = ti.field(ti.math.ivec2, ())
    assert x.dtype == impl.get_runtime().default_fp == fp
    assert y.dtype == impl.get_runtime().default_ip == (ti.i64 if fp is ti.f64 else ti.i32)
    assert impl.current_cfg().default_fp == fp and impl.current_cfg().arch == ti.vulkan


def test_runtime_counts_compiled_kernel_instances():
    from vkdiff.lang import impl
    rt = impl.get_runtime()
    assert rt.get_num_compiled_functions() == 0

    @ti.kernel
    def inc(a: ti.types.ndarray(dtype=ti.types.vector(3, ti.i32)), k: ti.i32):
        for i in a:
            a[i] += k

    v = ti.Vector.ndarray(3, ti.i32, 4)
    inc(v, 1)
    inc(v, 2)  # same instance
    assert rt.get_num_compiled_functions() == 1
    host = np.zeros((6, 3), np.int32)
    inc(host, 5)  # a numpy array of the same element type and dims: the same instance
    assert rt.get_num_compiled_functions() == 1
    np.testing.assert_array_equal(host, 5)
    np.testing.assert_array_equal(v.to_numpy(), 3)
    w = ti.Vector.field(2, ti.i32, shape=3)
    w.fill(ti.Vector([1, 1]))
    w.fill(ti.Vector([3, 3]))  # Python-scope fill compiles one kernel, once
    assert rt.get_num_compiled_functions() == 2
    np.testing.assert_array_equal(w.to_numpy(), [[3, 3]] * 3)
    ti.init()
    assert impl.get_runtime().get_num_compiled_functions() == 0


def test_runtime_set_default_ip_changes_the_default_int_type():
    from vkdiff.lang import impl
    impl.get_runtime().set_default_ip(ti.i64)
    x = ti.field(int, shape=())
    assert x.dtype == ti.i64 and impl.current_cfg().default_ip == ti.i64
    impl.get_runtime().set_default_fp(ti.f64)
    assert ti.field(float, shape=()).dtype == ti.f64


def test_snode_reflection_reports_gradient_roles():
    from vkdiff.lang.enums import SNodeGradType
    x = ti.field(float, shape=(), needs_grad=True, needs_dual=True)
    assert x.snode.ptr.get_snode_grad_type() == SNodeGradType.PRIMAL
    assert x.grad.snode.ptr.get_snode_grad_type() == SNodeGradType.ADJOINT
    assert x.dual.snode.ptr.get_snode_grad_type() == SNodeGradType.DUAL
    a, b = ti.field(float), ti.field(float)
    ti.root.place(a, a.grad, b)
    # the fields Tape(validation=True) checks element by element: float primals with an adjoint
    assert a.snode.ptr.has_adjoint_checkbit() and not b.snode.ptr.has_adjoint_checkbit()
    assert not a.grad.snode.ptr.has_adjoint_checkbit()
    n = ti.field(ti.i32, shape=2)
    assert not n.snode.ptr.has_adjoint_checkbit()
    assert n.snode.ptr.get_snode_grad_type() == SNodeGradType.PRIMAL
    with pytest.raises(AttributeError):
        ti.root.dense(ti.i, 2).ptr  # only a field's own (place) node has one


def test_numpy_arrays_assigned_in_kernels_must_be_0d():
    @ti.kernel
    def scalar() -> ti.f32:
        a = np.array(2.5, dtype=np.float32)
        a += 1
        return a

    assert scalar() == 3.5

    @ti.kernel
    def vector():
        b = np.array([1, 2])

    with pytest.raises(ti.TaichiTypeError, match="Only 0-dimensional numpy array can be used to initialize a scalar expression"):
        vector()


def test_datatype_to_string_is_its_name():
    for ty, name in [(ti.u8, 'u8'), (ti.u16, 'u16'), (ti.u32, 'u32'), (ti.u64, 'u64'), (ti.i8, 'i8'),
                     (ti.i16, 'i16'), (ti.i32, 'i32'), (ti.f16, 'f16'), (ti.f32, 'f32'), (ti.f64, 'f64')]:
        assert ty.to_string() == str(ty) == name


def test_indexing_an_unplaced_gradient_in_a_kernel_is_a_compile_error():
    y = ti.field(ti.f32, shape=(), needs_grad=True)
    x = ti.field(ti.f32, shape=())

    @ti.kernel
    def f(x: ti.template()):
        y[None] = x.grad[None] * 2

    with pytest.raises(ti.TaichiCompilationError, match=r"Gradient x.grad has not been placed, check whether `needs_grad=True`"):
        f(x)
    f(y)  # y has one: fine
    assert y[None] == 0.0


def test_func_matrix_parameter_checks_the_argument_shape():
    vec3 = ti.types.vector(3, ti.f32)
    mat22 = ti.types.matrix(2, 2, ti.f32)

    @ti.func
    def first(a: vec3):
        return a[0] + a[2]

    @ti.func
    def trace(m: mat22):
        return m[0, 0] + m[1, 1]

    @ti.kernel
    def good() -> ti.f32:
        return first(ti.Vector([1, 2, 3])) + trace(ti.Matrix([[1.5, 0], [0, 2]]))

    assert good() == 7.5

    @ti.kernel
    def short():
        first(ti.Vector([3, 4]))

    @ti.kernel
    def scalar():
        first(1.0)

    @ti.kernel
    def wide():
        trace(ti.Matrix([[1, 2, 3], [4, 5, 6]]))

    with pytest.raises(ti.TaichiSyntaxError, match="is expected to be a Matrix with n 3, but got 2"):
        short()
    with pytest.raises(ti.TaichiSyntaxError, match="is expected to be a Matrix, but got"):
        scalar()
    with pytest.raises(ti.TaichiSyntaxError, match="is expected to be a Matrix with m 2, but got 3"):
        wide()


def test_lang_ops_functions_carry_taichis_names_and_work_entrywise():
    ops = ti.lang.ops
    for name in ('abs', 'logical_not', 'neg', 'bit_not', 'truediv', 'bit_and', 'cmp_lt', 'logical_or'):
        assert getattr(ops, name).__name__ == name
    v = ti.Vector([-1.5, 0.0, 2.0])
    assert ops.abs(v).to_list() == [1.5, 0.0, 2.0]
    assert ops.logical_not(ti.Vector([0, 3, -1])).to_list() == [1, 0, 0]


def test_snode_children_and_finalized_roots():
    val = ti.field(ti.i32)
    blk1 = ti.root.dense(ti.k, 3)
    blk2 = blk1.dense(ti.i, 7)
    blk3 = blk2.dense(ti.j, 11)
    blk3.place(val)
    assert val.shape == (7, 11, 3)
    assert blk3._get_children() == [val.snode] and blk2._get_children() == [blk3]
    assert blk1 in ti.root._get_children()
    fb = ti.FieldsBuilder()
    a = ti.field(ti.f32)
    node = fb.dense(ti.i, 4)
    node.place(a)
    assert fb._get_children() == [node] and node._get_children()[0] is a.snode
    fb.finalize()
    roots = ti.FieldsBuilder._finalized_roots()
    assert roots[0] is ti.root and roots[1] is fb
    a.fill(2.0)
    assert a.to_numpy().tolist() == [2.0] * 4
    ti.init()  # a new program: the old nodes are gone
    assert ti.root._get_children() == [] and ti.FieldsBuilder._finalized_roots() == [ti.root]
