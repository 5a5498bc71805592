"""The real Gemini CLI calls cao's MCP tools: cao-server serves the kernel, Gemini CLI starts
cao-mcp-server from its private settings, and a scripted ``send_message`` lands in another terminal's
inbox."""

from __future__ import annotations

import json

import pytest

from cao_hookspecs import MessageState, TerminalStatus
from cao_testkit.live_mcp import MESSAGE, check_send_message_over_mcp

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(120)]

#: How Gemini CLI names an MCP tool to the model: ``mcp_<server>_<tool>``.
SEND_MESSAGE = "mcp_cao_send_message"


def enclosed_json(text: str) -> object:
    return json.loads(text[text.index("{"):text.rindex("}") + 1])


async def test_send_message_from_gemini_reaches_another_terminals_inbox(cao_server, model_server, live_gemini,
                                                                         workdir):
    sent = await check_send_message_over_mcp(
        cao_server, model_server, workdir, provider="gemini_cli", tool=SEND_MESSAGE, mcp_server="cao",
        # A model Gemini CLI knows, so it neither routes nor falls back to another one.
        profile_fields={"model": live_gemini.profile().model}, parse=enclosed_json, timeout=40,
    )
    assert sent.sender.status in (TerminalStatus.IDLE, TerminalStatus.COMPLETED), sent.sender
    # The first request already offered cao's tools, under Gemini CLI's name for them.
    assert SEND_MESSAGE in sent.first.conversation.tools
    assert sent.payload["sender_id"] == sent.sender.id and sent.payload["receiver_id"] == sent.receiver.id
    # The receiver was idle: the message was typed in at once, and the mock agent answered it.
    (message,) = sent.inbox
    assert message.sender_id == sent.sender.id and MESSAGE in message.body
    assert message.state == MessageState.DELIVERED
