"""Pressing Enter again for an input that still sits, unsent, at the CLI's prompt.

A CLI busy finishing its start-up can take the Enter that follows a paste as "insert a newline" (Gemini
CLI 0.61.0 did): the input stays in its box, and the status tracker, seeing no turn, falls back to ready
once its settle window passes, so the worker would wait forever. For providers that read their prompt's
unsent text (``ProviderSpec.pending_input``), the terminals service runs one check per input, in the
background (the typing caller never waits for it):

- it waits for the screens of the provider's ``submit_delay`` plus :data:`GRACE`, ending early once the
  input's turn shows itself (``StatusTracker.turn_started``);
- it presses Enter only when no turn began, the terminal is not waiting on a prompt or in error, and the
  text at the prompt holds what was typed (its first non-empty line; the user may be typing something
  else), on the screen read last and on one captured just before the key;
- at most :data:`LIMIT` times per input. A newer input cancels the check of the one before.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

from cao_hookspecs import TerminalStatus

from .status import StatusTracker

#: How long after the provider's submit delay a submitted input may take to leave the prompt.
GRACE = 0.5
#: The most Enters pressed again for one input.
LIMIT = 2
_HELD = frozenset({TerminalStatus.WAITING_USER_ANSWER, TerminalStatus.ERROR})


def _compact(text: str) -> str:
    # Whitespace dropped: a prompt wraps long lines and indents continuation rows as it likes.
    return "".join(text.split())


def typed_key(text: str) -> str:
    """What of ``text`` must show at the prompt for it to count as still unsent ('' for blank text)."""
    return next((_compact(line) for line in text.splitlines() if line.strip()), "")


def _unsent(tracker: StatusTracker, pending_of: Callable[[str], str], screen: str, key: str) -> bool:
    if tracker.turn_started or tracker.failed_for_good or tracker.status in _HELD:
        return False
    return key in _compact(pending_of(screen))


async def resubmit_unsent(tracker: StatusTracker, pending_of: Callable[[str], str], key: str,
                          submit_delay: float, *, capture: Callable[[], Awaitable[str]],
                          press: Callable[[int], Awaitable[None]]) -> None:
    """Check that the input whose :func:`typed_key` is ``key`` left the prompt after its Enter;
    ``pending_of`` reads a screen's unsent text and never raises (``launching.pending_reader``), and
    ``press(attempt)`` presses Enter again."""
    window = submit_delay + GRACE
    for attempt in range(1, LIMIT + 1):
        deadline = time.monotonic() + window
        while not tracker.turn_started and (left := deadline - time.monotonic()) > 0:
            await tracker.next_screen(left)
        if not _unsent(tracker, pending_of, tracker.screen, key):
            return
        # The screen read last can lag behind the terminal: judge what it shows now.
        if not _unsent(tracker, pending_of, await capture(), key):
            return
        await press(attempt)


__all__ = ["GRACE", "LIMIT", "resubmit_unsent", "typed_key"]
