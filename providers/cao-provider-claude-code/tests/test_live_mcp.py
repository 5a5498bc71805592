"""The real Claude Code calls cao's MCP tools: a scripted ``send_message`` reaches another inbox."""

from __future__ import annotations

import pytest

from cao_testkit.live_mcp import check_send_message_over_mcp

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(120)]


async def test_send_message_called_by_claude_lands_in_the_receivers_inbox(cao_server, model_server, workdir):
    sent = await check_send_message_over_mcp(cao_server, model_server, workdir, provider="claude_code",
                                             tool="mcp__cao-mcp-server__send_message")
    assert "No such tool" not in sent.result.output, sent.result.output
