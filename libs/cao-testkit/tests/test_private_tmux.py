"""A private tmux server's teardown ends every program its panes started, not only the panes."""

from __future__ import annotations

import os
import sys
import time

from cao_testkit.tmux import private_tmux_socket

# A program as stubborn as some agent CLIs: it ignores SIGHUP and SIGTERM, and starts a child in a
# session of its own (outside the pane's process group). It writes both pids, then idles.
STUBBORN = """
import os, signal, subprocess, sys, time
signal.signal(signal.SIGHUP, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
child = subprocess.Popen(["sleep", "1000"], start_new_session=True)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(f"{os.getpid()} {child.pid}")
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(1000)
"""


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            return f.read().rsplit(b")", 1)[1].split()[0] not in (b"Z", b"X")
    except OSError:
        return False


def _wait_for(path, timeout: float = 10.0) -> str:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.02)
    return path.read_text()


def test_programs_that_ignore_the_hang_up_end_with_the_server(tmp_path):
    pids_file = tmp_path / "pids"
    with private_tmux_socket() as tmux:
        tmux.run("new-session", "-d", "-s", "cao-stubborn", sys.executable, "-c", STUBBORN, str(pids_file))
        pids = [int(p) for p in _wait_for(pids_file).split()]
        assert all(_running(p) for p in pids)
    deadline = time.monotonic() + 3
    while any(_running(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.02)
    left = [p for p in pids if _running(p)]
    for pid in left:
        os.kill(pid, 9)  # not this test's to leave behind, whatever it asserts
    assert not left, f"still running after the private server's teardown: {left}"
