"""vkdiff.distributed.Pool with the process backend: the results in the order of the items,
bit-identical to the serial loop; ti.init and init() once per worker; a worker's exception
re-raised with its type and traceback; a killed worker raises and the pool recovers."""
import numpy as np
import pytest

import vkdiff as ti
from vkdiff.distributed import Pool, WorkerCrashedError
from vkdiff.distributed.pool import PoolArgumentError

import sweep_tasks

CONFIGS = [(3.0 + 0.25 * k, 0.6 + 0.05 * k, 0.02 * (k % 3)) for k in range(8)]


@pytest.fixture(scope='module')
def pool():
    with Pool(init=sweep_tasks.setup, init_args=('sweep',), workers=2) as p:
        yield p


def test_sweep_equals_the_serial_loop_bit_for_bit(pool):
    serial = [sweep_tasks.projectile(c) for c in CONFIGS]
    pooled = pool.map(sweep_tasks.projectile, CONFIGS)
    assert len(pooled) == len(CONFIGS)
    for (l1, g1, d1), (l2, g2, d2) in zip(serial, pooled):
        assert np.float32(l1).tobytes() == np.float32(l2).tobytes()
        assert g1.tobytes() == g2.tobytes()
        assert np.float32(d1).tobytes() == np.float32(d2).tobytes()
    # the sweep is a real one: the configurations give different losses and gradients
    assert len({round(r[0], 6) for r in serial}) == len(CONFIGS)
    assert all(abs(r[2]) > 0 for r in serial if r[0] > 0)


def test_each_worker_runs_init_once(pool):
    pool.map(sweep_tasks.projectile, CONFIGS)
    seen = pool.map(sweep_tasks.init_count, range(16))
    assert {c for _, c, _ in seen} == {1}
    assert {t for _, _, t in seen} == {'sweep'}
    assert 1 <= len({pid for pid, _, _ in seen}) <= 2
    for pid, calls, placement in pool.worker_info():
        assert calls == 1


def test_results_in_item_order_and_numpy_results(pool):
    out = pool.map(sweep_tasks.fail_on_negative, list(range(20)))
    assert out == [2 * k for k in range(20)]


def test_worker_exception_keeps_type_and_traceback(pool):
    with pytest.raises(ValueError, match='negative value -4 refused') as info:
        pool.map(sweep_tasks.fail_on_negative, [1, 2, -4, 5])
    assert 'fail_on_negative' in str(info.value.__cause__)
    assert pool.map(sweep_tasks.fail_on_negative, [3]) == [6]  # still usable


def test_killed_worker_raises_and_the_pool_recovers():
    with Pool(init=sweep_tasks.setup, workers=2) as p:
        with pytest.raises(WorkerCrashedError) as info:
            p.map(sweep_tasks.die_on, range(6))
        assert isinstance(info.value, RuntimeError)
        assert p.map(sweep_tasks.die_on, [0, 1, 2]) == [0, 1, 2]


def test_bad_arguments_are_clear_errors():
    with pytest.raises(PoolArgumentError, match='backend'):
        Pool(backend='mpi')
    with pytest.raises(ValueError, match='workers'):
        Pool(workers=0)
    with Pool(workers=1) as p:
        with pytest.raises(PoolArgumentError, match='not importable'):
            p.map(lambda x: x, [1])
    with pytest.raises(ti.VkdiffError if hasattr(ti, 'VkdiffError') else RuntimeError):
        p.map(sweep_tasks.fail_on_negative, [1])
