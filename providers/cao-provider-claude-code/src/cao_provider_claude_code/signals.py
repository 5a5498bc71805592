"""Native status from Claude Code's own hooks, ahead of its screen.

Claude Code runs hook commands at points of its turn loop and hands each one a JSON object on standard
input (``hook_event_name`` and the fields of the event). cao adds hooks through a settings file of the
terminal's runtime folder, passed with ``--settings`` (hooks of every settings source run; the user's
own files are never written). Each hook runs the kernel's signal command, which sends the event name
and the compacted JSON to the kernel and exits at once.

| hook | status |
|---|---|
| ``UserPromptSubmit`` (a prompt was submitted, before the model is called) | ``processing`` |
| ``Stop`` (the turn ended; ``last_assistant_message`` holds the answer) | ``completed`` |
| ``StopFailure`` (the turn ended on an API error) | ``error`` |
| ``Notification`` of type ``permission_prompt`` or ``elicitation_dialog`` | ``waiting_user_answer`` |

Hooks run synchronously (Claude Code waits for each one, a few tens of milliseconds), so a turn's
signals arrive in the order of the turn. Claude Code sends its permission notification only after
a prompt has waited several seconds; the screen reports the prompt before that. Other notifications
(``idle_prompt``, ``auth_success``...) say nothing new and are not mapped.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cao_hookspecs import StatusReport, TerminalStatus

__all__ = ["HOOK_TIMEOUT", "SETTINGS_FILE", "hook_settings", "native_answer", "native_signal"]

#: The settings file written into the terminal's runtime folder and passed with ``--settings``.
SETTINGS_FILE = "cao-hooks.json"
#: Seconds Claude Code gives a hook; the signal command needs a fraction of one.
HOOK_TIMEOUT = 5
#: Notification types that mean the agent waits for a person.
WAITING_NOTIFICATIONS = ("permission_prompt", "elicitation_dialog")

_EVENTS: dict[str, TerminalStatus] = {
    "UserPromptSubmit": TerminalStatus.PROCESSING,
    "Stop": TerminalStatus.COMPLETED,
    "StopFailure": TerminalStatus.ERROR,
}


def _hook(command: Sequence[str], event: str) -> dict[str, Any]:
    # Exec form (``args``): no shell between Claude Code and the program, and no quoting to get wrong.
    return {"type": "command", "command": command[0], "args": [*command[1:], "--stdin", event],
            "timeout": HOOK_TIMEOUT}


def hook_settings(command: Sequence[str]) -> dict[str, Any]:
    """The settings object whose hooks send every mapped event through ``command``."""
    hooks: dict[str, Any] = {event: [{"hooks": [_hook(command, event)]}] for event in _EVENTS}
    hooks["Notification"] = [{"matcher": "|".join(WAITING_NOTIFICATIONS),
                              "hooks": [_hook(command, "Notification")]}]
    return {"hooks": hooks}


def native_answer(event: str, payload: Mapping[str, Any]) -> str | None:
    """The answer a ``Stop`` hook carries (``last_assistant_message``, the model's own text, not its
    drawing on the screen); None for other events or when it is absent."""
    answer = payload.get("last_assistant_message") if event == "Stop" else None
    return answer if isinstance(answer, str) and answer.strip() else None


def native_signal(event: str, payload: Mapping[str, Any]) -> StatusReport | None:
    """The status one hook event means, or None when it says nothing about it."""
    status = _EVENTS.get(event)
    if status == TerminalStatus.ERROR:
        error = payload.get("error")
        return StatusReport(status=status, evidence=str(error)[:200] if error else "")
    if status is not None:
        return StatusReport(status=status)
    if event == "Notification" and payload.get("notification_type") in WAITING_NOTIFICATIONS:
        kind = str(payload["notification_type"])
        return StatusReport(status=TerminalStatus.WAITING_USER_ANSWER, evidence=kind)
    return None
