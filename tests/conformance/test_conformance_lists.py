"""The Taichi conformance ratchet's lists (tests/conformance/): sorted, unique, well-formed ids of
tests that exist in the kit; every known difference has a reason and is not expected to pass; the
sparse check's plugin (tests/conformance/vkdiff_sparse_ext.py) runs the sparse tests it names."""
import importlib.util
import json
import os
import re

import pytest

_spec = importlib.util.spec_from_file_location(
    'conformance', os.path.join(os.path.dirname(__file__), '..', '..', 'tools', 'conformance.py'))
_tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_tool)
EXPECTED, KIT, KNOWN, read_ids = _tool.EXPECTED, _tool.KIT, _tool.KNOWN, _tool.read_ids
EXPECTED_SPARSE = _tool.EXPECTED_SPARSE
EXPECTED_ALL_ARCHS = _tool.EXPECTED_ALL_ARCHS
KNOWN_ALL = _tool.KNOWN_ALL_ARCHS

ID = re.compile(r'^test_\w+\.py::\S+$')


@pytest.mark.parametrize('path', [EXPECTED, EXPECTED_SPARSE, EXPECTED_ALL_ARCHS])
def test_expected_list_is_sorted_unique_and_well_formed(path):
    ids = read_ids(path)
    assert ids, f'{os.path.basename(path)} is empty'
    assert ids == sorted(set(ids))
    bad = [t for t in ids if not ID.match(t)]
    assert not bad, bad[:5]


@pytest.mark.parametrize('path', [KNOWN, KNOWN_ALL])
def test_known_differences_have_reasons_and_are_not_expected(path):
    with open(path) as f:
        lines = [l.strip() for l in f if l.strip() and not l.startswith('#')]
    assert lines
    for line in lines:
        tid, _, reason = line.partition('#')
        assert ID.match(tid.strip()), line
        assert len(reason.strip()) > 20, f'no reason given: {line}'
    assert not set(read_ids(path)) & set(read_ids(EXPECTED))
    assert not set(read_ids(path)) & set(read_ids(EXPECTED_ALL_ARCHS))


@pytest.mark.skipif(not os.path.isdir(KIT), reason='conformance kit not beside the checkout')
def test_listed_tests_exist_in_the_kit():
    ref = set(read_ids(os.path.join(KIT, 'taichi-vulkan-passes.txt')))
    files = set(os.listdir(os.path.join(KIT, 'suite', 'tests', 'python')))
    for t in (read_ids(EXPECTED) + read_ids(KNOWN) + read_ids(KNOWN_ALL)
              + read_ids(EXPECTED_SPARSE) + read_ids(EXPECTED_ALL_ARCHS)):
        assert t.split('::')[0] in files, t
    # the sparse check's tests are skipped by the kit without the plugin: none is one of the 889
    # nor in the autodiff/language list
    assert not set(read_ids(EXPECTED_SPARSE)) & (ref | set(read_ids(EXPECTED)))
    assert set(read_ids(KNOWN)) <= ref, 'a known difference Taichi itself fails is no difference'
    assert not set(read_ids(KNOWN_ALL)) & ref, 'one of the 889: list it in known-differences.txt'
    # the all-archs check's tests are those Taichi keeps off Vulkan: none of the 889
    assert not set(read_ids(EXPECTED_ALL_ARCHS)) & (ref | set(read_ids(EXPECTED)))


@pytest.mark.skipif(not os.path.isdir(KIT), reason='conformance kit not beside the checkout')
def test_sparse_plugin_runs_only_the_sparse_tests_of_a_language_file(tmp_path):
    """tests/conformance/vkdiff_sparse_ext.py: test_compare.py's four tests that require
    ti.extension.sparse run (the kit alone skips them) and its other tests are deselected."""
    out = tmp_path / 'run.json'
    _tool.run_kit(['test_compare.py'], [], str(out), expect=None, sparse_only=['test_compare.py'])
    results = json.loads(out.read_text())
    sparse = {t for t in read_ids(EXPECTED_SPARSE) if t.startswith('test_compare.py::')}
    assert len(sparse) == 4 and set(results) == sparse, sorted(results)
    assert all(r['outcome'] == 'passed' for r in results.values()), results
    _tool.run_kit(['test_compare.py'], [], str(out), expect=None)  # no plugin: skipped
    results = json.loads(out.read_text())  # (a skipped test is not parametrised: no [arch=])
    assert {results[t.split('[')[0]]['outcome'] for t in sparse} == {'skipped'}
