"""A worker's approval prompt with the real Codex as supervisor and worker, answered by a person through
``cao terminal answer`` and then by a policy rule (``cao_testkit.live_prompts``)."""

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

SERVER = "cao"
MCP = {SERVER: {"command": "cao-mcp-server"}}


@pytest.fixture
def live_codex_world(live_codex, workdir) -> Iterator[tuple[Any, LiveWorld]]:
    kernel = live_codex.kernel(*live_server_plugins("codex"))

    def add_agent(name: str, instructions: str) -> None:
        kernel.add_profile(live_codex.profile(name, system_prompt=instructions, mcp_servers=MCP))

    with serve_world(kernel, live_codex.server, add_agent, lambda name: f"mcp__{SERVER}__{name}",
                     workdir) as world:
        yield live_codex, world


@pytest.fixture
def live_world(live_codex_world) -> LiveWorld:
    return live_codex_world[1]


class TestLivePrompts(LivePrompts):
    """Codex's command approval under an on-request approval policy (a Codex profile of the agent's own)."""

    provider = "codex"
    # The model asks to run the command outside the sandbox, which on-request approval asks a person about.
    command_call = call_tool("exec_command", {"cmd": COMMAND, "sandbox_permissions": "require_escalated",
                                              "justification": "Create the marker file?"})
    allow_rule = f"shell({COMMAND})"

    @pytest.fixture(autouse=True)
    def _codex(self, live_codex_world) -> None:
        self._live = live_codex_world[0]

    def asking_profile(self, world: LiveWorld, name: str, instructions: str,
                       policy: dict[str, Any] | None) -> AgentProfile:
        return self._live.profile(name, system_prompt=instructions, mcp_servers=MCP, codex_profile="asking",
                                  codex_config={"profiles": {"asking": {"approval_policy": "on-request"}}},
                                  prompt_policy=policy)
