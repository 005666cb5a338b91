"""Taichi conformance kit, pytest plugin: Taichi's tests that `require=ti.extension.sparse` run on
vkdiff (its pointer, bitmasked and dynamic SNodes). Loaded by tools/conformance.py's sparse check
(`-p vkdiff_sparse_ext` in PYTEST_ADDOPTS, this folder on PYTHONPATH); not a test module itself.

The kit's tests/test_utils.py (../shared/taichi-conformance, read-only) skips every test whose
`require=` names an extension outside its SUPPORTED_EXTENSIONS ({adstack, data64}). Before the
test files are imported, this adds "sparse" there and wraps `test_utils.test` to note on each test
function the extensions it requires. With VKDIFF_CONFORMANCE_SPARSE_ONLY set to a list of file
names (separated by os.pathsep), the tests in those files that do not require sparse are
deselected: a language-group file's sparse tests run without its other tests running twice.
"""
import os

REQUIRES = '__vkdiff_conformance_requires__'


def pytest_configure(config):
    from tests import test_utils  # the kit's, in the run's working copy of suite/tests
    test_utils.SUPPORTED_EXTENSIONS.add('sparse')
    decorate = test_utils.test

    def test(*args, require=None, **kwargs):
        mark = decorate(*args, require=require, **kwargs)
        reqs = require if isinstance(require, (list, tuple)) else [] if require is None else [require]
        names = {test_utils._ext_name(e) for e in reqs}

        def decorator(func):
            setattr(func, REQUIRES, names)
            return mark(func)
        return decorator

    test_utils.test = test


def pytest_collection_modifyitems(config, items):
    only = set(filter(None, os.environ.get('VKDIFF_CONFORMANCE_SPARSE_ONLY', '').split(os.pathsep)))
    if not only:
        return
    keep, drop = [], []
    for item in items:
        in_scope = os.path.basename(str(item.fspath)) in only
        sparse = 'sparse' in getattr(getattr(item, 'function', None), REQUIRES, ())
        (drop if in_scope and not sparse else keep).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep
