"""The real Hermes Agent calls cao's MCP tools: a scripted ``send_message`` reaches another terminal's
inbox."""

from __future__ import annotations

import json
import re

import pytest

from cao_testkit.live_mcp import check_send_message_over_mcp

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(120)]

#: Hermes hands an MCP tool's result to the model inside a notice that it is data, as ``{"result": text}``.
_ENVELOPE = re.compile(r'^<untrusted_tool_result source="[^"]+">\n.*?\n\n(?P<body>\{.*\})\n'
                       r'</untrusted_tool_result>$', re.DOTALL)


def _unwrapped(output: str):
    found = _ENVELOPE.match(output.strip())
    if found is None:
        raise ValueError("not in Hermes's untrusted_tool_result envelope")
    return json.loads(json.loads(found.group("body"))["result"])


async def test_send_message_called_by_hermes_lands_in_the_receivers_inbox(cao_server, model_server, workdir):
    # Hermes offers an MCP tool as mcp__<server>__<tool>, the server's name with '-' made '_'.
    tool = "mcp__cao_mcp_server__send_message"
    sent = await check_send_message_over_mcp(cao_server, model_server, workdir, provider="hermes", tool=tool,
                                             parse=_unwrapped)
    assert tool in sent.first.conversation.tools
