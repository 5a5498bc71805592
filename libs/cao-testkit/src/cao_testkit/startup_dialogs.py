"""A real CLI's start-up dialogs answered in a test with the keys its provider declares for them.

A provider's launch keeps the dialogs away (it writes the answers into the CLI's private config); a
live test takes those answers out, starts the CLI itself and checks that each dialog the CLI then shows
is one the provider knows, and that its keys get past it.

- :class:`ScreenClock`: a screen captured every 50 ms, and how long it has been unchanged, which is
  when a CLI takes keys (some drop keys that come in the first tenths of a second after a redraw).
- :func:`accept_startup_dialogs`: every dialog answered once it has been still for half a second, until
  the CLI is idle.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from cao_hookspecs import TerminalStatus

__all__ = ["ScreenClock", "accept_startup_dialogs"]


class ScreenClock:
    """Iterate to get ``capture()`` every 50 ms for ``timeout`` seconds; ``still`` is how long the screen
    has been as it is, ``last`` the last screen; :meth:`restart` counts from the next capture on."""

    def __init__(self, capture: Callable[[], str], timeout: float) -> None:
        self.capture = capture
        self.timeout = timeout
        self.last: str | None = None
        self._since = time.monotonic()

    def __iter__(self) -> Iterator[str]:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            screen = self.capture()
            if screen != self.last:
                self.last, self._since = screen, time.monotonic()
            yield screen
            time.sleep(0.05)

    @property
    def still(self) -> float:
        return time.monotonic() - self._since

    def restart(self) -> None:
        """Take the next capture as a change (after keys were sent, the CLI redraws)."""
        self.last = None


_SendKeys = Callable[[Sequence[str]], Any]


def accept_startup_dialogs(provider: Any, capture: Callable[[], str], send_keys: _SendKeys, *,
                           timeout: float) -> tuple[list[str], str]:
    """Until ``provider`` reads the screen as idle, answer each dialog on it with its keys once it has been
    still for half a second. Each screen must match one dialog at most, read as waiting for an answer, and
    each dialog must be accepted at the first or second try. The dialogs answered, in order, and the
    idle screen."""
    answered: list[str] = []
    clock = ScreenClock(capture, timeout)
    for screen in clock:
        report = provider.detect_status(screen)
        if report.status == TerminalStatus.IDLE:
            return answered, screen
        matching = [d for d in provider.startup_dialogs if re.search(d.pattern, screen, re.MULTILINE)]
        assert len(matching) <= 1, [d.name for d in matching]
        if matching and clock.still >= 0.5:
            assert report.status == TerminalStatus.WAITING_USER_ANSWER, report
            answered.append(matching[0].name)
            assert answered.count(matching[0].name) <= 2, f"{matching[0].name} not accepted:\n{screen}"
            send_keys(list(matching[0].keys))
            clock.restart()
    raise AssertionError(f"not ready after answering {answered}:\n{clock.last}")
