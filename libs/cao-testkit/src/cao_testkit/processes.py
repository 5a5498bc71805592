"""Looking at processes from a test (Linux ``/proc``): whether one still runs, and how many PTYs this
one holds."""

from __future__ import annotations

__all__ = ["open_ptys", "pid_alive"]


def pid_alive(pid: int) -> bool:
    """True while ``pid`` runs: a zombie waiting to be reaped counts as gone, as every process a
    terminal started must be once the terminal ends."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")


def open_ptys() -> int:
    """How many PTY masters this process holds open: a test of a PTY's owner counts them before and
    after, so a leaked one fails it."""
    import os

    count = 0
    for fd in os.listdir("/proc/self/fd"):
        try:
            count += os.readlink(f"/proc/self/fd/{fd}") == "/dev/ptmx"
        except OSError:
            continue
    return count
