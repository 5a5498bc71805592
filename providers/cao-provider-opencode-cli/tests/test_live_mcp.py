"""The real OpenCode calls cao's MCP tools: a scripted ``send_message`` reaches another inbox."""

from __future__ import annotations

import pytest

from cao_testkit.live_mcp import check_send_message_over_mcp

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(150)]

# OpenCode names an MCP tool <server>_<tool>.
SEND_MESSAGE = "cao-mcp-server_send_message"


async def test_send_message_called_by_opencode_lands_in_the_receivers_inbox(cao_server, model_server,
                                                                            workdir):
    sent = await check_send_message_over_mcp(cao_server, model_server, workdir, provider="opencode_cli",
                                             tool=SEND_MESSAGE, timeout=90)
    assert SEND_MESSAGE in sent.first.conversation.tools
