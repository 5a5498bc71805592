"""A test run that leaves a process running fails, naming it, and the process is ended."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from cao_tmux import procs

LEAKY = '''
import subprocess


def test_starts_a_daemon_and_forgets_it(tmp_path):
    daemon = subprocess.Popen(["sleep", "300"], cwd=tmp_path, start_new_session=True)
    (tmp_path.parent.parent / "daemon.pid").write_text(str(daemon.pid))
'''


@pytest.mark.slow
def test_a_run_that_leaves_a_process_running_fails_and_ends_it(tmp_path):
    (tmp_path / "test_leaky.py").write_text(LEAKY, encoding="utf-8")
    (tmp_path / "runs").mkdir()
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "cao_testkit",
                           "--basetemp", str(tmp_path / "runs" / "base"), "test_leaky.py"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    pid = int((tmp_path / "runs" / "daemon.pid").read_text())
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 passed" in done.stdout
    assert re.search(rf"1 process\(es\) left running by the tests, now ended =+\npid {pid} .*: sleep 300",
                     done.stdout), done.stdout
    ended = procs.read_proc(pid)
    assert ended is None or ended.state == "Z", ended
