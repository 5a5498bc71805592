"""Native status from Hermes's shell hooks, ahead of its screen.

Hermes runs the commands of ``hooks:`` in its config at points of a turn, with a JSON object on
standard input; cao's hooks run ``relay.py``, which lifts the fields below out of the payload's
``extra`` and hands them to the kernel's signal command.

| hook | status |
|---|---|
| ``pre_llm_call`` (a turn begins: the user's message is about to go to the model) | ``processing`` |
| ``post_llm_call`` (the turn's tool loop ended with an answer: ``last_assistant_message``) | ``completed`` |

Both fire once per turn of the agent itself. Hermes's subagents (``delegate_task``) run the same hooks
with ``platform`` ``subagent``: they say nothing about this terminal's turn and are not mapped. A turn
that fails or is interrupted fires no ``post_llm_call``; the screen reports it.
"""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from cao_hookspecs import StatusReport, TerminalStatus

__all__ = ["EVENTS", "HOOK_TIMEOUT", "hooks", "native_answer", "native_signal"]

EVENTS: dict[str, TerminalStatus] = {
    "pre_llm_call": TerminalStatus.PROCESSING,
    "post_llm_call": TerminalStatus.COMPLETED,
}
#: Seconds Hermes gives a hook (its least); the relay and the signal command need a fraction of one.
HOOK_TIMEOUT = 5
_RELAY = Path(__file__).with_name("relay.py")


def _mine(payload: Mapping[str, Any]) -> bool:
    return payload.get("platform") != "subagent"


def hooks(command: Sequence[str]) -> dict[str, Any]:
    """The ``hooks:`` table whose hooks send every mapped event through the signal ``command``.

    Hermes splits a hook's command line itself (no shell), so it is written quoted."""
    def hook(event: str) -> list[dict[str, Any]]:
        argv = [sys.executable, "-I", "-S", str(_RELAY), event, "--", *command]
        return [{"command": shlex.join(argv), "timeout": HOOK_TIMEOUT}]

    return {event: hook(event) for event in EVENTS}


def native_answer(event: str, payload: Mapping[str, Any]) -> str | None:
    """The answer a ``post_llm_call`` hook carries (the model's own text, not its drawing on the
    screen); None for other events, a subagent's, or when it is absent."""
    if event != "post_llm_call" or not _mine(payload):
        return None
    answer = payload.get("last_assistant_message")
    return answer if isinstance(answer, str) and answer.strip() else None


def native_signal(event: str, payload: Mapping[str, Any]) -> StatusReport | None:
    """The status one hook event means, or None when it says nothing about this terminal's turn."""
    status = EVENTS.get(event)
    if status is None or not _mine(payload):
        return None
    return StatusReport(status=status)
