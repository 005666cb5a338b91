"""A long gradient-fuzzing campaign (issue 9, "the guard"): random legal kernels from
tests/autodiff/gradfuzz, each checked in f64 (Tape vs central differences, and the dot test
FwdMode vs Tape). Prints the count checked and the disagreements; saves each failing program's
source (a module that runs on its own) with the details to --out.

  .venv/bin/python tools/fuzz_gradients.py --kernels 10000 --jobs 2  # the campaign, one worker per core
  .venv/bin/python tools/fuzz_gradients.py -n 200 --only toplocal   # one known-bug feature
  .venv/bin/python tools/fuzz_gradients.py --shrink -n 500          # stop at the first failure, shrink it
  .venv/bin/python tools/fuzz_gradients.py --replay fuzz-failures/case-3.py
"""
import argparse
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import traceback

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [ROOT, os.path.join(ROOT, 'tests', 'autodiff')]

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402

from gradfuzz import check  # noqa: E402
from gradfuzz.gen import ALL, KNOWN_BUGS  # noqa: E402
from gradfuzz.program import programs  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('-n', type=int, default=1000, help='programs to generate')
    ap.add_argument('--seed', type=int, default=None, help='hypothesis seed (default: random)')
    ap.add_argument('--size', default='full', choices=('small', 'full'))
    ap.add_argument('--without', default='', help='comma-separated known-bug features to leave out: '
                    + ', '.join(KNOWN_BUGS))
    ap.add_argument('--only', default=None, help='comma-separated: generate only these known-bug features')
    ap.add_argument('--out', default='fuzz-failures', help='folder for failing programs')
    ap.add_argument('--shrink', action='store_true', help='stop at the first failure and shrink it')
    ap.add_argument('--replay', default=None, help='check one saved program file')
    ap.add_argument('--f32', action='store_true', help='also compare the f32 forward value with f64')
    ap.add_argument('--timeout', type=int, default=300, help='seconds per program (compile included); '
                    'a slower one is saved and counted as slow')
    ap.add_argument('--jobs', type=int, default=1, help='worker processes, each with its own seed '
                    '(seed, seed+1, ...); one combined count is printed')
    ap.add_argument('--kernels', type=int, default=None, help='stop when this many kernels have been checked '
                    '(all workers together)')
    ap.add_argument('--progress', action='store_true', help=argparse.SUPPRESS)  # a worker's per-program counts
    a = ap.parse_args()
    if a.replay:
        return replay(a.replay)
    if a.jobs > 1 or a.kernels is not None and not a.progress:
        return campaign(a)
    features = set(ALL) if a.only is None else set(filter(None, a.only.split(',')))
    features -= set(filter(None, a.without.split(',')))
    os.makedirs(a.out, exist_ok=True)
    stats = {'programs': 0, 'kernels': 0, 'disagreements': 0, 'errors': 0, 'fd': 0, 'skipped': 0, 'f32': 0,
             'slow': 0}
    signal.signal(signal.SIGALRM, _alarm)
    t0 = time.time()

    def record(program, text):
        k = stats['disagreements'] + stats['errors']
        # while shrinking, one file: the last failing program is the smallest
        name = f'shrunk-{os.getpid()}.py' if a.shrink else f'case-{os.getpid()}-{k}.py'
        path = os.path.join(a.out, name)
        with open(path, 'w') as f:
            f.write(program.source + '\n\n"""\n' + text.replace('"""', "'''") + '\n"""\n')
        print(f'  saved {path}', flush=True)

    @settings(max_examples=a.n, derandomize=False, database=None, deadline=None,
              phases=[Phase.generate] + ([Phase.shrink] if a.shrink else []),
              suppress_health_check=list(HealthCheck))
    @given(programs(frozenset(features), a.size))
    def one(program):
        signal.alarm(a.timeout)
        try:
            check_one(program)
        except Slow:
            stats['slow'] += 1
            print(f'#{stats["programs"]}: slower than {a.timeout} s', flush=True)
            record(program, f'slower than {a.timeout} s')
        finally:
            signal.alarm(0)

    def check_one(program):
        stats['programs'] += 1
        stats['kernels'] += program.kernels
        try:
            mod, _ = check.load(program.source)
        except Exception:
            stats['errors'] += 1
            msg = traceback.format_exc()
            print(f'#{stats["programs"]}: ERROR\n{msg}', flush=True)
            record(program, msg)
            if a.shrink:
                raise
            return
        try:
            r = check.check(mod)
            stats['fd'] += r['fd_checked']
            stats['skipped'] += r['fd_skipped']
            if a.f32:
                check.unload(mod)
                stats['f32'] += check.check_f32(program.source, r['loss']) is True
        except Exception as e:
            stats['disagreements' if isinstance(e, check.Mismatch) else 'errors'] += 1
            msg = str(e) if isinstance(e, check.Mismatch) else traceback.format_exc()
            print(f'#{stats["programs"]}: {type(e).__name__}\n{msg}', flush=True)
            record(program, msg)
            if a.shrink:
                raise
        finally:
            check.unload(mod)
        if a.progress:
            print('@@' + json.dumps(stats), flush=True)
        elif stats['programs'] % 25 == 0:
            report(stats, t0)

    if a.seed is not None:
        one = __import__('hypothesis').seed(a.seed)(one)
    try:
        one()
    except Exception as e:
        print(f'\nshrunk failing program (last one saved in {a.out}):\n{e}')
    report(stats, t0)
    return 1 if stats['disagreements'] or stats['errors'] else 0


def campaign(a):
    """Run a.jobs workers (this tool with --progress and seeds seed, seed+1, ...), print their
    combined counts every 25 programs, pass on everything else they print, and stop them all when
    a.kernels kernels have been checked or every worker has run a.n programs."""
    seed = a.seed if a.seed is not None else random.randrange(2**31)

    passthrough = []
    skip = {'--jobs', '--kernels', '--seed', '-n'}
    argv = sys.argv[1:]
    i = 0
    while i < len(argv):
        if argv[i] in skip:
            i += 2
            continue
        if any(argv[i].startswith(k + '=') for k in skip):
            i += 1
            continue
        passthrough.append(argv[i])
        i += 1
    n = a.n if a.kernels is None else max(a.n, a.kernels)
    print(f'campaign: {a.jobs} workers, seeds {seed}..{seed + a.jobs - 1}, '
          f'stop at {a.kernels or "-"} kernels or {n} programs per worker', flush=True)
    workers = [subprocess.Popen([sys.executable, os.path.abspath(__file__), '--progress', '--seed', str(seed + j),
                                 '-n', str(n)] + passthrough, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, bufsize=1) for j in range(a.jobs)]
    per = [dict(programs=0, kernels=0, disagreements=0, errors=0, fd=0, skipped=0, f32=0, slow=0)
           for _ in workers]
    lock = threading.Lock()
    t0 = time.time()
    done = threading.Event()

    def total():
        return {k: sum(p[k] for p in per) for k in per[0]}

    def follow(j, proc):
        for line in proc.stdout:
            if line.startswith('@@'):
                with lock:
                    per[j] = json.loads(line[2:])
                    t = total()
                    if t['programs'] % 25 == 0:
                        report(t, t0)
                    if a.kernels is not None and t['kernels'] >= a.kernels:
                        done.set()
            elif not line.startswith('['):
                with lock:
                    print(f'[worker {j}, seed {seed + j}] {line}', end='', flush=True)

    threads = [threading.Thread(target=follow, args=(j, p), daemon=True) for j, p in enumerate(workers)]
    for t in threads:
        t.start()
    try:
        while not done.is_set() and any(p.poll() is None for p in workers):
            done.wait(1.0)
    finally:
        for p in workers:
            if p.poll() is None:
                p.terminate()
        for p in workers:
            p.wait()
        for t in threads:
            t.join(timeout=5)
    t = total()
    print('final:', flush=True)
    report(t, t0)
    print('per worker: ' + ', '.join(f'seed {seed + j}: {p["programs"]} programs / {p["kernels"]} kernels'
                                     for j, p in enumerate(per)), flush=True)
    return 1 if t['disagreements'] or t['errors'] else 0


class Slow(BaseException):
    pass


def _alarm(*_):
    raise Slow()


def report(stats, t0):
    print(f'[{time.time() - t0:7.0f}s] programs {stats["programs"]}, kernels {stats["kernels"]}, '
          f'directional checks {stats["fd"]} (skipped as non-smooth {stats["skipped"]}), '
          f'f32 vs f64 agreed {stats["f32"]}, '
          f'disagreements {stats["disagreements"]}, errors {stats["errors"]}, slow {stats["slow"]}', flush=True)


def replay(path):
    with open(path) as f:
        source = f.read()
    mod, _ = check.load(source)
    try:
        print(check.check(mod))
        print('agrees')
        return 0
    except check.Mismatch as e:
        print(f'DISAGREES:\n{e}')
        return 1


if __name__ == '__main__':
    sys.exit(main())
