"""Processes a test session leaves behind.

What a test starts runs in the session's temporary folder (``tmp_path``, a cao home, a sandboxed HOME)
or on one of its private tmux servers, and must be gone once the test's fixtures are torn down. A
process that names one of those folders in its working folder, command line or environment and still
runs when the session ends has escaped its test's clean-up. Only processes started after this one are
looked at, never this process or its ancestors.
"""

from __future__ import annotations

import dataclasses
import os
import re
import time
from collections.abc import Iterable

from cao_tmux import procs

__all__ = ["Leftover", "end", "left_behind"]


@dataclasses.dataclass(frozen=True)
class Leftover:
    """A process still running: its pid, its parent's, its working folder and command line."""

    proc: procs.Proc
    cwd: str
    command: str

    def __str__(self) -> str:
        return f"pid {self.proc.pid} (parent {self.proc.ppid}) in {self.cwd}: {self.command}"


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:  # gone, or another user's
        return b""


def _ancestors() -> set[int]:
    pid, found = os.getpid(), set()
    while pid > 0 and pid not in found:
        found.add(pid)
        proc = procs.read_proc(pid)
        pid = proc.ppid if proc else 0
    return found


def _scan(folders: Iterable[str]) -> list[Leftover]:
    # A folder counts where it is followed by a separator or nothing: pytest-27 never matches pytest-270.
    named = re.compile(b"|".join(re.escape(os.fsencode(f)) + rb"(?![\w.-])" for f in folders))
    me = procs.read_proc(os.getpid())
    skip = _ancestors()
    found = []
    for proc in procs.snapshot().values():
        if proc.pid in skip or proc.state in ("Z", "X") or me is None or proc.start < me.start:
            continue
        command = _read(f"/proc/{proc.pid}/cmdline")
        try:
            cwd = os.readlink(f"/proc/{proc.pid}/cwd")
        except OSError:
            cwd = ""
        names = (command, os.fsencode(cwd), _read(f"/proc/{proc.pid}/environ"))
        if any(named.search(text) for text in names):
            shown = command.replace(b"\0", b" ").decode("utf-8", "replace").strip()
            found.append(Leftover(proc, cwd, shown[:300]))
    return found


def left_behind(folders: Iterable[str], *, patience: float = 3.0) -> list[Leftover]:
    """The processes started after this one that name one of ``folders`` and are still running after
    ``patience`` seconds (a process may be on its way out: a pipe's ``cat`` once its tmux server ended)."""
    folders = [f for f in folders if f]
    if not folders:
        return []
    deadline = time.monotonic() + patience
    while True:
        found = _scan(folders)
        if not found or time.monotonic() >= deadline:
            return found
        time.sleep(0.1)


def end(leftovers: Iterable[Leftover]) -> None:
    """SIGTERM, then SIGKILL: a test run must not leave them to the machine."""
    handles = procs.prepare({left.proc.pid: left.proc for left in leftovers})
    try:
        procs.terminate(handles)
    finally:
        procs.release(handles)
