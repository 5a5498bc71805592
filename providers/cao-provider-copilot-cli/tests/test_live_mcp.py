"""The real Copilot CLI calls cao's MCP tools: a scripted ``send_message`` reaches another inbox."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from cao_hookspecs import TerminalStatus
from cao_kernel.testing.models import call_tool, reply, respond

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(120)]

COPILOT_PROFILE = """---
name: copilot_dev
description: Copilot CLI with cao's tools
provider: copilot_cli
mcpServers:
  cao-mcp-server:
    type: stdio
    command: cao-mcp-server
    args: []
---

You coordinate with other agents through cao.
"""

RECEIVER_PROFILE = """---
name: receiver
description: A mock agent that receives messages
provider: mock_cli
---

You receive messages.
"""

# Copilot offers an MCP tool to the model as "<server>-<tool>".
SEND_MESSAGE = "cao-mcp-server-send_message"


async def _eventually(check, timeout: float):
    deadline = time.monotonic() + timeout
    while True:
        value = await check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        await asyncio.sleep(0.1)


async def test_send_message_called_by_copilot_lands_in_the_receivers_inbox(cao_server, model_server, workdir):
    store = cao_server.home / "agent-store"
    (store / "copilot_dev.md").write_text(COPILOT_PROFILE, encoding="utf-8")
    (store / "receiver.md").write_text(RECEIVER_PROFILE, encoding="utf-8")
    async with cao_server.client() as api:
        receiver = await api.create_session("receiver", working_directory=workdir)
        sender = await api.create_session("copilot_dev", working_directory=workdir)
        model_server.script.add(
            call_tool(SEND_MESSAGE,
                      {"receiver_id": receiver.id, "message": "Build is green; please review."}),
            respond(lambda conv: reply("Message sent. Tool said: " + conv.last_tool_result.output[:80])),
        )
        await api.send_input(sender.id, "Tell the reviewer the build is green.")
        await api.wait_for_status(sender.id, [TerminalStatus.PROCESSING], timeout=10)
        await api.wait_for_status(sender.id, [TerminalStatus.COMPLETED], timeout=60)

        turns = model_server.turns()
        assert len(turns) == 2, [t.conversation.last_user_text for t in turns]
        assert SEND_MESSAGE in turns[0].conversation.tools
        result = turns[1].conversation.last_tool_result
        assert result is not None and not result.is_error, json.dumps(turns[1].body["messages"][-3:])[:3000]
        # Copilot passes the tool's text and its structured content on together: the first JSON value is it.
        value, _ = json.JSONDecoder().raw_decode(result.output)
        assert value["success"] is True and value["receiver_id"] == receiver.id

        async def delivered():
            rows = await api.list_messages(receiver.id)
            return [m for m in rows if m.sender_id == sender.id]

        [message] = await _eventually(delivered, timeout=20)
        assert "Build is green; please review." in message.body
        # The receiver (a mock agent) got it typed in and answered it.
        await api.wait_for_status(receiver.id, [TerminalStatus.COMPLETED], timeout=20)
        assert "Build is green; please review." in await api.get_output(receiver.id, "last")
        last = await api.get_output(sender.id, "last")
        assert last.startswith("Message sent. Tool said: ")
        model_server.script.assert_done()
