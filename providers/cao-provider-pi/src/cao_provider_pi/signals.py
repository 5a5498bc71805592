"""Native status from pi's own turn events, ahead of its screen.

pi runs no hooks, but an extension hears its agent loop. cao's bridge extension (bridge.ts, loaded with
``-e``) sends two of its events through the kernel's signal command, with a JSON object on standard
input:

| event (payload) | status |
|---|---|
| ``agent_start`` (``{}``: a prompt was submitted) | ``processing`` |
| ``agent_end``, ``stop_reason`` ``stop`` or ``length`` (``last_assistant_message``) | ``completed`` |
| ``agent_end``, ``stop_reason`` ``error`` (``error``: what the model API said) | none: the screen's |
| ``agent_end``, ``stop_reason`` ``aborted`` (Escape) | ``idle`` |

pi awaits the bridge's handler before it takes its spinner away, so a handoff gets the model's own text
(``native_answer``) before the screen shows the turn's end. A failed turn is left to the screen: pi
retries an overloaded or rate-limited request by itself after that ``agent_end`` (showing "Retrying"),
and only the screen says whether it will, so an ``error`` reported from the event would end a wait for a
turn that goes on.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cao_hookspecs import StatusReport, TerminalStatus

__all__ = ["native_answer", "native_signal"]

_ENDS: dict[str, TerminalStatus] = {
    "stop": TerminalStatus.COMPLETED,
    "length": TerminalStatus.COMPLETED,
    "aborted": TerminalStatus.IDLE,
}


def native_answer(event: str, payload: Mapping[str, Any]) -> str | None:
    """The answer an ``agent_end`` carries (the model's own text, not its drawing on the screen); None
    for other events, failed turns, or when it is absent."""
    if event != "agent_end" or payload.get("stop_reason") not in ("stop", "length"):
        return None
    answer = payload.get("last_assistant_message")
    return answer if isinstance(answer, str) and answer.strip() else None


def native_signal(event: str, payload: Mapping[str, Any]) -> StatusReport | None:
    """The status one event of the bridge means, or None when it says nothing about it."""
    if event == "agent_start":
        return StatusReport(status=TerminalStatus.PROCESSING)
    if event != "agent_end":
        return None
    reason = payload.get("stop_reason")
    status = _ENDS.get(reason) if isinstance(reason, str) else None
    if status is None:
        return None
    return StatusReport(status=status, evidence=str(reason))
