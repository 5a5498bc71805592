"""The launch plan built from agent profiles: flags, the initial prompt, the MCP plugin, refusals."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cao_hookspecs import AgentProfile, LaunchContext, Terminal
from cao_provider_cursor_cli.launch import BINARY, BINARY_ENV, launch, model_endpoint

TERMINAL = Terminal(id="0a1b2c3d", name="coder-1a2b", session_name="cao-test",
                    provider="cursor_cli", agent_profile="coder")


def context(tmp_path: Path, **fields) -> LaunchContext:
    fields.setdefault("profile", AgentProfile(name="coder"))
    return LaunchContext(terminal=TERMINAL, working_directory=str(tmp_path), runtime_dir=str(tmp_path / "rt"),
                         **fields)


@pytest.fixture(autouse=True)
def cli_on_path(cli_bin, monkeypatch):
    monkeypatch.delenv(BINARY_ENV, raising=False)
    monkeypatch.setenv("PATH", str(cli_bin))


def test_bare_profile(tmp_path, cli_bin):
    plan = launch(context(tmp_path))
    assert plan.argv == (str(cli_bin / BINARY), "--force")
    assert dict(plan.files) == {} and dict(plan.env) == {}


def test_model_mcp_servers_and_initial_prompt(tmp_path):
    servers = {"cao-mcp-server": {"command": "cao-mcp-server", "args": [], "env": {"CAO_TERMINAL_ID": "t"}}}
    profile = AgentProfile(name="coder", system_prompt="You review code.")
    plan = launch(context(tmp_path, profile=profile, model="sonnet-4", mcp_servers=servers))
    plugin = str(tmp_path / "rt" / "cursor-plugin")
    assert plan.argv[1:6] == ("--force", "--model", "sonnet-4", "--plugin-dir", plugin)
    assert plan.argv[6] == "--approve-mcps"
    assert plan.argv[7].startswith("You review code.\n\nThese instructions hold")
    mcp = json.loads(plan.files["cursor-plugin/mcp.json"])
    assert mcp == {"mcpServers": {"cao-mcp-server": {**servers["cao-mcp-server"], "type": "stdio"}}}
    assert json.loads(plan.files["cursor-plugin/.cursor-plugin/plugin.json"])["name"] == "cao-terminal"


def test_refusals(tmp_path):
    with pytest.raises(ValueError, match=r"allowedTools .*no option that limits its tools"):
        launch(context(tmp_path, allowed_tools=("fs_read", "@cao-mcp-server")))
    assert launch(context(tmp_path, allowed_tools=("fs_read",), yolo=True))
    with pytest.raises(ValueError, match="not a model name"):
        launch(context(tmp_path, model="--print"))
    with pytest.raises(ValueError, match="MCP server name"):
        launch(context(tmp_path, mcp_servers={"bad name": {"command": "x"}}))


def test_a_missing_program_is_refused_with_the_install_hint(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ValueError, match=re.escape("curl https://cursor.com/install -fsS | bash")):
        launch(context(tmp_path))


def test_model_endpoint_is_unknown():
    assert model_endpoint({}) is None
