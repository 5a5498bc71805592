"""Handoff, assign and the MCP readiness gate with the real Qwen Code as supervisor and as worker: cao's
live orchestration kit (``cao_testkit.live``), one scripted Chat Completions server answering every
agent of a test by role."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cao_testkit.live import LiveOrchestration, LiveWorld, serve_world
from cao_testkit.server_process import live_server_plugins

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(120)]

#: The profile's name for cao's MCP server; Qwen Code offers its tools as ``mcp__<server>__<tool>``.
SERVER = "cao-mcp-server"


@pytest.fixture
def live_world(live_sandbox, model_server, make_kernel, workdir) -> Iterator[LiveWorld]:
    from cao_hookspecs import AgentProfile

    kernel = make_kernel(*live_server_plugins("qwen_code"))

    def add_agent(name: str, instructions: str) -> None:
        kernel.add_profile(AgentProfile(name=name, provider="qwen_code", system_prompt=instructions,
                                        mcp_servers={SERVER: {"type": "stdio", "command": "cao-mcp-server"}}))

    with serve_world(kernel, model_server, add_agent, lambda name: f"mcp__{SERVER}__{name}",
                     workdir) as world:
        yield world


class TestLiveOrchestration(LiveOrchestration):
    """Qwen Code supervising Qwen Code."""
