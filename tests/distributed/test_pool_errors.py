"""vkdiff.distributed.Pool (process backend) given exceptions that cannot travel back as they
are, and a worker that cannot start. Found by review: both were reported as WorkerCrashedError
('a worker process died ... its result is lost. The workers were restarted.'): no worker had
died, the user's exception (type, message, traceback) was lost, and the pool restarted its
workers for nothing (or, for a failing init, on every map)."""
import pytest

from vkdiff.distributed import Pool, UnpicklableWorkerError, WorkerInitError

import pool_error_tasks as tasks


def test_an_exception_that_does_not_unpickle_arrives_as_text():
    with Pool(workers=1) as p:
        with pytest.raises(UnpicklableWorkerError) as info:
            p.map(tasks.raise_needs_two, range(4))
        msg = str(info.value)
        assert isinstance(info.value, RuntimeError)
        assert 'pool_error_tasks.NeedsTwo: 1-2' in msg and 'raise_needs_two' in msg  # traceback
        pid = p.worker_info()[0][0]
        with pytest.raises(UnpicklableWorkerError, match='WontPickle does not pickle'):
            p.map(tasks.raise_wont_pickle, range(3))
        assert p.map(tasks.square, range(4)) == [0, 1, 4, 9]
        assert p.worker_info()[0][0] == pid  # the worker was not restarted


def test_a_failing_init_is_reported_with_its_exception():
    with Pool(init=tasks.failing_init, workers=1) as p:
        for _ in range(2):  # every map, the same report (the worker is kept, not restarted)
            with pytest.raises(WorkerInitError) as info:
                p.map(tasks.square, [1, 2])
            msg = str(info.value)
            assert 'ValueError: init failed on purpose' in msg and 'failing_init' in msg


def test_workers_true_is_refused():
    """Pool(workers=True) made one worker (bool is an int); ti.init(device=True) is refused too."""
    from vkdiff.distributed.pool import PoolArgumentError
    with pytest.raises(PoolArgumentError, match='workers must be a positive int'):
        Pool(workers=True)
