"""A Python list of run-time values bound to a name in a kernel holds variables, as in Taichi:
`verts = [a[c][j] for j in range(3)]`, then `verts[1] = verts[2]` inside a run-time branch
(Taichi's simulation/implicit_fem.py swaps a triangle's vertices that way)."""
import numpy as np

import vkdiff as ti


def test_list_elements_are_assignable_variables():
    a = ti.Vector.field(3, ti.i32, shape=4)
    out = ti.Vector.field(3, ti.i32, shape=4)
    a.from_numpy(np.array([[1, 2, 3], [4, 5, 6], [7, 8, 9], [3, 2, 1]], np.int32))

    @ti.kernel
    def swap_when_decreasing():
        for c in a:
            verts = [a[c][j] for j in range(3)]
            if verts[0] > verts[1]:          # run-time condition
                tmp = verts[1]
                verts[1] = verts[2]
                verts[2] = tmp
            verts[0] += 10
            out[c] = ti.Vector(verts)

    swap_when_decreasing()
    assert out.to_numpy().tolist() == [[11, 2, 3], [14, 5, 6], [17, 8, 9], [13, 1, 2]]


def test_list_of_vectors_element_assignment():
    out = ti.Vector.field(2, ti.f32, shape=2)

    @ti.kernel
    def run(s: ti.f32):
        vs = [ti.Vector([1.0, 2.0]) * s, ti.Vector([3.0, 4.0])]
        if s > 1:
            vs[0] = vs[1] * 2
        out[0] = vs[0]
        out[1] = vs[1]

    run(0.5)
    assert np.allclose(out.to_numpy(), [[0.5, 1.0], [3.0, 4.0]])
    run(2.0)
    assert np.allclose(out.to_numpy(), [[6.0, 8.0], [3.0, 4.0]])


def test_template_func_argument_is_the_callers_variable():
    """A local passed to a ti.func's ti.template() parameter is passed by reference, as in Taichi:
    assignments in the func change the caller's struct / vector / scalar (Taichi's
    test_graph.py::test_ti_func_with_template_args; before, they were silently lost)."""
    S = ti.types.struct(id=ti.i32, color=ti.types.vector(4, ti.i32))
    out = ti.field(ti.i32, shape=5)

    @ti.func
    def set_struct(x: ti.template()):
        x.id = 5
        x.color = ti.Vector([1, 2, 0, 0])

    @ti.func
    def set_vec(v: ti.template()):
        v[1] = 7

    @ti.func
    def bump(s: ti.template(), by):
        s += by

    @ti.func
    def by_value(x):
        x.id = 99     # a struct passed without template(): the func's own copy

    @ti.kernel
    def k(n: ti.i32):
        x = S()
        set_struct(x)
        by_value(x)
        w = ti.Vector([0, 0])
        set_vec(w)
        c = n
        bump(c, 3)
        out[0], out[1], out[2], out[3] = x.color[1], x.id, w[1], c
        out[4] = n

    k(10)
    assert out.to_numpy().tolist() == [2, 5, 7, 13, 10]


def test_static_list_of_fields_element_is_assignable():
    """`fs = ti.static([a, b]); fs[j][i] += ...` (also `=` and ti.atomic_add): the element of
    the field a compile-time index names, as reading it does (Taichi 1.7.4: a 250s, b 500s)."""
    a = ti.field(ti.i32, shape=4)
    b = ti.field(ti.i32, shape=4)
    c = ti.field(ti.f32, shape=4)
    d = ti.Vector.field(2, ti.f32, shape=4)

    @ti.kernel
    def k():
        fs = ti.static([a, b])
        for i in range(1000):
            for j in ti.static(range(2)):
                fs[j][i % 4] += j + 1
        gs = ti.static((c, d))
        for i in range(4):
            gs[0][i] = i * 0.5
            ti.atomic_add(gs[0][i], 1.0)
            gs[1][i] = ti.Vector([i, -i])
            gs[1][i][1] -= 1.0

    k()
    assert a.to_numpy().tolist() == [250] * 4 and b.to_numpy().tolist() == [500] * 4
    assert c.to_numpy().tolist() == [1.0, 1.5, 2.0, 2.5]
    assert d.to_numpy().tolist() == [[i, -i - 1.0] for i in range(4)]
