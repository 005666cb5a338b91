"""tools/gpu_check.py (issue 23 item 6): every part runs in subprocesses stopped at its budget
(children of children included), and the facts part reports the device and memory chosen."""
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, 'tools'))
import gpu_check  # noqa: E402


def test_a_part_past_its_budget_is_stopped_with_its_children(tmp_path):
    marker = tmp_path / 'grandchild.pid'
    code = ('import subprocess, time\n'
            f'p = subprocess.Popen(["sleep", "60"]); open({str(marker)!r}, "w").write(str(p.pid))\n'
            'time.sleep(60)\n')
    t0 = time.perf_counter()
    rc, _, took = gpu_check.run_limited([sys.executable, '-c', code], 2.0)
    assert rc is None and took < 10 and time.perf_counter() - t0 < 10
    pid = int(marker.read_text())
    time.sleep(0.2)
    try:
        os.kill(pid, 0)
        alive = open(f'/proc/{pid}/stat').read().split()[2] != 'Z'
    except (ProcessLookupError, FileNotFoundError):
        alive = False
    assert not alive


def test_facts_part_writes_the_report(tmp_path):
    out = tmp_path / 'report.json'
    r = subprocess.run([sys.executable, 'tools/gpu_check.py', '--only', 'facts', '--out', str(out),
                        '--budget-scale', '3'], cwd=ROOT, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    rep = json.loads(out.read_text())
    facts = rep['parts']['facts']
    assert facts['ok'] and facts['used']['uuid'] == facts['devices'][0]['uuid']
    assert facts['memory']['field']['flags'].startswith('DEVICE_LOCAL')
    assert facts['subgroup_size'] >= 1 and facts['limits']['max_workgroup_invocations'] >= 128
    assert 'facts' in r.stdout and rep['seconds'] <= rep['total_budget']
