"""A dynamic SNode's chunk pool (lang/dynpool.py) is sized by the default budget and the storage
buffer range; on a device that cannot allocate that much (SwiftShader: a 1 GiB buffer range on a
2 GiB heap, where the runtime reserves an allocation's size twice) the pool is halved until it
fits instead of failing with OutOfMemoryError. Here a device that refuses allocations above
16 MiB is simulated on any driver."""
import pytest

import vkdiff as ti
from vkdiff.lang import field as field_module

LIMIT = 16 << 20


@pytest.fixture
def small_device(monkeypatch):
    real = field_module.rt_storage
    refused = []

    def rt_storage(rt, shape, dtype, name=None, strides=None):
        nbytes = dtype.nbytes
        for n in shape:
            nbytes *= n
        if nbytes > LIMIT:
            refused.append(nbytes)
            raise ti.OutOfMemoryError(f'simulated: {nbytes} bytes for {name}')
        return real(rt, shape, dtype, name, strides)
    monkeypatch.setattr(field_module, 'rt_storage', rt_storage)
    return refused


def test_default_pool_is_halved_until_the_device_holds_it(small_device):
    v = ti.Vector.field(2, ti.i32)
    ti.root.dense(ti.i, 1000).dynamic(ti.j, 1 << 20, chunk_size=32).place(v)  # 8 GB if dense

    @ti.kernel
    def k():
        for i in range(4):
            ti.append(v.parent(), i, ti.Vector([i, 10 * i]))

    k()
    assert small_device  # the first sizes were refused
    assert [list(v[i, 0]) for i in range(4)] == [[i, 10 * i] for i in range(4)]


def test_a_budget_the_user_gave_is_not_shrunk(small_device):
    ti.init(device_memory_GB=0.125)
    v = ti.field(ti.i32)
    ti.root.dense(ti.i, 1000).dynamic(ti.j, 1 << 20, chunk_size=32).place(v)

    @ti.kernel
    def k():
        ti.append(v.parent(), 0, 1)

    with pytest.raises(MemoryError):
        k()
