"""The launch plan built from agent profiles: program, flags, the private home, and refusals."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from cao_hookspecs import AgentProfile, LaunchContext, Terminal
from cao_provider_grok_cli.home import SETTINGS
from cao_provider_grok_cli.launch import BINARY_ENV, QUIET_ENV, launch, model_endpoint

TERMINAL = Terminal(id="0a1b2c3d", name="coder-1a2b", session_name="cao-test",
                    provider="grok_cli", agent_profile="coder")
CAO_SERVER = {"command": "cao-mcp-server", "args": [], "env": {"CAO_TERMINAL_ID": "0a1b2c3d"}}


def context(tmp_path: Path, **fields) -> LaunchContext:
    fields.setdefault("profile", AgentProfile(name="coder"))
    return LaunchContext(terminal=TERMINAL, working_directory=str(tmp_path), runtime_dir=str(tmp_path / "rt"),
                         **fields)


@pytest.fixture(autouse=True)
def grok_program(tmp_path, monkeypatch) -> Path:
    """A stand-in ``grok`` named by the override variable (never run), and a user home of the test's."""
    from cao_testkit.launching import noop_program

    program = noop_program(tmp_path / "bin" / "grok")
    monkeypatch.setenv(BINARY_ENV, str(program))
    monkeypatch.setenv("HOME", str(tmp_path / "user"))
    monkeypatch.delenv("GROK_HOME", raising=False)
    return program


def _config(plan, tmp_path) -> dict:
    return tomllib.loads(plan.files["grok-home/config.toml"])


def test_bare_profile_runs_inline_always_approving_in_a_private_home(tmp_path, grok_program):
    plan = launch(context(tmp_path))
    assert list(plan.argv) == [str(grok_program), "--no-alt-screen", "--no-subagents", "--always-approve"]
    assert dict(plan.env) == {"GROK_HOME": str(tmp_path / "rt" / "grok-home"), **QUIET_ENV}
    assert QUIET_ENV["GROK_DISABLE_AUTOUPDATER"] == "1" and QUIET_ENV["GROK_TELEMETRY_ENABLED"] == "0"
    assert _config(plan, tmp_path) == SETTINGS
    assert SETTINGS["cli"] == {"auto_update": False} and SETTINGS["features"]["telemetry"] == "off"


def test_model_rules_and_mcp_servers(tmp_path):
    profile = AgentProfile(name="coder", model="grok-4.5", system_prompt="You review code.\n")
    servers = {"cao-mcp-server": CAO_SERVER, "docs": {"url": "http://127.0.0.1:9/mcp", "type": "http",
                                                      "timeout": 30}}
    plan = launch(context(tmp_path, profile=profile, mcp_servers=servers))
    assert list(plan.argv)[-4:] == ["--model", "grok-4.5", "--rules", "You review code."]
    assert _config(plan, tmp_path) == {**SETTINGS, "mcp_servers": {
        "cao-mcp-server": {"command": "cao-mcp-server", "args": [], "env": {"CAO_TERMINAL_ID": "0a1b2c3d"}},
        "docs": {"url": "http://127.0.0.1:9/mcp", "type": "http", "startup_timeout_sec": 30,
                 "tool_timeout_sec": 30}}}
    # The request's model wins over the profile's.
    request = launch(context(tmp_path, profile=profile, model="grok-4.6"))
    assert list(request.argv)[-4:-2] == ["--model", "grok-4.6"]


def test_restricted_tools_become_allow_rules_in_dont_ask_mode(tmp_path):
    servers = {"cao-mcp-server": CAO_SERVER, "other": CAO_SERVER}
    plan = launch(context(tmp_path, allowed_tools=["fs_read", "execute_bash", "@cao-mcp-server"],
                          mcp_servers=servers))
    assert list(plan.argv)[3:] == ["--permission-mode", "dontAsk", "--allow", "Bash", "--allow", "Read",
                             "--allow", "MCPTool(cao-mcp-server__*)"]
    nothing = launch(context(tmp_path, allowed_tools=[]))
    assert list(nothing.argv)[3:] == ["--permission-mode", "dontAsk", "--deny", "*"]
    assert list(launch(context(tmp_path, allowed_tools=["*"])).argv)[3:] == ["--always-approve"]


def test_values_grok_cannot_take_are_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match="'ls_everything' means nothing to Grok Build"):
        launch(context(tmp_path, allowed_tools=["ls_everything"]))
    with pytest.raises(ValueError, match="permissionMode 'default' makes Grok Build ask"):
        launch(context(tmp_path, profile=AgentProfile(name="coder", permission_mode="default")))
    with pytest.raises(ValueError, match="MCP server 'ws': Grok Build connects over http or sse"):
        launch(context(tmp_path, mcp_servers={"ws": {"url": "ws://x", "type": "websocket"}}))


def test_the_users_sign_in_is_linked_never_copied_and_their_home_never_written(tmp_path):
    user = tmp_path / "user" / ".grok"
    user.mkdir(parents=True)
    (user / "auth.json").write_text("{}", encoding="utf-8")
    (user / "config.toml").write_text("[mcp_servers.mine]\ncommand = 'x'\n", encoding="utf-8")
    launch(context(tmp_path, mcp_servers={"cao-mcp-server": CAO_SERVER}))
    link = tmp_path / "rt" / "grok-home" / "auth.json"
    assert link.is_symlink() and link.resolve() == (user / "auth.json").resolve()
    assert sorted(p.name for p in user.iterdir()) == ["auth.json", "config.toml"]


def test_the_kernels_signal_command_becomes_hooks_in_the_private_config(tmp_path):
    plan = launch(context(tmp_path, env={"CAO_SIGNAL_COMMAND": '["/bin/send", "--terminal", "0a1b2c3d"]'}))
    hooks = _config(plan, tmp_path)["hooks"]
    assert hooks["Stop"][0]["hooks"][0]["command"] == "/bin/send --terminal 0a1b2c3d --stdin Stop"
    with pytest.raises(ValueError, match="CAO_SIGNAL_COMMAND"):
        launch(context(tmp_path, env={"CAO_SIGNAL_COMMAND": "not json"}))


def test_a_missing_program_is_refused_with_the_install_hint(tmp_path, monkeypatch):
    monkeypatch.delenv(BINARY_ENV)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(ValueError, match="npm install -g @xai-official/grok"):
        launch(context(tmp_path))


def test_model_endpoint_reads_the_environment_only():
    assert model_endpoint({}) == "https://api.x.ai/v1"
    assert model_endpoint({"GROK_MODELS_BASE_URL": "http://127.0.0.1:9/v1"}) == "http://127.0.0.1:9/v1"
    assert model_endpoint({"GROK_XAI_API_BASE_URL": "http://h/v1"}) == "http://h/v1"
