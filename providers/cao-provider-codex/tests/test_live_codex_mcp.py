"""The real Codex calls cao's MCP tools: cao-server serves the kernel, Codex starts cao-mcp-server from
its private config, and a scripted ``send_message`` lands in another terminal's inbox."""

from __future__ import annotations

import json

import pytest

from cao_hookspecs import AgentProfile, CreateTerminalRequest, MessageState, TerminalStatus
from cao_testkit.models.script import call_tool, respond
from cao_testkit.serve import serve_in_thread

# Generous: the first live test of a machine installs Codex from npm (about 400 MB) during its set-up.
pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.timeout(600)]


async def test_send_message_from_codex_reaches_another_terminals_inbox(live_codex, workdir):
    from cao_server.client import HttpKernel

    receiver: dict[str, str] = {}

    def after_tool(conversation):
        result = conversation.last_tool_result
        assert result is not None, conversation
        return f"Delivered. Tool said: {result.output}"

    live_codex.script.add(
        respond(lambda conv: call_tool("mcp__cao__send_message",
                                       {"receiver_id": receiver["id"], "message": "hello from codex"})),
        respond(after_tool),
    )
    kernel = live_codex.kernel("tmux", "codex", "mock_cli", "inbox_sqlite", "server", "mcp")
    kernel.add_profile(live_codex.profile(mcp_servers={"cao": {"command": "cao-mcp-server"}}))
    kernel.add_profile(AgentProfile(name="listener", provider="mock_cli"))
    with serve_in_thread(kernel) as running:
        api = HttpKernel(running.url, timeout=60)
        try:
            listener = await api.create_session(CreateTerminalRequest(
                agent_profile="listener", working_directory=workdir))
            receiver["id"] = listener.id
            coder = await api.create_session(CreateTerminalRequest(
                agent_profile="coder", working_directory=workdir))
            assert coder.status in (TerminalStatus.IDLE, TerminalStatus.COMPLETED)

            await api.send_input(coder.id, "Tell the listener hello.")
            await api.wait_for_status(coder.id, {TerminalStatus.COMPLETED}, timeout=40)
            answer = await api.get_output(coder.id, "last")
            assert answer.startswith("Delivered. Tool said:"), answer

            first, second = live_codex.server.turns()
            # Sent the moment Codex showed its prompt: the required MCP server was waited for.
            assert "mcp__cao__send_message" in first.conversation.tools
            result = second.conversation.last_tool_result
            payload = json.loads(result.output[result.output.index("{"):])
            assert payload["success"] is True and payload["sender_id"] == coder.id
            assert payload["receiver_id"] == listener.id

            # The listener is idle: the message is typed into it at once, and mock_cli answers it.
            await api.wait_for_status(listener.id, {TerminalStatus.COMPLETED}, timeout=20)
            (message,) = await api.list_messages(listener.id)
            assert message.sender_id == coder.id and "hello from codex" in message.body
            assert message.state == MessageState.DELIVERED
            assert "hello from codex" in await api.get_output(listener.id, "last")
            live_codex.script.assert_done()
        finally:
            await api.aclose()


async def test_a_profile_mcp_server_that_cannot_start_is_an_error_with_codexs_reason(live_codex, workdir):
    from cao_kernel.errors import AgentFailed

    async with live_codex.kernel() as kernel:
        kernel.add_profile(live_codex.profile(mcp_servers={"broken": {"command": "false"}}))
        try:
            term = await kernel.create_session(CreateTerminalRequest(
                agent_profile="coder", working_directory=workdir))
        except AgentFailed as failure:
            # Codex gave up before it drew its prompt: the error carries its last screen.
            screen = str(failure)
        else:
            # Codex draws its prompt while MCP servers start, then exits when a required one fails.
            report = await kernel.wait_for_status(term.id, {TerminalStatus.ERROR}, timeout=30)
            assert "exited" in report.evidence
            screen = await kernel.get_output(term.id, "full")
    # Newer releases put a longer prefix before the reason, so it may wrap across screen rows.
    flat = " ".join(screen.split())
    assert "required MCP servers failed to initialize" in flat and "broken" in flat, screen
