"""Behaviours shipped with mock_cli (entry points in group ``cao.mock_behaviours``)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .behaviours import Turn

#: ``run: <command>`` in a task names the command the ``permission`` behaviour asks to run.
RUN_RE = re.compile(r"\brun:[ \t]*(?P<command>\S[^\n]*?)[ \t]*$", re.MULTILINE)
DEFAULT_COMMAND = "rm -rf build"
SHELL_TOOL = "Bash"


async def echo(turn: Turn) -> str:
    """Answer with the task itself, line breaks kept (cao's protocol line removed)."""
    return turn.task


async def worker(turn: Turn) -> str:
    """Follow cao's worker protocol: a handed-off task is answered in the reply; an assigned task's
    result goes to the supervisor named in its callback line, with send_message."""
    result = f"Done: {turn.task}"
    return await _deliver(turn, result)


async def permission(turn: Turn) -> str:
    """Ask permission to run the command a task names (``run: <command>``, else ``rm -rf build``), the
    way an agent asks before a shell command; nothing is ever run. The answer is ``Ran <command>.`` once
    allowed, ``Did not run <command>.`` when refused (with a second line ``Reason: <text>`` when the
    refusal came with text). "Don't ask again" holds for the agent's life. An assigned task's answer goes
    to the supervisor with send_message, as ``worker`` does."""
    found = list(RUN_RE.finditer(turn.task))
    command = found[-1].group("command") if found else DEFAULT_COMMAND
    trusted: set[str] = turn.memory.setdefault("always_allowed", set())
    reason = None
    if SHELL_TOOL in trusted:
        allowed = True
    else:
        # The default options: 1 yes, 2 yes and don't ask again, 3 no (with a text field).
        choice = await turn.ask(tool=SHELL_TOOL, arguments={"command": command})
        allowed, reason = choice.number in (1, 2), choice.text
        if choice.number == 2:
            trusted.add(SHELL_TOOL)
    result = f"Ran {command}." if allowed else f"Did not run {command}."
    if reason:
        result += f"\nReason: {reason}"
    return await _deliver(turn, result)


async def _deliver(turn: Turn, result: str) -> str:
    if turn.assigned_by is None:
        return result
    await turn.call("send_message", receiver_id=turn.assigned_by, message=result)
    return f"Sent the result to terminal {turn.assigned_by}."
