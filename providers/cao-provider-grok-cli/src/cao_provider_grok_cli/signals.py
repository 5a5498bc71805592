"""Native status from Grok Build's own hooks, ahead of its screen.

Grok runs hook commands at points of its turn and hands each one a JSON object on standard input
(``hookEventName``, ``promptId``, the event's fields). cao adds its hooks to the private home's
``config.toml`` (``[[hooks.<Event>]]`` tables; the user's own files are never written). Each hook runs
the kernel's signal command, which sends the event name and the compacted JSON and exits at once, so
Grok's ``Stop`` gate is never held up or blocked (the command always exits 0).

| hook | status |
|---|---|
| ``UserPromptSubmit`` (a prompt was submitted) | ``processing`` |
| ``Stop`` (a turn completed; ``lastAssistantMessage`` holds the answer) | ``completed`` |
| ``StopFailure`` (the turn ended on an API error; ``errorDetails`` says which) | ``error`` |

Only events of the main session's turns are mapped: an event without ``promptId`` is Grok reporting on
the session (its session-end ``Stop``), and one with ``subagentType`` comes from a subagent.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from cao_hookspecs import StatusReport, TerminalStatus

__all__ = ["HOOK_TIMEOUT", "hook_config", "native_answer", "native_signal"]

#: Seconds Grok gives a hook; the signal command needs a fraction of one.
HOOK_TIMEOUT = 5
_EVENTS: dict[str, TerminalStatus] = {
    "UserPromptSubmit": TerminalStatus.PROCESSING,
    "Stop": TerminalStatus.COMPLETED,
    "StopFailure": TerminalStatus.ERROR,
}


def hook_config(command: Sequence[str]) -> dict[str, Any]:
    """The ``hooks`` table sending every mapped event through ``command`` (Grok runs a hook's command
    through ``sh -c``, so it is quoted here)."""
    return {event: [{"hooks": [{"type": "command", "command": shlex.join([*command, "--stdin", event]),
                                "timeout": HOOK_TIMEOUT}]}]
            for event in _EVENTS}


def _of_a_turn(payload: Mapping[str, Any]) -> bool:
    return bool(payload.get("promptId")) and not payload.get("subagentType")


def native_signal(event: str, payload: Mapping[str, Any]) -> StatusReport | None:
    """The status one hook event means, or None when it says nothing about the agent's turn."""
    status = _EVENTS.get(event)
    if status is None or not _of_a_turn(payload):
        return None
    if status == TerminalStatus.ERROR:
        detail = payload.get("errorDetails") or payload.get("lastAssistantMessage") or payload.get("error")
        return StatusReport(status=status, evidence=str(detail)[:200] if detail else "")
    return StatusReport(status=status)


def native_answer(event: str, payload: Mapping[str, Any]) -> str | None:
    """The answer a turn's ``Stop`` carries (the model's own text, not Grok's drawing of it); None for
    other events, or when it is absent (the signal command leaves out an answer too long to send whole,
    and the screen is read then)."""
    if event != "Stop" or not _of_a_turn(payload):
        return None
    answer = payload.get("lastAssistantMessage")
    if not isinstance(answer, str) or not answer.strip():
        return None
    return answer
