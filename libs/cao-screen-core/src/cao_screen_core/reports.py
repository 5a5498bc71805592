"""Status reports as detectors make them: evidence of a loggable length, and never an exception."""

from __future__ import annotations

from collections.abc import Callable

from cao_hookspecs import StatusReport, TerminalStatus

__all__ = ["EVIDENCE_LENGTH", "read_safely", "report"]

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
