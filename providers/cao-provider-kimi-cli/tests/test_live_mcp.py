"""The real Kimi CLI calls cao's MCP tools: a scripted ``send_message`` reaches another terminal's inbox."""

from __future__ import annotations

import pytest

from cao_testkit.live_mcp import check_send_message_over_mcp

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(120)]


async def test_send_message_called_by_kimi_lands_in_the_receivers_inbox(cao_server, model_server, workdir):
    # Kimi CLI offers MCP tools under their own names.
    sent = await check_send_message_over_mcp(cao_server, model_server, workdir, provider="kimi_cli",
                                             tool="send_message")
    assert "send_message" in sent.first.conversation.tools
