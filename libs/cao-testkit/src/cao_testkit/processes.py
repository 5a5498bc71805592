"""Looking at processes from a test (Linux ``/proc``): whether one still runs."""

from __future__ import annotations

__all__ = ["pid_alive"]


def pid_alive(pid: int) -> bool:
    """True while ``pid`` runs: a zombie waiting to be reaped counts as gone, as every process a
    terminal started must be once the terminal ends."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            state = f.read().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state not in (b"Z", b"X")
