"""Behaviours shipped with mock_cli (entry points in group ``cao.mock_behaviours``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .behaviours import Turn


async def echo(turn: Turn) -> str:
    """Answer with the task itself, line breaks kept (cao's protocol line removed)."""
    return turn.task


async def worker(turn: Turn) -> str:
    """Follow cao's worker protocol: a handed-off task is answered in the reply; an assigned task's
    result goes to the supervisor named in its callback line, with send_message."""
    result = f"Done: {turn.task}"
    if turn.assigned_by is None:
        return result
    await turn.call("send_message", receiver_id=turn.assigned_by, message=result)
    return f"Sent the result to terminal {turn.assigned_by}."
