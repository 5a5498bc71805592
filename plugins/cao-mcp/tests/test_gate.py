"""The MCP readiness gate end to end: a real ``cao server``, mock workers whose cao MCP server connects
late (``mock_mcp_delay_ms``: they show their prompt 1.5 s before their tools exist, like an agent CLI whose
MCP server is slow to start), and the built-in ``worker`` behaviour, which calls ``send_message`` as soon
as it gets an assigned task. The worker's ``cao-mcp-server`` relays to ``/mcp``, whose ``tools/list``
reports the terminal in."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from cao_hookspecs import CreateTerminalRequest

pytestmark = pytest.mark.tmux

LATE_TOOLS = """---
name: late_tools
description: A mock worker whose MCP server connects 1.5 s after its prompt appears
provider: mock_cli
mockBehaviour: worker
mock_mcp_delay_ms: 1500
mcpServers:
  cao-mcp-server:
    type: stdio
    command: cao-mcp-server
---

You report your results with send_message.
"""
DELAY = 1.5


def install_profile(server: Any) -> None:
    (server.home / "agent-store" / "late_tools.md").write_text(LATE_TOOLS, encoding="utf-8")


async def assign_and_wait(server: Any, mcp: Any, api: Any) -> tuple[str, str, Any]:
    """Assign ``late_tools`` from a fresh supervisor; returns (supervisor, worker, the task message once
    it left the inbox)."""
    supervisor = await mcp.agent(server, api)
    result = await api.assign(supervisor, "late_tools", "count the files")
    assert result.success, result.message
    worker = result.terminal_id

    async def task_done() -> Any:
        rows = await api.list_messages(worker)
        return rows[0] if rows and rows[0].state in ("delivered", "failed", "dead") else None

    return supervisor, worker, await mcp.wait_for(task_done, 30)


async def test_the_task_waits_until_the_worker_has_its_tools(server: Any, mcp: Any) -> None:
    install_profile(server)
    async with server.client() as api:
        supervisor, worker, task = await assign_and_wait(server, mcp, api)
        assert task.state == "delivered"
        assert task.updated_at - task.created_at >= DELAY, "typed before the worker's MCP server connected"
        report = await mcp.delivered(api, supervisor, timeout=30)
        assert report.sender_id == worker
        assert report.body.startswith("Done: count the files")
        assert "No such tool" not in await api.get_output(worker)

        started = time.monotonic()
        handed = await api.handoff(supervisor, "late_tools", "summarise", timeout=60)
        assert handed.success and handed.output == "Done: summarise"
        assert time.monotonic() - started >= DELAY


async def test_without_the_gate_the_worker_meets_the_upstream_bug(own_server: Any, mcp: Any) -> None:
    """The same assign on a server with the gate turned off: the task is typed at the first prompt and
    the worker's send_message finds no such tool, as with upstream CAO and a real Claude Code."""
    ungated = own_server(CAO_MCP_CONNECT_TIMEOUT="0")
    install_profile(ungated)
    async with ungated.client() as api:
        supervisor, worker, task = await assign_and_wait(ungated, mcp, api)
        assert task.state == "delivered" and task.updated_at - task.created_at < DELAY

        async def failed() -> str | None:
            screen = await api.get_output(worker)
            return screen if "ERROR: mock behaviour failed" in screen else None

        screen = await mcp.wait_for(failed, 20)
        assert ("ToolError: No such tool available: send_message (MCP server 'cao-mcp-server' is still "
                "connecting)") in screen.replace("\n", "")
        assert not await api.list_messages(supervisor, state="delivered")


NO_TOOLS_YET = """---
name: no_tools_yet
description: A mock agent whose own MCP server would connect only after ten minutes
provider: mock_cli
mock_mcp_delay_ms: 600000
mcpServers:
  cao-mcp-server:
    type: stdio
    command: cao-mcp-server
---

You answer.
"""


async def test_any_mcp_client_listing_the_tools_reports_the_terminal(server: Any, mcp: Any) -> None:
    """An agent CLI speaking streamable HTTP to /mcp reports in by listing the tools (its initialize
    alone does not); the HTTP API's mcp-connected route does the same for other integrations."""
    (server.home / "agent-store" / "no_tools_yet.md").write_text(NO_TOOLS_YET, encoding="utf-8")
    async with server.client() as api:
        supervisor = await mcp.agent(server, api)
        session = (await api.get_terminal(supervisor)).session_name
        # Not waiting for them to be ready: that includes their MCP server, which would not come in time.
        workers = [(await api.create_terminal(CreateTerminalRequest(
            session_name=session, agent_profile="no_tools_yet", working_directory=str(server.workdir),
        ), wait_ready=False)).id for _ in range(2)]
        for worker in workers:
            await api.send_message(supervisor, worker, f"hello {worker}")
        async with mcp.http(server.mcp_url, workers[0], token=server.token, secret=server.secret(workers[0])) as client:
            await asyncio.sleep(1.5)  # the agents are up; this client is initialized but listed no tools
            assert [m.state for w in workers for m in await api.list_messages(w)] == ["pending", "pending"]
            await client.list_tools()
        assert (await mcp.delivered(api, workers[0], timeout=5)).body.startswith(f"hello {workers[0]}")
        assert (await api.list_messages(workers[1]))[0].state == "pending"
        await api.mcp_connected(workers[1])
        assert (await mcp.delivered(api, workers[1], timeout=5)).body.startswith(f"hello {workers[1]}")
