"""The real Grok Build calls cao's MCP tools: a scripted ``send_message`` reaches another terminal's inbox."""

from __future__ import annotations

import pytest

from cao_testkit.live_mcp import check_send_message_over_mcp

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(120)]


async def test_send_message_called_by_grok_lands_in_the_receivers_inbox(cao_server, model_server, workdir):
    # Grok keeps MCP tools in a catalog keyed <server>__<tool>: its model finds them with search_tool
    # and calls them with use_tool, and a call made by the catalog key directly reaches the server too.
    sent = await check_send_message_over_mcp(cao_server, model_server, workdir, provider="grok_cli",
                                             tool="cao-mcp-server__send_message")
    assert {"search_tool", "use_tool"} <= set(sent.first.conversation.tools)
