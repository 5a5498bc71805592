"""Handoff, assign and the MCP readiness gate with the real Claude Code as supervisor and as worker.

The scenarios are cao's live orchestration kit (``cao_testkit.live``): one scripted Anthropic
server answers every agent of a test by role, and cao-server runs in this process with cao-mcp's routes
mounted, so each agent's ``cao-mcp-server`` relays to ``/mcp`` and reports in through it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cao_testkit.live import LiveOrchestration, LiveWorld, new_roles

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(120)]

#: The profile's name for cao's MCP server; Claude Code offers its tools as ``mcp__<server>__<tool>``.
SERVER = "cao-mcp-server"
PLUGINS = ("tmux", "claude_code", "mock_cli", "inbox_sqlite", "server", "mcp")


@pytest.fixture
def live_world(claude_sandbox, model_server, make_kernel, workdir) -> Iterator[LiveWorld]:
    from cao_hookspecs import AgentProfile
    from cao_testkit.serve import serve_in_thread

    roles = new_roles()
    model_server.script = roles
    kernel = make_kernel(*PLUGINS)

    def add_agent(name: str, instructions: str) -> None:
        kernel.add_profile(AgentProfile(name=name, provider="claude_code", system_prompt=instructions,
                                        mcp_servers={SERVER: {"type": "stdio", "command": "cao-mcp-server"}}))

    # Mounted the way `cao server` mounts them: the agents' MCP servers report in at /mcp.
    with serve_in_thread(kernel, extra_routes=list(kernel.routes.values())) as running:
        yield LiveWorld(url=running.url, model=model_server, roles=roles, add_agent=add_agent,
                        add_profile=kernel.add_profile, tool=lambda name: f"mcp__{SERVER}__{name}",
                        workdir=workdir)


class TestLiveOrchestration(LiveOrchestration):
    """Claude Code supervising Claude Code."""
