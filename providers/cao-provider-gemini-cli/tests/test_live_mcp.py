"""The real Gemini CLI calls cao's MCP tools: cao-server serves the kernel, Gemini CLI starts
cao-mcp-server from its private settings, and a scripted ``send_message`` lands in another terminal's
inbox."""

from __future__ import annotations

import json

import pytest

from cao_hookspecs import AgentProfile, MessageState, TerminalStatus
from cao_kernel.testing.models import call_tool, respond

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(120)]

#: How Gemini CLI names an MCP tool to the model: ``mcp_<server>_<tool>``.
SEND_MESSAGE = "mcp_cao_send_message"


async def test_send_message_from_gemini_reaches_another_terminals_inbox(live_gemini, workdir):
    from cao_server.client import HttpKernel
    from cao_server.testing import serve_in_thread

    receiver: dict[str, str] = {}

    def after_tool(conversation):
        result = conversation.last_tool_result
        assert result is not None, conversation
        return f"Delivered. Tool said: {result.output}"

    live_gemini.script.add(
        respond(lambda conv: call_tool(SEND_MESSAGE, {"receiver_id": receiver["id"],
                                                      "message": "hello from gemini"})),
        respond(after_tool),
    )
    kernel = live_gemini.kernel("tmux", "gemini_cli", "mock_cli", "inbox_sqlite", "server", "mcp")
    kernel.add_profile(live_gemini.profile(mcp_servers={"cao": {"command": "cao-mcp-server"}}))
    kernel.add_profile(AgentProfile(name="listener", provider="mock_cli"))
    # Mounted the way `cao server` mounts them: cao-mcp-server relays to the server's /mcp route.
    with serve_in_thread(kernel, extra_routes=list(kernel.routes.values())) as running:
        api = HttpKernel(running.url, timeout=60)
        try:
            listener = await api.create_session("listener", working_directory=workdir)
            receiver["id"] = listener.id
            coder = await api.create_session("coder", working_directory=workdir)
            assert coder.status in (TerminalStatus.IDLE, TerminalStatus.COMPLETED)

            await api.send_input(coder.id, "Tell the listener hello.")
            await api.wait_for_status(coder.id, {TerminalStatus.COMPLETED}, timeout=40)
            answer = await api.get_output(coder.id, "last")
            assert answer.startswith("Delivered. Tool said:"), answer

            first, second = live_gemini.server.turns()
            # The first request already offered cao's tools, under Gemini CLI's name for them.
            assert SEND_MESSAGE in first.conversation.tools
            result = second.conversation.last_tool_result
            assert result is not None and not result.is_error, result
            payload = json.loads(result.output[result.output.index("{"):result.output.rindex("}") + 1])
            assert payload["success"] is True and payload["sender_id"] == coder.id
            assert payload["receiver_id"] == listener.id

            # The listener is idle: the message is typed into it at once, and mock_cli answers it.
            await api.wait_for_status(listener.id, {TerminalStatus.COMPLETED}, timeout=20)
            (message,) = await api.list_messages(listener.id)
            assert message.sender_id == coder.id and "hello from gemini" in message.body
            assert message.state == MessageState.DELIVERED
            assert "hello from gemini" in await api.get_output(listener.id, "last")
            live_gemini.script.assert_done()
        finally:
            await api.aclose()
