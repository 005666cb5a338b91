"""`ti.sparse.grid` / `ti.sparse.usage` (vkdiff/sparse.py) and `snode._num_dynamically_allocated`
(lang/sparse.allocated_count), with Taichi 1.7.4's printed values."""
import pytest

import vkdiff as ti


@pytest.fixture(autouse=True)
def _init():
    ti.init()


def test_sparse_grid_is_a_bitmasked_struct_field_and_usage_counts_its_active_cells():
    grid = ti.sparse.grid({'pos': ti.math.vec2, 'mass': ti.f32,
                           'grid2particles': ti.types.vector(20, ti.i32)}, shape=(10, 10))
    assert ti.sparse.usage(grid) == 0
    grid[0, 0].pos = ti.math.vec2(1, 2)
    grid[0, 0].mass = 1.0
    grid[0, 0].grid2particles[2] = 123
    assert ti.sparse.usage(grid) == pytest.approx(0.01)  # Taichi: 0.009999999776482582
    assert grid[0, 0].grid2particles[2] == 123 and grid[0, 0].pos.to_numpy().tolist() == [1, 2]
    g3 = ti.sparse.grid({'m': ti.f32}, shape=(4, 4, 4))
    g3[1, 2, 3].m = 1.0
    g3[3, 2, 1].m = 1.0
    assert ti.sparse.usage(g3) == pytest.approx(2 / 64)
    with pytest.raises(ValueError, match='2-D and 3-D'):
        ti.sparse.grid({'m': ti.f32}, shape=(4,))


@pytest.mark.parametrize('pooled', ['1', '0'])
def test_num_dynamically_allocated_is_the_high_water_mark_of_blocks_in_use(monkeypatch, pooled):
    # Taichi's test_pointer_gc / test_block: freed blocks are reused, the count stays
    monkeypatch.setenv('VKDIFF_POINTER_POOL', pooled)
    x = ti.field(ti.i32)
    L = ti.root.pointer(ti.ij, 8)
    inner = L.pointer(ti.ij, 4)
    inner.dense(ti.ij, 4).place(x)
    assert L._num_dynamically_allocated == 0 and ti.root._num_dynamically_allocated == 0
    for i in range(6):
        x[i * 16, i * 16] = 1
        assert L._num_dynamically_allocated == 1 and inner._num_dynamically_allocated == 1
        L.deactivate_all()
        assert L._num_dynamically_allocated == 1
    x[0, 0] = x[20, 0] = x[40, 40] = 1
    assert L._num_dynamically_allocated == 3 and inner._num_dynamically_allocated == 3
    L.deactivate_all()
    x[0, 0] = 1
    assert L._num_dynamically_allocated == 3  # the most ever held at once
    d = ti.field(ti.i32)
    D = ti.root.dynamic(ti.i, 1 << 16, chunk_size=1024)
    D.place(d)
    d[1024] = 1  # a list of 1025 elements: two chunks of 1024
    assert D._num_dynamically_allocated == 2
