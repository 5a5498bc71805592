"""Handoff, assign and the MCP readiness gate with the real Codex as supervisor and as worker: cao's
live orchestration kit (``cao_testkit.live``), one scripted Responses API server answering every agent
of a test by role."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cao_testkit.live import LiveOrchestration, LiveWorld, serve_world
from cao_testkit.server_process import live_server_plugins

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(120)]

#: The profile's name for cao's MCP server; Codex offers its tools as ``mcp__<server>__<tool>``.
SERVER = "cao"


@pytest.fixture
def live_world(live_codex, workdir) -> Iterator[LiveWorld]:
    kernel = live_codex.kernel(*live_server_plugins("codex"))

    def add_agent(name: str, instructions: str) -> None:
        kernel.add_profile(live_codex.profile(name, system_prompt=instructions,
                                              mcp_servers={SERVER: {"command": "cao-mcp-server"}}))

    with serve_world(kernel, live_codex.server, add_agent, lambda name: f"mcp__{SERVER}__{name}",
                     workdir) as world:
        yield world


class TestLiveOrchestration(LiveOrchestration):
    """Codex supervising Codex."""
