"""The real pi calls cao's MCP tools through cao's bridge extension: a scripted ``send_message`` reaches
another terminal's inbox."""

from __future__ import annotations

import pytest

from cao_testkit.live import json_answer
from cao_testkit.live_mcp import check_send_message_over_mcp

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(120)]


async def test_send_message_called_by_pi_lands_in_the_receivers_inbox(cao_server, model_server, workdir):
    # The bridge offers each MCP tool as mcp__<server>__<tool>, in the first request, and passes a
    # result's text back as the tool's output.
    tool = "mcp__cao-mcp-server__send_message"
    sent = await check_send_message_over_mcp(cao_server, model_server, workdir, provider="pi", tool=tool,
                                             parse=json_answer)
    assert tool in sent.first.conversation.tools
