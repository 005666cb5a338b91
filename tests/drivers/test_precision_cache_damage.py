"""ti.init() with a damaged precision cache file (vkdiff/precision.py): the file is measured
again and rewritten, never an exception. Found by review: a cache file holding valid JSON that is
not a record (`[]`, `null`, a string) made every ti.init() raise AttributeError ('list' object
has no attribute 'get'); a record with the right key and no ops, a TypeError."""
import json
import warnings

import pytest

import vkdiff as ti
from vkdiff import precision
from vkdiff.lang import state


@pytest.mark.parametrize('damage', ['[]', 'null', '"x"', 'KEY_NO_OPS', 'KEY_BAD_ULP'])
def test_damaged_cache_is_measured_again(tmp_path, monkeypatch, damage):
    monkeypatch.setenv('VKDIFF_CACHE_DIR', str(tmp_path / 'spirv'))
    monkeypatch.setenv('VKDIFF_PRECISION_WARNING', '1')
    monkeypatch.setattr(precision, '_warned', set())
    key = precision.device_key(state.runtime())
    path = precision._cache_path(key)
    text = {'KEY_NO_OPS': json.dumps({'key': key, 'ops': 5}),
            'KEY_BAD_ULP': json.dumps({'key': key, 'ops': {'sin': {'ulp': 'x'}},
                                       'subnormals': 'kept', 'sample': 1})}.get(damage, damage)
    with open(path, 'w') as fh:
        fh.write(text)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        ti.init()  # raised AttributeError / TypeError
    rec = precision.cached(key)
    assert rec is not None and set(rec['ops']) == set(precision.OPS)
    assert "\n".join(precision.table(rec))  # doctor's table reads it
