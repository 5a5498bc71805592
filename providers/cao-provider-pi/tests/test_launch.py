"""The launch plan built from agent profiles: program, flags, the files the kernel writes, and refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cao_hookspecs import AgentProfile, LaunchContext, Terminal
from cao_provider_pi.launch import BINARY, BINARY_ENV, BRIDGE_ENV, launch, model_endpoint, tool_selection

TERMINAL = Terminal(id="0a1b2c3d", name="coder-1a2b", session_name="cao-test", provider="pi",
                    agent_profile="coder")
SIGNAL = ["/usr/bin/python3", "-I", "-S", "/opt/signal_send.py", "--terminal", TERMINAL.id]


def context(tmp_path: Path, **fields) -> LaunchContext:
    fields.setdefault("profile", AgentProfile(name="coder"))
    return LaunchContext(terminal=TERMINAL, working_directory=str(tmp_path), runtime_dir=str(tmp_path / "rt"),
                         **fields)


@pytest.fixture(autouse=True)
def user(tmp_path, monkeypatch) -> Path:
    """A user with pi on PATH and their own agent folder."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / BINARY).write_text("#!/bin/sh\n")
    (bin_dir / BINARY).chmod(0o755)
    home = tmp_path / "home"
    agent = home / ".pi" / "agent"
    agent.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", str(bin_dir))
    for name in (BINARY_ENV, "PI_CODING_AGENT_DIR"):
        monkeypatch.delenv(name, raising=False)
    return agent


def _bridge(plan) -> dict:
    return json.loads(plan.files["cao-bridge.json"])


def test_a_bare_profile_runs_pi_offline_with_the_bridge_and_a_private_agent_folder(tmp_path, user):
    user.joinpath("settings.json").write_text(json.dumps({"defaultModel": "m", "theme": "light"}))
    user.joinpath("auth.json").write_text("{}")
    plan = launch(context(tmp_path))
    runtime = tmp_path / "rt"
    assert plan.argv == (str(tmp_path / "bin" / BINARY), "--offline", "-e", str(runtime / "cao-bridge.ts"))
    assert plan.env["PI_CODING_AGENT_DIR"] == str(runtime / "pi-agent")
    assert plan.env[BRIDGE_ENV] == str(runtime / "cao-bridge.json")
    assert plan.env["PI_OFFLINE"] == "1" and plan.env["PI_TELEMETRY"] == "0"
    assert "export default async function" in plan.files["cao-bridge.ts"]
    assert _bridge(plan) == {"servers": {}, "signal": None, "tools": None, "connect_timeout_ms": 30000}
    # The user's settings, with cao's over them; their sign-in linked, never copied.
    settings = json.loads(plan.files["pi-agent/settings.json"])
    assert settings == {"defaultModel": "m", "theme": "light", "enableInstallTelemetry": False,
                        "quietStartup": True, "collapseChangelog": True}
    assert (runtime / "pi-agent" / "auth.json").resolve() == user / "auth.json"


def test_model_system_prompt_mcp_servers_and_signals(tmp_path):
    env = {"CAO_TERMINAL_ID": TERMINAL.id, "CAO_SERVER_URL": "http://127.0.0.1:9"}
    servers = {"cao-mcp-server": {"command": "cao-mcp-server", "args": [], "env": env}}
    profile = AgentProfile(name="coder", system_prompt="  You review code.\n")
    plan = launch(context(tmp_path, profile=profile, model="scripted/small", mcp_servers=servers,
                          env={"CAO_SIGNAL_COMMAND": json.dumps(SIGNAL)}))
    runtime = tmp_path / "rt"
    assert plan.argv[2:6] == ("--model", "scripted/small", "--append-system-prompt",
                              str(runtime / "system-prompt.md"))
    assert plan.files["system-prompt.md"] == "You review code.\n"
    bridge = _bridge(plan)
    assert bridge["servers"] == {"cao-mcp-server": {"command": "cao-mcp-server", "args": [], "env": env}}
    assert bridge["signal"] == SIGNAL


def test_allowed_tools_keep_builtin_tools_and_mcp_servers():
    assert tool_selection(None, ["cao", "docs"]) == (None, ["cao", "docs"])
    assert tool_selection(["*"], ["cao"]) == (None, ["cao"])
    assert tool_selection(["fs_read", "execute_bash", "@cao"], ["cao", "docs"]) == (
        ["bash", "read", "grep"], ["cao"])
    everything = ["bash", "read", "grep", "ls", "find", "edit", "write"]
    assert tool_selection(["@builtin"], ["cao"]) == (everything, [])
    with pytest.raises(ValueError, match="'web_fetch' is not one pi can be limited to"):
        tool_selection(["web_fetch"], [])


def test_values_pi_cannot_take_are_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match="permissionMode 'plan': pi has no permission modes"):
        launch(context(tmp_path, profile=AgentProfile(name="coder", permission_mode="plan")))
    with pytest.raises(ValueError, match="is not a model name"):
        launch(context(tmp_path, model="--bad"))
    remote = {"docs": {"type": "http", "url": "https://example.invalid/mcp"}}
    with pytest.raises(ValueError, match="MCP server 'docs': pi's bridge starts stdio servers only"):
        launch(context(tmp_path, mcp_servers=remote))


def test_a_missing_program_names_what_to_install(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    with pytest.raises(Exception, match="npm install -g @mariozechner/pi-coding-agent"):
        launch(context(tmp_path))


def test_model_endpoint_reads_the_users_default_provider(user):
    env = {"HOME": str(user.parent.parent)}
    assert model_endpoint(env) is None
    user.joinpath("settings.json").write_text(json.dumps({"defaultProvider": "local"}))
    user.joinpath("models.json").write_text(json.dumps(
        {"providers": {"local": {"baseUrl": "http://127.0.0.1:8080/v1"}}}))
    assert model_endpoint(env) == "http://127.0.0.1:8080/v1"
    user.joinpath("settings.json").write_text(json.dumps({"defaultProvider": "anthropic"}))
    assert model_endpoint(env) == "https://api.anthropic.com"
