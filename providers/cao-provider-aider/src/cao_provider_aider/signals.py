"""Aider's turn-end signal: ``--notifications-command`` runs cao's signal command when Aider waits for
input after a reply. The launch sets it only with ``--yes-always``, where no question can follow a reply,
so the signal always means the turn ended. It carries no payload: the answer is read from the screen."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cao_hookspecs import StatusReport, TerminalStatus

from .launch import SIGNAL_EVENT

__all__ = ["native_signal"]


def native_signal(event: str, payload: Mapping[str, Any]) -> StatusReport | None:
    """``turn_end`` is a completed turn; anything else says nothing. Never raises."""
    if event == SIGNAL_EVENT:
        return StatusReport(status=TerminalStatus.COMPLETED, evidence=f"native: {event}")
    return None
