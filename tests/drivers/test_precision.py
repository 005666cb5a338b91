"""The device's own f32 math measured (vkdiff/precision.py): doctor's "precision" section, its
per-device cache, and ti.init()'s one warning where an op is worse than 16 ulp."""
import json
import warnings

import numpy as np
import pytest

import vkdiff as ti
from vkdiff import doctor, precision
from vkdiff.lang import state


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv('VKDIFF_CACHE_DIR', str(tmp_path / 'spirv'))
    monkeypatch.setenv('VKDIFF_PRECISION_WARNING', '1')
    monkeypatch.setattr(precision, '_warned', set())
    return tmp_path / 'precision'


def _record(ulp):
    return {'ops': {nm: {'ulp': ulp} for nm in precision.OPS}, 'subnormals': 'kept',
            'sample': precision.SAMPLE, 'version': precision.VERSION}


def test_measurement_matches_numpy_on_a_known_op():
    """measure() reports what the kernel computed: under fast_math=False everything is <= 2 ulp
    and sqrt / div are exact; ulp_error itself is checked on hand-made values."""
    ti.init(fast_math=False)
    rec = precision.measure(False)
    assert set(rec['ops']) == set(precision.OPS)
    assert all(r['ulp'] <= 2 for r in rec['ops'].values()), rec
    assert rec['ops']['sqrt']['ulp'] == 0 and rec['ops']['div']['ulp'] == 0
    one = np.float32(1.0)
    err = precision.ulp_error(np.array([one, np.nextafter(one, np.float32(2)), np.nan], np.float32),
                              np.array([1.0, 1.0, np.nan]))
    assert err.tolist() == [0.0, 1.0, 0.0]


def test_init_warns_once_from_the_cache(cache):
    key = precision.device_key(state.runtime())
    precision.store(key, _record(100.0))
    precision._warned.clear()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        ti.init()
        ti.init()
    msgs = [str(x.message) for x in w if issubclass(x.category, precision.PrecisionWarning)]
    assert len(msgs) == 1 and 'fast_math=False' in msgs[0] and 'sin 100' in msgs[0]
    assert [x.filename for x in w if issubclass(x.category, precision.PrecisionWarning)] == [__file__]


def test_no_warning_where_precise_or_fast_math_off(cache):
    precision.store(precision.device_key(state.runtime()), _record(1.0))
    precision._warned.clear()
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter('always')
        ti.init()
        precision._warned.clear()
        precision.store(precision.device_key(state.runtime()), _record(100.0))
        ti.init(fast_math=False)
    assert not [x for x in w if issubclass(x.category, precision.PrecisionWarning)]


def test_missing_cache_is_measured_once(cache):
    """No cache entry: ti.init measures the driver in a subprocess and caches it."""
    key = precision.device_key(state.runtime())
    assert precision.cached(key) is None
    with warnings.catch_warnings(record=True):
        warnings.simplefilter('always')
        precision._warned.clear()
        ti.init()
    rec = precision.cached(key)
    assert rec is not None and set(rec['ops']) == set(precision.OPS)
    assert json.loads(next(cache.glob('*.json')).read_text())['key'] == key


def test_doctor_prints_the_precision_section(cache):
    lines = []
    doctor.check_precision(lines.append)
    text = '\n'.join(lines)
    assert 'precision of the default f32 math' in text
    for nm in precision.OPS:
        assert f'\n    {nm} ' in text
    assert 'subnormal results:' in text
    assert precision.cached(precision.device_key(state.runtime())) is not None
