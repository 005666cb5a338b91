"""Fields of ti.u1 (Taichi 1.7.4 allows them): stored as i32 0 / 1, as vkdiff's u1 ndarrays and
kernel arguments are. Every kernel that touched one failed with an internal spirv-val error
(OpTypeBool in a storage buffer), and a u1 vector field raised "Invalid integer data type 'b'"."""
import numpy as np

import vkdiff as ti


def test_u1_field_copies_sorts_and_round_trips():
    b, c = ti.field(ti.u1, shape=8), ti.field(ti.u1, shape=8)
    bits = np.array([1, 0, 1, 1, 0, 0, 1, 0], np.bool_)
    b.from_numpy(bits)

    @ti.kernel
    def cp() -> ti.i32:
        n = 0
        for i in b:
            c[i] = b[i]
            if b[i]:
                n += 1
        return n

    assert cp() == 4
    np.testing.assert_array_equal(c.to_numpy().astype(np.bool_), bits)
    ti.algorithms.parallel_sort(b)
    np.testing.assert_array_equal(b.to_numpy().astype(np.bool_), np.sort(bits))


def test_u1_vector_field_host_access():
    v = ti.Vector.field(2, ti.u1, shape=3)
    v[0] = [1, 0]
    v[2] = [0, 1]

    @ti.kernel
    def count() -> ti.i32:
        n = 0
        for i in v:
            n += v[i][0] + 2 * v[i][1]
        return n

    assert count() == 3
    np.testing.assert_array_equal(v.to_numpy()[0], [1, 0])
