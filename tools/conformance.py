#!/usr/bin/env python3
"""Taichi conformance ratchet: runs Taichi v1.7.4's own tests (the kit in ../shared/taichi-conformance,
beside the checkout) against this checkout's vkdiff and compares with tests/conformance/.

    python tools/conformance.py                 # CI check: every test in expected-pass.txt must pass
    python tools/conformance.py --raise         # run, then add every newly passing test to the list
    python tools/conformance.py --raise --from-json run.json   # same, from a saved run.py --json
    python tools/conformance.py test_ad_basics.py -v           # only some files or groups

The check runs `run.py autodiff language <every other file named in the list> --expect
tests/conformance/expected-pass.txt` (a test listed from outside the two groups is run too) and then
prints how many of the 889 tests Taichi's own Vulkan backend passes (taichi-vulkan-passes.txt)
pass here. `--raise` keeps the list sorted and only ever adds to it (a union): a listed test that
fails now is reported, not dropped (find out why, or drop it by hand with a reason).
Then the sparse check: the kit skips every test that `require=ti.extension.sparse`; the
project's pytest plugin tests/conformance/vkdiff_sparse_ext.py lets them run, on the files
tests/conformance/expected-pass-sparse.txt names (of those outside the kit's sparse group, only
the tests that require sparse), and every test in that list must pass too:

    python tools/conformance.py --sparse           # only the sparse check
    python tools/conformance.py --sparse --raise   # raise expected-pass-sparse.txt: the sparse
                                                   # group and every kit file with a sparse test
    python tools/conformance.py --no-sparse        # only the autodiff/language check

On another Vulkan driver (tools/test.sh runs this on SwiftShader; the lavapipe ratchet stays the
gate): `--driver swiftshader` (the checkout's .drivers/swiftshader/, from tools/setup.sh) or
`--driver PATH/icd.json` runs the kit there, and `--report-only` prints the counts (and how many
tests of each list pass) without failing:

    python tools/conformance.py --driver swiftshader --report-only

The all-archs check: tests/conformance/expected-pass-all-archs.txt lists tests Taichi keeps off
Vulkan (they run only with TAICHI_CONFORMANCE_ALL_ARCHS=1) that vkdiff passes; the CI check runs
the files it names with that variable set, and every test in it must pass too:

    python tools/conformance.py --all-archs                       # only the all-archs check
    python tools/conformance.py --all-archs --raise test_gui.py   # add the newly passing tests of
                                                                  # these files (not in expected-pass.txt)

tests/conformance/known-differences.txt lists tests vkdiff deliberately fails (`id  # reason`);
tests/conformance/known-differences-all-archs.txt those among the tests Taichi keeps off Vulkan
(run with TAICHI_CONFORMANCE_ALL_ARCHS=1, e.g. `run.py autodiff -v`).
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KIT = os.path.join(os.path.dirname(ROOT), 'shared', 'taichi-conformance')
EXPECTED = os.path.join(ROOT, 'tests', 'conformance', 'expected-pass.txt')
KNOWN = os.path.join(ROOT, 'tests', 'conformance', 'known-differences.txt')
KNOWN_ALL_ARCHS = os.path.join(ROOT, 'tests', 'conformance', 'known-differences-all-archs.txt')
EXPECTED_SPARSE = os.path.join(ROOT, 'tests', 'conformance', 'expected-pass-sparse.txt')
EXPECTED_ALL_ARCHS = os.path.join(ROOT, 'tests', 'conformance', 'expected-pass-all-archs.txt')
PLUGIN_DIR = os.path.join(ROOT, 'tests', 'conformance')  # vkdiff_sparse_ext.py


def read_ids(path):
    """Test ids of a list file: one a line, '#' starts a comment."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [l.split('#')[0].strip() for l in f if l.split('#')[0].strip()]


def write_ids(path, ids):
    with open(path, 'w') as f:
        f.write(''.join(t + '\n' for t in sorted(set(ids))))


def run_kit(files, extra, json_path, expect, sparse_only=None, all_archs=False):
    """The kit's run.py on `files`; expect: the list every test of which must pass; sparse_only:
    None, or the file names of which only the tests requiring sparse run (with the sparse
    plugin loaded: a list, maybe empty, turns the plugin on); all_archs: run with
    TAICHI_CONFORMANCE_ALL_ARCHS=1 (tests Taichi keeps off Vulkan run too)."""
    py = os.path.join(ROOT, '.venv', 'bin', 'python')
    py = py if os.path.exists(py) else sys.executable
    cmd = [py, os.path.join(KIT, 'run.py'), '--python', py, '--json', json_path] + files + extra
    if expect:
        cmd += ['--expect', expect]
    env = dict(os.environ)
    # this checkout's vkdiff, whatever the venv has installed
    path = [ROOT] + ([PLUGIN_DIR] if sparse_only is not None else [])
    env['PYTHONPATH'] = os.pathsep.join(path + ([env['PYTHONPATH']] if env.get('PYTHONPATH') else []))
    if all_archs:
        env['TAICHI_CONFORMANCE_ALL_ARCHS'] = '1'
    if sparse_only is not None:
        env['PYTEST_ADDOPTS'] = (env.get('PYTEST_ADDOPTS', '') + ' -p vkdiff_sparse_ext').strip()
        env['VKDIFF_CONFORMANCE_SPARSE_ONLY'] = os.pathsep.join(sparse_only)
    return subprocess.run(cmd, cwd=ROOT, env=env).returncode


def kit_sparse_files():
    """(the kit's sparse group's files, every other kit file with a test that requires sparse)."""
    spec = importlib.util.spec_from_file_location('taichi_conformance_run', os.path.join(KIT, 'run.py'))
    kit = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(kit)  # run.py runs nothing on import (a __main__ guard)
    group = kit.expand(['sparse'])
    suite = os.path.join(KIT, 'suite', 'tests', 'python')
    others = []
    for name in sorted(os.listdir(suite)):
        if name.startswith('test_') and name.endswith('.py') and name not in group:
            with open(os.path.join(suite, name)) as f:
                if 'extension.sparse' in f.read():
                    others.append(name)
    return group, others


def driver_icd(name):
    """The ICD manifest `--driver name` means: 'swiftshader' (the checkout's, tools/setup.sh)
    or a path to a json file."""
    path = (os.path.join(ROOT, '.drivers', 'swiftshader', 'vk_swiftshader_icd.json')
            if name == 'swiftshader' else os.path.abspath(name))
    if not os.path.isfile(path):
        raise SystemExit(f'--driver {name}: no ICD manifest at {path}'
                         + (' (bash tools/setup.sh installs SwiftShader there)'
                            if name == 'swiftshader' else ''))
    return path


def list_report(path, results):
    """'N of M' of the tests the list file `path` names that passed in `results`."""
    want = read_ids(path)
    n = sum(1 for t in want if results.get(t, {}).get('outcome') == 'passed')
    return f'{os.path.basename(path)}: {n} of {len(want)} pass'


def sparse_check(a, extra):
    """The sparse check (or, with --raise, raising its list); returns the exit status."""
    t0 = time.time()
    group, others = kit_sparse_files()
    if a.raise_:  # look everywhere a sparse test may pass now
        files, extra_files = group + others, others
    else:  # the CI check: the files the list names (the group's others have none that pass)
        listed = {t.split('::')[0] for t in read_ids(EXPECTED_SPARSE)}
        files = [f for f in group + others if f in listed]
        files += sorted(listed - set(files))
        extra_files = [f for f in files if f not in group]
    fd, json_path = tempfile.mkstemp(suffix='.json', prefix='conformance-sparse-')
    os.close(fd)
    try:
        status = run_kit(files, extra, json_path, sparse_only=extra_files,
                         expect=None if a.raise_ or a.report_only else EXPECTED_SPARSE)
        with open(json_path) as f:
            results = json.load(f)
    finally:
        os.unlink(json_path)
    n = {k: sum(1 for r in results.values() if r['outcome'] == k)
         for k in ('passed', 'failed', 'skipped')}
    passed = {t for t, r in results.items() if r['outcome'] == 'passed'}
    print(f"sparse check (tests/conformance/vkdiff_sparse_ext.py: {len(files) - len(extra_files)} "
          f"files of the kit's sparse group, the sparse tests of {len(extra_files)} more): "
          f"vkdiff passes {n['passed']}, "
          f"fails {n['failed']}, {n['skipped']} skipped (other arch or extension); "
          f"{time.time() - t0:.0f} s")
    if a.report_only:
        print(f'{list_report(EXPECTED_SPARSE, results)} (report only)')
        return 0
    if a.raise_:
        old = set(read_ids(EXPECTED_SPARSE))
        lost = sorted(t for t in old & set(results) if t not in passed)
        for t in lost:
            print(f'LISTED BUT NOT PASSING (kept in the list): {t}: {results[t]["message"]}')
        new = old | (passed - set(read_ids(EXPECTED)))  # (test_listgen.py's: the main check's)
        write_ids(EXPECTED_SPARSE, new)
        print(f'expected-pass-sparse.txt: {len(old)} -> {len(new)} tests')
        status = 1 if lost else 0
    return status


def all_archs_check(a, extra):
    """The all-archs check (or, with --raise, raising its list from a.files); the exit status."""
    t0 = time.time()
    listed = sorted({t.split('::')[0] for t in read_ids(EXPECTED_ALL_ARCHS)})
    files = sorted(set(a.files) | set(listed)) if a.raise_ else listed
    if not files:
        return 0
    fd, json_path = tempfile.mkstemp(suffix='.json', prefix='conformance-all-archs-')
    os.close(fd)
    try:
        status = run_kit(files, extra, json_path, all_archs=True,
                         expect=None if a.raise_ or a.report_only else EXPECTED_ALL_ARCHS)
        with open(json_path) as f:
            results = json.load(f)
    finally:
        os.unlink(json_path)
    passed = {t for t, r in results.items() if r['outcome'] == 'passed'}
    print(f'all-archs check (TAICHI_CONFORMANCE_ALL_ARCHS=1, {len(files)} files): '
          f'{list_report(EXPECTED_ALL_ARCHS, results)}; {time.time() - t0:.0f} s')
    if a.report_only:
        return 0
    if a.raise_:
        old = set(read_ids(EXPECTED_ALL_ARCHS))
        lost = sorted(t for t in old & set(results) if t not in passed)
        for t in lost:
            print(f'LISTED BUT NOT PASSING (kept in the list): {t}: {results[t]["message"]}')
        ref = set(read_ids(os.path.join(KIT, 'taichi-vulkan-passes.txt')))  # (the main check's)
        new = old | (passed - ref - set(read_ids(EXPECTED)) - set(read_ids(EXPECTED_SPARSE)))
        write_ids(EXPECTED_ALL_ARCHS, new)
        print(f'expected-pass-all-archs.txt: {len(old)} -> {len(new)} tests')
        status = 1 if lost else 0
    return status


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('files', nargs='*', help='groups or files (default: autodiff language and '
                    'every file named in expected-pass.txt)')
    ap.add_argument('--raise', dest='raise_', action='store_true',
                    help='add every passing test to tests/conformance/expected-pass.txt')
    ap.add_argument('--from-json', help='use a saved `run.py --json` result instead of running')
    ap.add_argument('--json', help='also keep every outcome (and first error line) in this file')
    ap.add_argument('--file-timeout', type=int, default=600, help='seconds per file (default 600)')
    ap.add_argument('-v', action='store_true', help='print every failure with its first line')
    ap.add_argument('--sparse', action='store_true', help='only the sparse check')
    ap.add_argument('--no-sparse', action='store_true', help='leave the sparse check out')
    ap.add_argument('--all-archs', action='store_true',
                    help='only the all-archs check (tests/conformance/expected-pass-all-archs.txt)')
    ap.add_argument('--driver', help="run on this Vulkan driver: 'swiftshader' (the checkout's, "
                    'from tools/setup.sh) or an ICD json path (sets VK_ICD_FILENAMES)')
    ap.add_argument('--report-only', action='store_true',
                    help='print the counts; fail on nothing (for a driver that is no gate)')
    a = ap.parse_args()
    if a.report_only and a.raise_:
        ap.error('--report-only and --raise exclude each other')
    if a.driver:
        os.environ['VK_ICD_FILENAMES'] = driver_icd(a.driver)
        os.environ.pop('VK_DRIVER_FILES', None)  # (it would win over VK_ICD_FILENAMES)
        print(f'conformance on the driver {os.environ["VK_ICD_FILENAMES"]}', flush=True)
    if not os.path.isdir(KIT):
        print(f'conformance kit not found at {KIT}: clone the project with shared/ beside it '
              '(or set VKDIFF_SKIP_CONFORMANCE=1 to skip this check)', file=sys.stderr)
        return 2
    if a.all_archs:
        return all_archs_check(a, ['--file-timeout', str(a.file_timeout)] + (['-v'] if a.v else []))
    if a.sparse:
        return sparse_check(a, ['--file-timeout', str(a.file_timeout)] + (['-v'] if a.v else []))
    files = a.files or ['autodiff', 'language'] + sorted({t.split('::')[0] for t in read_ids(EXPECTED)})
    t0 = time.time()
    status = 0
    if a.from_json:
        json_path = a.from_json
    else:
        fd, json_path = tempfile.mkstemp(suffix='.json', prefix='conformance-')
        os.close(fd)
        extra = ['--file-timeout', str(a.file_timeout)] + (['-v'] if a.v else [])
        # a check of some files only would report the rest of the list as not run
        status = run_kit(files, extra, json_path,
                         expect=EXPECTED if not (a.raise_ or a.files or a.report_only) else None)
    with open(json_path) as f:
        results = json.load(f)
    passed = {t for t, r in results.items() if r['outcome'] == 'passed'}
    ref = set(read_ids(os.path.join(KIT, 'taichi-vulkan-passes.txt')))
    ran_ref = {t for t in ref if t.split('::')[0] in {r.split('::')[0] for r in results}}
    known = set(read_ids(KNOWN))
    print(f'vkdiff passes {len(passed & ref)} of the {len(ref)} tests Taichi 1.7.4 passes on Vulkan'
          + (f' ({len(ran_ref)} of them in the files run)' if len(ran_ref) != len(ref) else '')
          + f'; {len(known & (ran_ref - passed))} of the rest are known differences'
          f' (tests/conformance/known-differences.txt); {time.time() - t0:.0f} s')
    if a.report_only:
        no64 = sum(1 for r in results.values()
                   if r['outcome'] == 'failed' and 'has no 64-bit' in r['message'])
        print(f'{list_report(EXPECTED, results)} (report only); of the failures, {no64} are '
              "the device's missing 64-bit floats or integers (the kit counts data64 as supported)")
        status = 0
    if a.raise_:
        old = set(read_ids(EXPECTED))
        ran = old & set(results)
        lost = sorted(t for t in ran if t not in passed)
        for t in lost:
            print(f'LISTED BUT NOT PASSING (kept in the list): {t}: {results[t]["message"]}')
        write_ids(EXPECTED, old | passed)
        print(f'expected-pass.txt: {len(old)} -> {len(old | passed)} tests')
        status = 1 if lost else 0
    if not a.from_json:
        if a.json:
            os.replace(json_path, a.json)
        else:
            os.unlink(json_path)
    if not (a.files or a.from_json or a.raise_ or a.no_sparse):  # the CI check: sparse too
        extra = ['--file-timeout', str(a.file_timeout)] + (['-v'] if a.v else [])
        status = sparse_check(a, extra) or status
        status = all_archs_check(a, extra) or status
    if a.report_only:
        return 0
    return status


if __name__ == '__main__':
    sys.exit(main())
