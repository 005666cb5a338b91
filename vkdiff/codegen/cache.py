"""Codegen stage: the cache of compiled SPIR-V binaries, in memory and on disk.

Disk entries are `<key>.spvc` files in the cache directory (`tools.cache_dir()`): a magic line, a
SHA-256 of the key and the binary, then the binary. An entry that is altered, truncated or not an
entry at all is discarded (and recompiled by the caller), never run. A cache directory that cannot
be created, read or written gives one warning and compilation goes on without the disk cache.
Writes go to a unique temporary file renamed into place, so concurrent processes and threads only
ever see whole entries."""
import hashlib
import os
import tempfile
import threading
import warnings

MAGIC = b'vkdiff spirv cache 2\n'
SUFFIX = '.spvc'  # (format 1, `<key>.spv` without a checksum, is neither read nor written)
_DIGEST = 32
_SPIRV_MAGIC = (0x07230203).to_bytes(4, 'little')

_lock = threading.Lock()
_memory = {}
_unusable = set()  # cache directories already warned about


class CacheWarning(UserWarning):
    """The SPIR-V disk cache could not be used, or an entry in it was corrupt."""


def _digest(key, data):
    return hashlib.sha256(key.encode() + b'\0' + data).digest()


def encode(key, data):
    return MAGIC + _digest(key, data) + data


def decode(key, blob):
    """The binary in an entry, or None if the entry is not intact."""
    head = len(MAGIC) + _DIGEST
    if len(blob) < head + 20 or not blob.startswith(MAGIC):
        return None
    data = blob[head:]
    if blob[len(MAGIC):head] != _digest(key, data) or len(data) % 4 or \
            not data.startswith(_SPIRV_MAGIC):
        return None
    return data


def _give_up(d, what, e):
    if d not in _unusable:
        _unusable.add(d)
        warnings.warn(f'vkdiff: the SPIR-V disk cache {d!r} is unusable ({what}: {e}); compiling '
                      'without it (set VKDIFF_CACHE_DIR to a writable folder, or VKDIFF_CACHE=0)',
                      CacheWarning, stacklevel=4)


def _directory(dir_fn):
    try:
        d = dir_fn()
    except OSError as e:
        _give_up(getattr(e, 'filename', None) or '?', 'cannot create it', e)
        return None
    return None if d is None or d in _unusable else d


def get(key, dir_fn):
    """The cached binary for `key`, or None. `dir_fn()` gives the cache directory (or None)."""
    with _lock:
        hit = _memory.get(key)
    if hit is not None:
        return hit
    d = _directory(dir_fn)
    if d is None:
        return None
    path = os.path.join(d, key + SUFFIX)
    try:
        with open(path, 'rb') as f:
            blob = f.read()
    except FileNotFoundError:
        return None
    except OSError as e:
        _give_up(d, 'cannot read it', e)
        return None
    data = decode(key, blob)
    if data is None:
        warnings.warn(f'vkdiff: discarded a corrupt SPIR-V cache entry {path} ({len(blob)} bytes); '
                      'recompiling', CacheWarning, stacklevel=3)
        try:
            os.remove(path)
        except OSError:
            pass  # the caller's put() replaces it
        return None
    with _lock:
        _memory[key] = data
    return data


def contains(key, dir_fn):
    """Whether get(key) would find an entry (in memory, or a file on disk, not yet checked)."""
    with _lock:
        if key in _memory:
            return True
    d = _directory(dir_fn)
    return d is not None and os.path.exists(os.path.join(d, key + SUFFIX))


def put(key, data, dir_fn):
    with _lock:
        _memory[key] = data
    d = _directory(dir_fn)
    if d is None:
        return
    tmp = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=key[:16] + '.', suffix='.tmp', dir=d)
        with os.fdopen(fd, 'wb') as f:
            f.write(encode(key, data))
        os.replace(tmp, os.path.join(d, key + SUFFIX))
        tmp = None
    except OSError as e:
        _give_up(d, 'cannot write to it', e)
    finally:
        if tmp is not None:
            try:
                os.remove(tmp)
            except OSError:
                pass


def clear_memory():
    """Forget the in-memory copies (the next lookups read the disk cache)."""
    with _lock:
        _memory.clear()
