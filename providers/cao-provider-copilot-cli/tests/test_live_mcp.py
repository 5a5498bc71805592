"""The real Copilot CLI calls cao's MCP tools: a scripted ``send_message`` reaches another inbox."""

from __future__ import annotations

import json

import pytest

from cao_testkit.live_mcp import check_send_message_over_mcp

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(120)]

# Copilot offers an MCP tool to the model as "<server>-<tool>".
SEND_MESSAGE = "cao-mcp-server-send_message"


def first_json_value(text: str) -> object:
    # Copilot passes the tool's text and its structured content on together: the first JSON value is it.
    value, _ = json.JSONDecoder().raw_decode(text)
    return value


async def test_send_message_called_by_copilot_lands_in_the_receivers_inbox(cao_server, model_server, workdir):
    sent = await check_send_message_over_mcp(cao_server, model_server, workdir, provider="copilot_cli",
                                             tool=SEND_MESSAGE, parse=first_json_value, busy_within=10)
    assert SEND_MESSAGE in sent.first.conversation.tools
    assert sent.payload["receiver_id"] == sent.receiver.id, sent.payload
