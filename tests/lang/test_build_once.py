"""Each sub-expression of a kernel statement is built once, as Taichi 1.7.4 builds it: an index
that calls a ti.func with a side effect (here `bump()`, which increments a counter field) runs
once even where the frontend first tries the expression as something assignable (a @ti.dataclass
method's `self`, a ti.template() argument, a struct member's entry as an assignment target, a
dynamic node's method name). Every expected value is what Taichi 1.7.4 (CPU) prints for the same
program: the counter is 1 after each kernel, and the element read is element 0."""
import numpy as np
import pytest

import vkdiff as ti


def _program():
    @ti.dataclass
    class P:  # its `norm` and `length` make those method names a struct method's
        x: ti.f32
        vel: ti.types.vector(3, ti.f32)

        @ti.func
        def norm(self):
            return self.x * 2

        @ti.func
        def length(self):
            return self.x * 3

        @ti.func
        def count(self):
            return ti.cast(self.x, ti.i32) - 8

        @ti.func
        def flag(self):
            return 1  # (a compile-time condition)

    c = ti.field(ti.i32, shape=())
    v = ti.Vector.field(3, ti.f32, shape=4)
    s = P.field(shape=4)
    out = ti.field(ti.f32, shape=8)

    @ti.func
    def bump():
        return ti.atomic_add(c[None], 1) % 4

    @ti.func
    def twice(t: ti.template()):
        return t * 2

    @ti.kernel
    def vector_norm():  # `norm` is a dataclass method's name; v's element is a vector
        out[0] = v[bump()].norm()

    @ti.kernel
    def template_arg():  # not assignable: passed as its value
        out[1] = twice(ti.Vector([1.0, 2.0, 3.0, 4.0])[bump()])

    @ti.kernel
    def member_entry_store():
        s[bump()].vel[0] = 1.0

    @ti.kernel
    def member_entry_augment():
        s[bump()].vel[1] += 1.0

    @ti.kernel
    def struct_norm():
        out[3] = s[bump()].norm()

    @ti.kernel
    def struct_length():  # `length` is also a dynamic node's method
        out[4] = s[bump()].length()

    @ti.kernel
    def vector_fill():
        v[bump()].fill(7.0)

    @ti.kernel
    def template_element():
        out[5] = twice(v[bump()][0])

    @ti.kernel
    def ndrange_bound():  # ti.ndrange's argument is also looked at for a nested decorator
        for i in ti.ndrange(s[bump()].count()):
            out[6] += 1

    @ti.kernel
    def compile_time_if():  # whether it was `if ti.static(...)` is looked at too
        if s[bump()].flag():
            out[7] = 5

    kernels = dict(ndrange_bound=ndrange_bound, compile_time_if=compile_time_if, vector_norm=vector_norm, template_arg=template_arg,
                   member_entry_store=member_entry_store,
                   member_entry_augment=member_entry_augment, struct_norm=struct_norm,
                   struct_length=struct_length, vector_fill=vector_fill,
                   template_element=template_element)
    return c, v, s, out, kernels


# kernel: (out index, Taichi 1.7.4's out value; None: nothing read)
EXPECTED = {'vector_norm': (0, 1.0), 'template_arg': (1, 2.0), 'member_entry_store': (None, 0),
            'member_entry_augment': (None, 0), 'struct_norm': (3, 20.0),
            'struct_length': (4, 30.0), 'vector_fill': (None, 0), 'template_element': (5, 2.0),
            'ndrange_bound': (6, 2.0), 'compile_time_if': (7, 5.0)}


@pytest.mark.parametrize('name', sorted(EXPECTED))
def test_index_with_side_effect_runs_once(name):
    c, v, s, out, kernels = _program()
    v.from_numpy(np.array([[i + 1.0, 0, 0] for i in range(4)], np.float32))
    s.x.from_numpy(np.arange(10.0, 14.0, dtype=np.float32))
    kernels[name]()
    assert c[None] == 1
    slot, want = EXPECTED[name]
    if slot is not None:
        assert out[slot] == want
    vel = s.vel.to_numpy()
    assert vel[0].tolist() == [1.0 if name == 'member_entry_store' else 0.0,
                               1.0 if name == 'member_entry_augment' else 0.0, 0.0]
    assert not vel[1:].any()
    vv = v.to_numpy()
    assert vv[0].tolist() == ([7.0] * 3 if name == 'vector_fill' else [1.0, 0, 0])
    assert vv[1:, 0].tolist() == [2.0, 3.0, 4.0]
