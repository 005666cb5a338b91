"""vkdiff.distributed.Pool(backend='ray'): one actor per worker holding its runtime; the same
results as the serial loop and the process pool, bit for bit; every socket Ray listens on is on
loopback."""
import os
from pathlib import Path

import numpy as np
import pytest

from vkdiff.distributed import Pool, WorkerCrashedError

import sweep_tasks
from test_pool_process import CONFIGS

LOOPBACK = {'127.0.0.1', '::1', '::ffff:127.0.0.1'}


def test_ray_sweep_equals_the_serial_loop_and_inits_once(local_ray):
    serial = [sweep_tasks.projectile(c) for c in CONFIGS]
    with Pool(init=sweep_tasks.setup, init_args=('ray',), workers=2, backend='ray') as pool:
        pooled = pool.map(sweep_tasks.projectile, CONFIGS)
        for (l1, g1, d1), (l2, g2, d2) in zip(serial, pooled):
            assert np.float32(l1).tobytes() == np.float32(l2).tobytes()
            assert g1.tobytes() == g2.tobytes() and np.float32(d1) == np.float32(d2)
        counts = pool.map(sweep_tasks.init_count, range(8))
        assert {c for _, c, _ in counts} == {1} and {t for _, _, t in counts} == {'ray'}
        info = pool.worker_info()
        assert len(info) == 2 and all(calls == 1 for _, calls, _ in info)
        # CPU drivers: each actor got one of the two CPUs and as many lavapipe threads (0: inline)
        assert {p.env.get('LP_NUM_THREADS') for _, _, p in info} <= {'0', '1'}
        with pytest.raises(ValueError, match='refused by the worker') as e:
            pool.map(sweep_tasks.fail_on_negative, [1, -2, 3])
        assert 'fail_on_negative' in str(e.value.__cause__)
        with pytest.raises(WorkerCrashedError):
            pool.map(sweep_tasks.die_on, range(5))
        assert pool.map(sweep_tasks.fail_on_negative, [5, 6]) == [10, 12]


def _listening(proto):
    """{inode: (ip, port)} of listening sockets in /proc/net/<proto>."""
    out = {}
    path = Path('/proc/net') / proto
    if not path.exists():
        return out
    for line in path.read_text().splitlines()[1:]:
        f = line.split()
        if f[3] != '0A':  # TCP_LISTEN
            continue
        hexip, port = f[1].split(':')
        raw = bytes.fromhex(hexip)
        if len(raw) == 4:
            ip = '.'.join(str(b) for b in raw[::-1])
        else:
            words = [raw[i:i + 4][::-1] for i in range(0, 16, 4)]
            b = b''.join(words)
            ip = ('::ffff:' + '.'.join(str(x) for x in b[12:])) if b[:12] == bytes(10) + b'\xff\xff' \
                else ('::1' if b == bytes(15) + b'\x01' else b.hex())
        out[f[9]] = (ip, int(port, 16))
    return out


def _socket_inodes(pid):
    inodes = set()
    try:
        for fd in os.listdir(f'/proc/{pid}/fd'):
            try:
                target = os.readlink(f'/proc/{pid}/fd/{fd}')
            except OSError:
                continue
            if target.startswith('socket:['):
                inodes.add(target[8:-1])
    except OSError:
        pass
    return inodes


def _descendants(root):
    """root and every process below it (Ray's gcs_server, raylet and workers descend from the
    driver that started the local cluster: this test process)."""
    children = {}
    for d in os.listdir('/proc'):
        if not d.isdigit():
            continue
        try:
            stat = Path(f'/proc/{d}/stat').read_text()
        except OSError:
            continue
        ppid = int(stat.rpartition(')')[2].split()[1])
        children.setdefault(ppid, []).append(int(d))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, ()))
    return out


def _cmdline(pid):
    try:
        return Path(f'/proc/{pid}/cmdline').read_bytes().replace(b'\0', b' ').decode(errors='replace')[:80]
    except OSError:
        return '?'


def test_every_ray_socket_listens_on_loopback(local_ray):
    with Pool(workers=1, backend='ray') as pool:
        pool.map(sweep_tasks.fail_on_negative, [1])
        listening = {**_listening('tcp'), **_listening('tcp6')}
        found = []
        for pid in _descendants(os.getpid()):
            for inode in _socket_inodes(pid):
                if inode in listening:
                    found.append((_cmdline(pid), listening[inode]))
    assert len(found) >= 3, found  # gcs_server, raylet, workers: the test looked at real sockets
    assert all(ip in LOOPBACK for _, (ip, _) in found), found
