"""One local Ray for the whole test run, on loopback only (RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER=0
makes Ray 2.60 bind 127.0.0.1 instead of the host's address; usage stats off). Skipped where ray
is not installed (tools/setup.sh installs it, so CI runs these)."""
import os
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


@pytest.fixture(scope='session')
def local_ray():
    # before ray is imported: it reads these when it loads
    os.environ['RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER'] = '0'
    os.environ['RAY_USAGE_STATS_ENABLED'] = '0'
    os.environ.setdefault('RAY_raylet_start_wait_time_s', '180')  # a loaded 2-core machine
    ray = pytest.importorskip('ray')
    # Ray's workers import vkdiff and the test tasks from this checkout
    paths = [str(ROOT), str(HERE)] + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p]
    os.environ['PYTHONPATH'] = os.pathsep.join(dict.fromkeys(paths))
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address='127.0.0.1',
             log_to_driver=False)
    yield ray
    ray.shutdown()
