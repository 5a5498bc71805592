"""Native status from Qwen Code's own hooks, ahead of its screen.

Qwen Code runs command hooks at points of its turn loop, configured under ``hooks`` in its
``settings.json`` in the same shape as Claude Code's, and hands each one a JSON object on standard
input (``hook_event_name`` and the event's fields). cao writes its hooks into the private settings of
the terminal's ``QWEN_HOME`` (config.py); each runs the kernel's signal command, which sends the event
name and the compacted JSON to the kernel and exits at once, printing nothing (a hook's output would
be shown to the model).

| hook | status |
|---|---|
| ``UserPromptSubmit`` (a prompt was submitted, before the model is called) | ``processing`` |
| ``Stop`` (the turn ended; ``last_assistant_message`` holds the answer) | ``completed`` |
| ``StopFailure`` (an API error ended the turn, instead of ``Stop``) | ``error`` |
| ``Notification`` of type ``permission_prompt`` | ``waiting_user_answer`` |

The ``idle_prompt`` notification follows every ``Stop`` and says nothing new; it is not mapped.
Qwen Code runs ``Stop`` before it draws the prompt again, so a handoff gets the model's own text
(``native_answer``) without reading the screen.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from cao_hookspecs import StatusReport, TerminalStatus

__all__ = ["HOOK_TIMEOUT", "hook_settings", "native_answer", "native_signal"]

#: Seconds Qwen Code gives a hook; the signal command needs a fraction of one.
HOOK_TIMEOUT = 5
#: The notification type that means the agent waits for a person.
WAITING = "permission_prompt"

_EVENTS: dict[str, TerminalStatus] = {
    "UserPromptSubmit": TerminalStatus.PROCESSING,
    "Stop": TerminalStatus.COMPLETED,
    "StopFailure": TerminalStatus.ERROR,
}


def _hook(command: Sequence[str], event: str) -> dict[str, Any]:
    # Qwen Code runs a command hook through a shell: the words are quoted for it.
    return {"type": "command", "command": shlex.join([*command, "--stdin", event]), "timeout": HOOK_TIMEOUT}


def hook_settings(command: Sequence[str]) -> dict[str, Any]:
    """The ``hooks`` settings whose hooks send every mapped event through ``command``."""
    hooks: dict[str, Any] = {event: [{"hooks": [_hook(command, event)]}] for event in _EVENTS}
    hooks["Notification"] = [{"matcher": WAITING, "hooks": [_hook(command, "Notification")]}]
    return hooks


def native_answer(event: str, payload: Mapping[str, Any]) -> str | None:
    """The answer a ``Stop`` hook carries (``last_assistant_message``, the model's own text, not its
    drawing on the screen); None for other events or when it is absent."""
    answer = payload.get("last_assistant_message") if event == "Stop" else None
    return answer if isinstance(answer, str) and answer.strip() else None


def native_signal(event: str, payload: Mapping[str, Any]) -> StatusReport | None:
    """The status one hook event means, or None when it says nothing about it."""
    status = _EVENTS.get(event)
    if status == TerminalStatus.ERROR:
        details = payload.get("error_details") or payload.get("error")
        return StatusReport(status=status, evidence=str(details)[:200] if details else "")
    if status is not None:
        return StatusReport(status=status)
    if event == "Notification" and payload.get("notification_type") == WAITING:
        return StatusReport(status=TerminalStatus.WAITING_USER_ANSWER, evidence=WAITING)
    return None
