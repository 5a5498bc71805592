"""A worker's permission prompt with the real Claude Code as supervisor and worker, answered by a person
through ``cao terminal answer`` and then by a policy rule (``cao_testkit.live_prompts``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from cao_hookspecs import AgentProfile
from cao_testkit.live import LiveWorld, serve_world
from cao_testkit.live_prompts import COMMAND, LivePrompts
from cao_testkit.models import call_tool
from cao_testkit.server_process import live_server_plugins

pytestmark = [pytest.mark.live_cli, pytest.mark.tmux, pytest.mark.slow, pytest.mark.timeout(150)]

SERVER = "cao-mcp-server"
MCP = {SERVER: {"type": "stdio", "command": "cao-mcp-server"}}


@pytest.fixture
def live_world(live_sandbox, model_server, make_kernel, workdir) -> Iterator[LiveWorld]:
    kernel = make_kernel(*live_server_plugins("claude_code"))

    def add_agent(name: str, instructions: str) -> None:
        kernel.add_profile(AgentProfile(name=name, provider="claude_code", system_prompt=instructions,
                                        mcp_servers=MCP))

    with serve_world(kernel, model_server, add_agent, lambda name: f"mcp__{SERVER}__{name}",
                     workdir) as world:
        yield world


class TestLivePrompts(LivePrompts):
    """Claude Code's Bash permission prompt under its default permission mode."""

    provider = "claude_code"
    command_call = call_tool("Bash", {"command": COMMAND, "description": "Create the marker file"})
    allow_rule = f"Bash({COMMAND})"

    def asking_profile(self, world: LiveWorld, name: str, instructions: str,
                       policy: dict[str, Any] | None) -> AgentProfile:
        # The default permission mode asks before Bash; cao's own tools are pre-approved by the provider.
        return AgentProfile(name=name, provider="claude_code", system_prompt=instructions, mcp_servers=MCP,
                            permission_mode="default", prompt_policy=policy)
