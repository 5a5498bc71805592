"""The real Kimi CLI calls cao's MCP tools: a scripted ``send_message`` reaches another terminal's inbox."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from cao_hookspecs import TerminalStatus
from cao_kernel.testing.models import call_tool, reply, respond

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(120)]

KIMI_PROFILE = """---
name: kimi_dev
description: Kimi CLI with cao's tools
provider: kimi_cli
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


async def _eventually(check, timeout: float):
    deadline = time.monotonic() + timeout
    while True:
        value = await check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout} s")
        await asyncio.sleep(0.1)


async def test_send_message_called_by_kimi_lands_in_the_receivers_inbox(cao_server, model_server, workdir):
    store = cao_server.home / "agent-store"
    (store / "kimi_dev.md").write_text(KIMI_PROFILE, encoding="utf-8")
    (store / "receiver.md").write_text(RECEIVER_PROFILE, encoding="utf-8")
    async with cao_server.client() as api:
        receiver = await api.create_session("receiver", working_directory=workdir)
        sender = await api.create_session("kimi_dev", working_directory=workdir)
        model_server.script.add(
            call_tool("send_message",
                      {"receiver_id": receiver.id, "message": "Build is green; please review."}),
            respond(lambda conv: reply("Message sent. Tool said: " + conv.last_tool_result.output[:80])),
        )
        await api.send_input(sender.id, "Tell the reviewer the build is green.")
        await api.wait_for_status(sender.id, [TerminalStatus.COMPLETED], timeout=60)

        turns = model_server.turns()
        assert len(turns) == 2, [t.conversation.last_user_text for t in turns]
        assert "send_message" in turns[0].conversation.tools
        result = turns[1].conversation.last_tool_result
        sent = json.dumps(turns[1].body.get("input", [])[-3:])[:3000]
        assert result is not None and not result.is_error, sent
        assert json.loads(result.output)["success"] is True

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
