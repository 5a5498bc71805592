"""The launch plan built from agent profiles: flags, the -i message, the private home and its MCP
config, and refusals."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cao_hookspecs import AgentProfile, LaunchContext, Terminal
from cao_provider_antigravity_cli.launch import BINARY, BINARY_ENV, launch, model_endpoint

TERMINAL = Terminal(id="0a1b2c3d", name="coder-1a2b", session_name="cao-test",
                    provider="antigravity_cli", agent_profile="coder")
MCP = "agy-home/.gemini/config/mcp_config.json"


def context(tmp_path: Path, **fields) -> LaunchContext:
    fields.setdefault("profile", AgentProfile(name="coder"))
    fields.setdefault("env", {"HOME": str(tmp_path / "home")})
    return LaunchContext(terminal=TERMINAL, working_directory=str(tmp_path), runtime_dir=str(tmp_path / "rt"),
                         **fields)


@pytest.fixture(autouse=True)
def cli_on_path(cli_bin, monkeypatch):
    monkeypatch.delenv(BINARY_ENV, raising=False)
    monkeypatch.setenv("PATH", str(cli_bin))


def test_bare_profile(tmp_path, cli_bin):
    plan = launch(context(tmp_path))
    assert plan.argv == (str(cli_bin / BINARY), "--dangerously-skip-permissions")
    assert dict(plan.env) == {"HOME": str(tmp_path / "rt" / "agy-home")}
    assert json.loads(plan.files[MCP]) == {"mcpServers": {}}  # never the user's servers


def test_model_and_instructions(tmp_path):
    profile = AgentProfile(name="coder", system_prompt="You review code.\n")
    plan = launch(context(tmp_path, profile=profile, model="Gemini 3.5 Flash (High)"))
    assert plan.argv[2:4] == ("--model", "Gemini 3.5 Flash (High)")
    assert plan.argv[4] == "-i" and plan.argv[5].startswith("You review code.\n\n---\nAcknowledge")
    with pytest.raises(ValueError, match="not a model name"):
        launch(context(tmp_path, model="--help"))


def test_the_private_home_links_the_users_except_the_mcp_config(tmp_path):
    home = tmp_path / "home"
    (home / ".gemini" / "config").mkdir(parents=True)
    (home / ".gemini" / "antigravity-cli").mkdir()
    (home / ".gitconfig").write_text("[user]\n", encoding="utf-8")
    users = home / ".gemini" / "config" / "mcp_config.json"
    users.write_text('{"mcpServers": {"mine": {}}}', encoding="utf-8")
    (home / ".gemini" / "config" / "other.json").write_text("{}", encoding="utf-8")
    servers = {"cao-mcp-server": {"command": "cao-mcp-server", "args": [], "env": {"CAO_TERMINAL_ID": "t"}}}
    plan = launch(context(tmp_path, mcp_servers=servers))
    private = tmp_path / "rt" / "agy-home"
    assert (private / ".gitconfig").is_symlink()
    linked = private / ".gemini" / "antigravity-cli"
    assert linked.resolve() == (home / ".gemini" / "antigravity-cli").resolve()
    assert (private / ".gemini" / "config" / "other.json").is_symlink()
    assert not (private / ".gemini" / "config" / "mcp_config.json").exists()  # the kernel writes cao's
    assert json.loads(plan.files[MCP])["mcpServers"] == servers
    assert json.loads(users.read_text()) == {"mcpServers": {"mine": {}}}


def test_url_servers_and_tool_restrictions_are_refused(tmp_path):
    with pytest.raises(ValueError, match="run a command"):
        launch(context(tmp_path, mcp_servers={"docs": {"type": "http", "url": "https://example.invalid"}}))
    with pytest.raises(ValueError, match=r"allowedTools .*no option that limits its tools"):
        launch(context(tmp_path, allowed_tools=("fs_read",)))
    assert launch(context(tmp_path, allowed_tools=("fs_read",), yolo=True))


def test_a_missing_program_is_refused_with_the_install_hint(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ValueError, match=re.escape("https://antigravity.google/cli/install.sh")):
        launch(context(tmp_path))


def test_model_endpoint_is_unknown():
    assert model_endpoint({}) is None
