"""Finding every process a terminal started, and stopping them (Linux ``/proc`` and pidfds).

Killing a tmux window only hangs up its terminal: a program that ignores SIGHUP, moved to its own
process group, or detached with ``setsid`` survives as an orphan. So the backend collects the
terminal's processes *before* killing the window and signals each one itself.

A process counts as started in a terminal when any of these holds:

- it descends (parent links) from the pane's first process, or belongs to the session that process
  leads (tmux makes it a session leader; everything with the pane's tty as terminal is in it);
- its environment carries ``CAO_TERMINAL_ID=<id>`` (survives re-parenting to init and ``setsid``).

Only a live pane's first process may serve as a root: once it is dead and reaped, its pid (and the
pane's tty) can belong to anyone.
"""

from __future__ import annotations

import dataclasses
import os
import select
import signal
import time
from collections.abc import Iterable, Mapping


@dataclasses.dataclass(frozen=True, slots=True)
class Proc:
    """One line of ``/proc/<pid>/stat``, the fields we need."""

    pid: int
    ppid: int
    sid: int
    start: int
    state: str


def _stat_fields(pid: int) -> list[bytes] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name (the state first), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read()
    except OSError:
        return None
    # The command name is in parentheses and may itself contain spaces and parentheses.
    return raw[raw.rindex(b")") + 2 :].split()


def read_proc(pid: int) -> Proc | None:
    fields = _stat_fields(pid)
    if fields is None:
        return None
    return Proc(
        pid=pid,
        ppid=int(fields[1]),
        sid=int(fields[3]),
        start=int(fields[19]),
        state=fields[0].decode("ascii", "replace"),
    )


def zombie_status(pid: int | None) -> int | None:
    """The raw wait status of ``pid`` if it has exited but its parent has not reaped it yet.

    tmux 3.3a sometimes loses SIGCHLD and never reaps a pane's program; its exit status is then only
    to be found here (``/proc/<pid>/stat`` field 52).
    """
    fields = _stat_fields(pid) if pid else None
    if fields is None or fields[0] != b"Z" or len(fields) < 50:
        return None
    return int(fields[49])


def open_pidfd(pid: int) -> int | None:
    """A pidfd for ``pid`` (readable once it exits), or None where pidfds are unavailable or it is gone."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def snapshot() -> dict[int, Proc]:
    """Every process visible now."""
    procs = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            proc = read_proc(int(name))
            if proc is not None:
                procs[proc.pid] = proc
    return procs


def _environ_has(pid: int, marks: frozenset[bytes]) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            env = f.read()
    except OSError:  # gone, or another user's process
        return False
    return any(item in marks for item in env.split(b"\0"))


def _protected(procs: Mapping[int, Proc], extra: Iterable[int]) -> set[int]:
    """This process, its ancestors and init: never signalled, whatever they look like."""
    keep = {0, 1, 2, *extra}
    pid = os.getpid()
    while pid > 1 and pid not in keep:
        keep.add(pid)
        proc = procs.get(pid)
        pid = proc.ppid if proc else 0
    return keep


def started_in(
    procs: Mapping[int, Proc],
    *,
    roots: Iterable[int],
    terminal_ids: Iterable[str] = (),
    protect: Iterable[int] = (),
) -> dict[int, Proc]:
    """The processes of ``procs`` started in the terminals whose first processes are ``roots``."""
    root_set = {pid for pid in roots if pid > 1}
    marks = frozenset(f"CAO_TERMINAL_ID={tid}".encode() for tid in terminal_ids)
    keep = _protected(procs, protect)
    children: dict[int, list[int]] = {}
    for proc in procs.values():
        children.setdefault(proc.ppid, []).append(proc.pid)

    found = set(root_set & procs.keys())
    for proc in procs.values():
        if proc.pid in keep or proc.pid in found or proc.ppid == 2:
            continue
        if proc.sid in root_set or (marks and _environ_has(proc.pid, marks)):
            found.add(proc.pid)
    # Whatever a matched process started belongs to the terminal too.
    queue = list(found)
    while queue:
        for child in children.get(queue.pop(), ()):
            if child not in found:
                found.add(child)
                queue.append(child)
    return {pid: procs[pid] for pid in found - keep}


class _Handle:
    """A process we may signal: through a pidfd when the kernel has them, so a reused pid is never hit."""

    def __init__(self, proc: Proc) -> None:
        self.proc = proc
        self.fd: int | None = None
        try:
            self.fd = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):
            self.fd = None
        self.valid = _same(proc)
        if not self.valid:
            self.close()

    def signal(self, sig: int) -> None:
        try:
            if self.fd is not None:
                signal.pidfd_send_signal(self.fd, sig)
            else:
                os.kill(self.proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def gone(self) -> bool:
        if self.fd is not None:
            ready, _, _ = select.select([self.fd], [], [], 0)
            return bool(ready)
        return not _same(self.proc)

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def _same(proc: Proc) -> bool:
    """The process still exists, is the same one (start time), and is not a zombie."""
    now = read_proc(proc.pid)
    return now is not None and now.start == proc.start and now.state not in ("Z", "X")


def _wait(handles: list[_Handle], timeout: float) -> list[_Handle]:
    """Wait until every handle's process ended or ``timeout`` passed; return the survivors."""
    deadline = time.monotonic() + timeout
    alive = [h for h in handles if not h.gone()]
    while alive:
        left = deadline - time.monotonic()
        if left <= 0:
            break
        fds = [h.fd for h in alive if h.fd is not None]
        if len(fds) == len(alive):
            select.select(fds, [], [], left)
        else:
            # Without pidfds there is nothing to block on: check briefly, this only runs while killing.
            time.sleep(min(left, 0.01))
        alive = [h for h in alive if not h.gone()]
    return alive


def prepare(procs: Mapping[int, Proc]) -> list[_Handle]:
    """Take hold of the processes before anything is killed, so a reused pid is never signalled."""
    return [h for h in (_Handle(p) for p in procs.values()) if h.valid]


def release(handles: Iterable[_Handle]) -> None:
    for handle in handles:
        handle.close()


def terminate(handles: list[_Handle], *, grace: float = 0.5) -> list[int]:
    """SIGTERM every process, SIGKILL those still there after ``grace`` seconds.

    Returns the pids that survived even SIGKILL (normally none).
    """
    for handle in handles:
        handle.signal(signal.SIGTERM)
        # A stopped process cannot act on SIGTERM until it continues.
        handle.signal(signal.SIGCONT)
    survivors = _wait(handles, grace)
    for handle in survivors:
        handle.signal(signal.SIGKILL)
    return [h.proc.pid for h in _wait(survivors, 2.0)]
