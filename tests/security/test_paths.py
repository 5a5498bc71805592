"""Hole 6 of the trust issue, through the real server: a working directory whose name tmux would read
as a format runs the agent in that very folder, or nowhere."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from .conftest import client as _client
from .conftest import worker as _worker


def _agent_folder(terminal_id: str, timeout: float = 10.0) -> str:
    """The working folder of the process carrying the terminal's id in its environment (the agent)."""
    marker = f"CAO_TERMINAL_ID={terminal_id}".encode()
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid in filter(str.isdigit, os.listdir("/proc")):
            try:
                with open(f"/proc/{pid}/environ", "rb") as f:
                    if marker in f.read().split(b"\0"):
                        return os.readlink(f"/proc/{pid}/cwd")
            except OSError:
                continue
        time.sleep(0.05)
    raise AssertionError(f"no process of terminal {terminal_id} found")


@pytest.mark.parametrize("name", ["#[x", "a##[b", "#{pane_id}", "#(touch owned)", "x#[fg=red]#{?a,b,c}"])
def test_a_folder_named_like_a_tmux_format_is_where_the_agent_runs(cao_server, name):
    folder = Path(cao_server.workdir) / name
    folder.mkdir()
    with _client(cao_server) as http:
        made = http.post("/sessions", json=_worker(cao_server, working_directory=str(folder)))
        assert made.status_code == 201, made.text
        assert made.json()["working_directory"] == str(folder)
        assert _agent_folder(made.json()["id"]) == str(folder)
    assert not (Path(cao_server.workdir) / "owned").exists()
