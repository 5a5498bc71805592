"""The cap on live terminals (``CAO_MAX_TERMINALS``), upstream's guard for one agent per machine or pod.

Unset, empty or 0 means no cap. A creation past the cap raises ``TerminalLimit`` (429 over HTTP, with
upstream's wording) before anything exists: no tmux window, no runtime files, no record. Unlike
upstream's count-then-create, a slot is reserved on the event loop before the first await of a
creation, so two creations racing for the last slot cannot both pass.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from .errors import InvalidInput, TerminalLimit

SETTING = "CAO_MAX_TERMINALS"


def max_terminals(settings: Mapping[str, Any]) -> int | None:
    """The cap, or None for none. A value that is not a whole number stops the start, named: a typo must
    not silently lift a limit someone relies on."""
    raw = settings.get(SETTING)
    if raw is None or str(raw).strip() in ("", "0"):
        return None
    try:
        value = int(str(raw).strip())
    except ValueError:
        value = -1
    if value < 0:
        raise InvalidInput(f"{SETTING}={raw!r}: expected a whole number of terminals (0 or unset: no cap)")
    return value


class TerminalCap:
    """Counts live terminals plus those being created, and refuses one past the cap."""

    def __init__(self, settings: Mapping[str, Any]) -> None:
        self.limit = max_terminals(settings)
        self._reserved: set[str] = set()

    def reserve(self, terminal_id: str, live: Collection[str]) -> None:
        """Hold a slot for ``terminal_id`` until :meth:`release`, or raise ``TerminalLimit``."""
        if self.limit is None:
            return
        count = len(set(live) | self._reserved)
        if count >= self.limit:
            raise TerminalLimit(
                f"Terminal limit reached: {count} live terminal(s) on this cao-server and {SETTING} is "
                f"{self.limit}; delete a terminal (or raise the cap) and try again, or use another server.")
        self._reserved.add(terminal_id)

    def release(self, terminal_id: str) -> None:
        self._reserved.discard(terminal_id)


__all__ = ["SETTING", "TerminalCap", "max_terminals"]
