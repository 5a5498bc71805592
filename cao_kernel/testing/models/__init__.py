"""Scripted model servers for driving real agent CLIs offline in tests.

- :mod:`.script`: the turn-script API shared by every server (``Script``, ``reply``, ``call_tool``,
  ``think``, ``respond``, ``hold``, ``fail``) and the recorded requests.
- :mod:`.anthropic`: ``AnthropicServer``, the Messages API (Claude Code).
- :mod:`.cli`: installing a real agent CLI from npm into a per-machine cache, and sandboxed homes.

Nothing here is imported by ``cao_kernel.testing`` itself: import the module you need.
"""

from __future__ import annotations

from .script import (
    Answer,
    Conversation,
    Failure,
    Hold,
    Message,
    RecordedRequest,
    Respond,
    Script,
    ScriptError,
    ScriptedServer,
    ToolCall,
    ToolResult,
    Turn,
    call_tool,
    fail,
    hold,
    reply,
    respond,
    think,
)

__all__ = [
    "Answer",
    "Conversation",
    "Failure",
    "Hold",
    "Message",
    "RecordedRequest",
    "Respond",
    "Script",
    "ScriptError",
    "ScriptedServer",
    "ToolCall",
    "ToolResult",
    "Turn",
    "call_tool",
    "fail",
    "hold",
    "reply",
    "respond",
    "think",
]
