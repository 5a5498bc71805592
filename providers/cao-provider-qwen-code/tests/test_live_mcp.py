"""The real Qwen Code calls cao's MCP tools: a scripted ``send_message`` reaches another terminal's inbox."""

from __future__ import annotations

import pytest

from cao_testkit.live import json_answer
from cao_testkit.live_mcp import check_send_message_over_mcp

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(120)]


async def test_send_message_called_by_qwen_code_lands_in_the_receivers_inbox(cao_server, model_server,
                                                                               workdir):
    # Qwen Code offers MCP tools as mcp__<server>__<tool>, in the first request (alwaysLoadTools), and
    # passes a result on as its structured copy, then its text.
    tool = "mcp__cao-mcp-server__send_message"
    sent = await check_send_message_over_mcp(cao_server, model_server, workdir, provider="qwen_code",
                                             tool=tool, parse=json_answer)
    assert tool in sent.first.conversation.tools
