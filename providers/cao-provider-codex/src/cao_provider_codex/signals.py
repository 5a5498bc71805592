"""Native status from Codex's ``notify`` program, ahead of its screen.

Codex runs the program named by ``notify`` in its config when a turn ends, with one JSON object appended
to its arguments: ``{"type": "agent-turn-complete", "thread-id": ..., "turn-id": ..., "cwd": ...,
"input-messages": [...], "last-assistant-message": ...}``. cao's private config (``codex_home.py``) names
the kernel's signal command there with the event ``notify``; the command sends the JSON's top-level
scalars to the kernel and exits at once (Codex does not wait for it).

| ``notify`` payload ``type`` | status |
|---|---|
| ``agent-turn-complete`` | ``completed`` |

Codex runs ``notify`` for its side threads too: when the first prompt is submitted it names the thread
in a thread of its own, whose turn ends (``last-assistant-message`` a JSON object with a ``title``)
while the agent's turn is still running. Those are ignored; the payload carries nothing else that tells
threads apart.

Codex has one ``notify`` program: in cao's terminals it is cao's, and a ``notify`` of the user's own
config (or of the profile's ``codexConfig``) is not run there. Codex reports no turn start this way;
the kernel reports ``processing`` itself when it types, and the screen does the rest.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from cao_hookspecs import StatusReport, TerminalStatus
from cao_hookspecs.signals import signal_command

__all__ = ["EVENT", "native_signal", "notify_command"]

#: The event name cao's ``notify`` command line passes (Codex appends its JSON after it).
EVENT = "notify"

_TYPES: dict[str, TerminalStatus] = {"agent-turn-complete": TerminalStatus.COMPLETED}


def notify_command(env: Mapping[str, str]) -> list[str] | None:
    """The ``notify`` list for Codex's config, from a launch context's environment (None: no channel)."""
    command = signal_command(env)
    return None if command is None else [*command, EVENT]


def native_signal(event: str, payload: Mapping[str, Any]) -> StatusReport | None:
    """The status a ``notify`` call means, or None for one that says nothing about it."""
    if event != EVENT:
        return None
    kind = payload.get("type")
    status = _TYPES.get(kind) if isinstance(kind, str) else None
    if status is None or _is_title_thread(payload.get("last-assistant-message")):
        return None
    return StatusReport(status=status, evidence=kind)


def _is_title_thread(message: Any) -> bool:
    if not isinstance(message, str) or not message.lstrip().startswith("{"):
        return False
    try:
        value = json.loads(message)
    except ValueError:
        return False
    return isinstance(value, dict) and set(value) == {"title"}
