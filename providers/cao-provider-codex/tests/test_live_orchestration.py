"""Handoff, assign and the MCP readiness gate with the real Codex as supervisor and as worker.

The scenarios are cao's live orchestration kit (``cao_testkit.live``): one scripted Responses API
server answers every agent of a test by role, and cao-server runs in this process with cao-mcp's routes
mounted, so each agent's ``cao-mcp-server`` relays to ``/mcp`` and reports in through it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cao_testkit.live import LiveOrchestration, LiveWorld, new_roles

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(120)]

#: The profile's name for cao's MCP server; Codex offers its tools as ``mcp__<server>__<tool>``.
SERVER = "cao"
PLUGINS = ("tmux", "codex", "mock_cli", "inbox_sqlite", "server", "mcp")


@pytest.fixture
def live_world(live_codex, workdir) -> Iterator[LiveWorld]:
    roles = new_roles()
    live_codex.server.script = roles
    kernel = live_codex.kernel(*PLUGINS)

    def add_agent(name: str, instructions: str) -> None:
        kernel.add_profile(live_codex.profile(name, system_prompt=instructions,
                                              mcp_servers={SERVER: {"command": "cao-mcp-server"}}))

    with live_codex.serve(kernel) as running:
        yield LiveWorld(url=running.url, model=live_codex.server, roles=roles, add_agent=add_agent,
                        add_profile=kernel.add_profile, tool=lambda name: f"mcp__{SERVER}__{name}",
                        workdir=workdir)


class TestLiveOrchestration(LiveOrchestration):
    """Codex supervising Codex."""
