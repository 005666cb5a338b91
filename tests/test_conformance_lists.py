"""The Taichi conformance ratchet's lists (tests/conformance/): sorted, unique, well-formed ids of
tests that exist in the kit; every known difference has a reason and is not expected to pass."""
import importlib.util
import os
import re

import pytest

_spec = importlib.util.spec_from_file_location(
    'conformance', os.path.join(os.path.dirname(__file__), '..', 'tools', 'conformance.py'))
_tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_tool)
EXPECTED, KIT, KNOWN, read_ids = _tool.EXPECTED, _tool.KIT, _tool.KNOWN, _tool.read_ids
KNOWN_ALL = _tool.KNOWN_ALL_ARCHS

ID = re.compile(r'^test_\w+\.py::\S+$')


def test_expected_list_is_sorted_unique_and_well_formed():
    ids = read_ids(EXPECTED)
    assert ids, 'expected-pass.txt is empty'
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


@pytest.mark.skipif(not os.path.isdir(KIT), reason='conformance kit not beside the checkout')
def test_listed_tests_exist_in_the_kit():
    ref = set(read_ids(os.path.join(KIT, 'taichi-vulkan-passes.txt')))
    files = set(os.listdir(os.path.join(KIT, 'suite', 'tests', 'python')))
    for t in read_ids(EXPECTED) + read_ids(KNOWN) + read_ids(KNOWN_ALL):
        assert t.split('::')[0] in files, t
    assert set(read_ids(KNOWN)) <= ref, 'a known difference Taichi itself fails is no difference'
    assert not set(read_ids(KNOWN_ALL)) & ref, 'one of the 889: list it in known-differences.txt'
