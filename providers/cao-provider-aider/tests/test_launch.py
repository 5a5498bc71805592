"""The launch plan built from agent profiles: program, flags, files the kernel writes, and refusals."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cao_hookspecs import AgentProfile, LaunchContext, Terminal
from cao_provider_aider.launch import BINARY, BINARY_ENV, launch, model_endpoint

TERMINAL = Terminal(id="0a1b2c3d", name="coder-1a2b", session_name="cao-test",
                    provider="aider", agent_profile="coder")


def context(tmp_path: Path, **fields) -> LaunchContext:
    fields.setdefault("profile", AgentProfile(name="coder"))
    return LaunchContext(terminal=TERMINAL, working_directory=str(tmp_path), runtime_dir=str(tmp_path / "rt"),
                         **fields)


@pytest.fixture(autouse=True)
def cli_on_path(cli_bin, monkeypatch):
    monkeypatch.delenv(BINARY_ENV, raising=False)
    monkeypatch.setenv("PATH", str(cli_bin))


def test_bare_profile_runs_the_program_from_path(tmp_path, cli_bin):
    plan = launch(context(tmp_path))
    assert plan.argv == (str(cli_bin / BINARY),)
    assert dict(plan.files) == {}


def test_model_system_prompt_and_mcp_servers(tmp_path):
    env = {"CAO_TERMINAL_ID": TERMINAL.id, "CAO_SERVER_URL": "http://127.0.0.1:9"}
    servers = {"cao-mcp-server": {"command": "cao-mcp-server", "args": [], "env": env}}
    profile = AgentProfile(name="coder", system_prompt="  You review code.\n")
    plan = launch(context(tmp_path, profile=profile, model="small-1", mcp_servers=servers))
    runtime = tmp_path / "rt"
    assert plan.argv[1:] == ("--model", "small-1", "--system-prompt-file", str(runtime / "system-prompt.md"),
                             "--mcp-config", str(runtime / "mcp.json"))
    assert plan.files["system-prompt.md"] == "You review code.\n"
    assert json.loads(plan.files["mcp.json"]) == {"mcpServers": servers}


def test_the_binary_variable_names_another_program(tmp_path, cli_bin, monkeypatch):
    monkeypatch.setenv(BINARY_ENV, str(cli_bin / BINARY))
    monkeypatch.setenv("PATH", "")
    assert launch(context(tmp_path)).argv[0] == str(cli_bin / BINARY)
    monkeypatch.setenv(BINARY_ENV, str(tmp_path / "missing"))
    with pytest.raises(ValueError, match=f"{BINARY_ENV}=.*is not an executable file"):
        launch(context(tmp_path))


def test_a_missing_program_is_refused_with_the_install_hint(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ValueError, match=re.escape(f"'{BINARY}' is not on PATH: install")):
        launch(context(tmp_path))


def test_model_endpoint_reads_the_environment_only():
    assert model_endpoint({"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080"}) == "http://127.0.0.1:8080"
    assert model_endpoint({}) is None
