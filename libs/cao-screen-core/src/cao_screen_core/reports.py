"""Status reports as detectors make them: evidence of a loggable length, and never an exception."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from cao_hookspecs import Prompt, StatusReport, TerminalStatus

__all__ = ["EVIDENCE_LENGTH", "never_raising", "pending_reader", "read_safely", "report"]

#: Evidence is cut to this many characters: it names the rule and the row that decided, and is logged
#: and shown on every status change.
EVIDENCE_LENGTH = 200


def report(status: TerminalStatus, evidence: str) -> StatusReport:
    """A report whose evidence is cut to :data:`EVIDENCE_LENGTH`."""
    return StatusReport(status=status, evidence=evidence[:EVIDENCE_LENGTH])


def read_safely(detect: Callable[[str], StatusReport], screen: str) -> StatusReport:
    """``detect(screen)``, or ``unknown`` naming the exception it raised: a detector must never raise
    (the kernel would skip it and log the failure on every screen)."""
    try:
        return detect(screen)
    except Exception as exc:  # noqa: BLE001 - a detector must never raise
        return StatusReport(status=TerminalStatus.UNKNOWN, evidence=f"screen not understood: {exc!r}")


def never_raising(read: Callable[[str], Prompt | None]) -> Callable[[str], Prompt | None]:
    """A prompt reader that returns None where ``read`` raises: a screen that breaks the reader shows no
    prompt cao could answer, and the kernel must go on reading screens (a reader may also raise on purpose,
    to give up on a screen from deep inside)."""

    @functools.wraps(read)
    def safe(screen: str) -> Prompt | None:
        try:
            return read(screen)
        except Exception:  # noqa: BLE001 - see above
            return None

    return safe


def pending_reader(parse: Callable[[str], Any]) -> Callable[[str], str]:
    """A ``ProviderSpec.pending_input`` from a screen parser whose screens have a ``pending_input``
    property: '' where parsing raises (the kernel then presses nothing)."""

    def pending(screen: str) -> str:
        try:
            return str(parse(screen).pending_input)
        except Exception:  # noqa: BLE001 - the kernel's reader must never raise
            return ""

    return pending
