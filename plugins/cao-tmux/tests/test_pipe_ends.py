"""An output pipe ends with tmux's end of it, even when nobody reads its FIFO any more."""

from __future__ import annotations

import os

import pytest
from cao_tmux import procs, quoting

pytestmark = pytest.mark.tmux


def _pipes(tmux, pane_pid: int) -> list[int]:
    """The tmux server's children other than the pane's program: the pane's output pipe."""
    server = tmux.server_pid()
    return [p.pid for p in procs.snapshot().values()
            if p.ppid == server and p.pid != pane_pid and p.state not in ("Z", "X")]


def test_a_pipe_into_a_fifo_nobody_reads_ends_when_tmux_closes_it(private_tmux, tmp_path, wait_until):
    # The reader is gone before the pipe opens the FIFO: a backend closed, or its process killed, just
    # after it asked tmux for the pipe. Waiting in open() for a reader, the pipe would never end.
    fifo = tmp_path / "unread.out"
    os.mkfifo(fifo)
    private_tmux.run("new-session", "-d", "-s", "cao-pipe", "cat")
    pane_pid = int(private_tmux.run("display-message", "-p", "-t", "cao-pipe", "#{pane_pid}").stdout)
    private_tmux.run("pipe-pane", "-t", "cao-pipe", quoting.pipe_command(str(fifo)))
    assert _pipes(private_tmux, pane_pid)
    private_tmux.run("pipe-pane", "-t", "cao-pipe")
    wait_until(lambda: not _pipes(private_tmux, pane_pid), timeout=5, what="the closed pipe's process to end")
