"""Build stage (run by CMakeLists.txt at configure time): finds Kompute 0.9.0's C++ sources and
prints the path of their src/ folder.

The sources are those of the kp==0.9.0 sdist on PyPI, checked against its sha256. In order:
1. $VKDIFF_KOMPUTE_SRC: an unpacked copy (the sdist's root or its src/ folder);
2. <cache>/src/kp-0.9.0/src, unpacked earlier;
3. <cache>/sdist/kp-0.9.0.tar.gz, downloaded earlier (or put there by hand for offline builds);
4. a download of the sdist from PyPI's files host, else through `python -m pip download`.
<cache> is $VKDIFF_BUILD_CACHE, else $XDG_CACHE_HOME/vkdiff, else ~/.cache/vkdiff.

    python kompute_sources.py            -> prints the src/ path, exit 0; or a reason, exit 1
"""
import hashlib
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import urllib.request

VERSION = '0.9.0'
SDIST = f'kp-{VERSION}.tar.gz'
SHA256 = '98e583dc6e9731ff6d7a3e3317817e4d93f7b2945929619e29a56325db279949'
URL = ('https://files.pythonhosted.org/packages/1b/d5/'
       '34b557d8ce330fade0aa2e934d6a6871b02bbc6ef674abb153b4c1d0cdd0/' + SDIST)


def log(msg):
    print(f'[vkdiff kompute] {msg}', file=sys.stderr)


def cache_root():
    env = os.environ.get('VKDIFF_BUILD_CACHE')
    if env:
        return env
    base = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
    return os.path.join(base, 'vkdiff')


def is_src(path):
    return os.path.isfile(os.path.join(path, 'Algorithm.cpp')) and \
        os.path.isfile(os.path.join(path, 'include', 'kompute', 'Manager.hpp'))


def sha256(path):
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 16), b''):
            h.update(chunk)
    return h.hexdigest()


def download(dest):
    """Puts the verified sdist at `dest`; raises OSError with the reasons when it cannot."""
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    reasons = []
    with tempfile.TemporaryDirectory(dir=os.path.dirname(dest)) as tmp:
        got = os.path.join(tmp, SDIST)
        try:
            log(f'downloading {SDIST} from PyPI')
            with urllib.request.urlopen(URL, timeout=60) as r, open(got, 'wb') as f:
                shutil.copyfileobj(r, f)
        except OSError as e:
            reasons.append(f'direct download: {e}')
            log(f'direct download failed ({e}); trying pip download')
            r = subprocess.run([sys.executable, '-m', 'pip', 'download', '-q', '--no-deps',
                                '--no-binary', ':all:', '-d', tmp, f'kp=={VERSION}'],
                               capture_output=True, text=True)
            if r.returncode != 0:
                reasons.append('pip download: ' + (r.stderr.strip().splitlines() or ['?'])[-1])
        if not os.path.isfile(got):
            raise OSError('; '.join(reasons))
        if sha256(got) != SHA256:
            raise OSError(f'{SDIST} has sha256 {sha256(got)}, expected {SHA256}')
        os.replace(got, dest)


def unpack(sdist, into):
    if sha256(sdist) != SHA256:
        raise OSError(f'{sdist}: sha256 mismatch (expected {SHA256}); delete it to download again')
    os.makedirs(into, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=into) as tmp:
        with tarfile.open(sdist) as t:
            members = [m for m in t.getmembers() if m.name.startswith(f'kp-{VERSION}/src/')]
            for m in members:
                if m.issym() or m.islnk() or '..' in m.name.split('/'):
                    raise OSError(f'{sdist}: unexpected member {m.name}')
            t.extractall(tmp, members=members)
        final = os.path.join(into, f'kp-{VERSION}')
        if not is_src(os.path.join(final, 'src')):  # another build may have unpacked it meanwhile
            shutil.rmtree(final, ignore_errors=True)
            os.replace(os.path.join(tmp, f'kp-{VERSION}'), final)
    return os.path.join(into, f'kp-{VERSION}', 'src')


def find():
    env = os.environ.get('VKDIFF_KOMPUTE_SRC')
    if env:
        for cand in (env, os.path.join(env, 'src')):
            if is_src(cand):
                return os.path.abspath(cand)
        raise OSError(f'VKDIFF_KOMPUTE_SRC={env} holds neither Kompute {VERSION}\'s src/ '
                      'folder nor an unpacked kp sdist')
    cache = cache_root()
    src = os.path.join(cache, 'src', f'kp-{VERSION}', 'src')
    if is_src(src):
        return src
    sdist = os.path.join(cache, 'sdist', SDIST)
    if not os.path.isfile(sdist):
        download(sdist)
    return unpack(sdist, os.path.join(cache, 'src'))


def main():
    try:
        print(find())
    except OSError as e:
        log(f'cannot get the Kompute {VERSION} sources: {e}\n'
            f'  offline: put {SDIST} (sha256 {SHA256}) in {os.path.join(cache_root(), "sdist")}'
            ' or set VKDIFF_KOMPUTE_SRC to an unpacked copy')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
