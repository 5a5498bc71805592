"""The real Oh My Pi calls cao's MCP tools: a scripted ``send_message`` reaches another terminal's inbox."""

from __future__ import annotations

import pytest

from cao_testkit.live import json_answer
from cao_testkit.live_mcp import check_send_message_over_mcp

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(120)]


async def test_send_message_called_by_oh_my_pi_lands_in_the_receivers_inbox(cao_server, model_server,
                                                                              workdir):
    # Offered directly (tools.xdev off), named mcp__<server>_<tool> with the dashes made underscores.
    tool = "mcp__cao_mcp_server_send_message"
    sent = await check_send_message_over_mcp(cao_server, model_server, workdir, provider="omp",
                                             tool=tool, parse=json_answer)
    assert tool in sent.first.conversation.tools
