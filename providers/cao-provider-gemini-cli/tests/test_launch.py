"""The launch plan built from a profile: command line, private home, settings, the user's files untouched."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cao_hookspecs import AgentProfile, CreateTerminalRequest
from cao_provider_gemini_cli.launch import (
    MCP_TIMEOUT_MS,
    NATIVE_TOOLS,
    approval_mode,
    gemini_mcp_servers,
    launch,
    tool_settings,
)
from cao_provider_gemini_cli.provider import gemini_cli_provider, model_endpoint
from cao_testkit.launching import launch_context, noop_program, user_machine

KEY = "AIzaSyUsersOwnKey0000000000000000000000"
ALL_NATIVE = sorted(tool for tools in NATIVE_TOOLS.values() for tool in tools)


@pytest.fixture
def user_home(tmp_path, monkeypatch):
    """A user machine: HOME with Gemini CLI settings, a sign-in, a context file, and an executable named
    as the CLI's override."""
    # The launch reacts to a CI environment (see the CI tests below); the rest must not depend on one.
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    home = tmp_path / "home"
    gemini = home / ".gemini"
    (gemini / "commands").mkdir(parents=True)
    (gemini / "oauth_creds.json").write_text('{"token": "users-own"}')
    (gemini / "GEMINI.md").write_text("Always answer in English.\n")
    (gemini / "settings.json").write_text(json.dumps({
        "ui": {"theme": "GitHub", "showLineNumbers": True},
        "mcpServers": {"users-own": {"command": "npx", "args": ["their-server"]}},
        "tools": {"exclude": ["web_fetch"], "allowed": ["run_shell_command(git)"]},
        "general": {"vimMode": True},
    }))
    program = noop_program(tmp_path / "bin" / "gemini")
    user_machine(monkeypatch, home, binary_env="CAO_GEMINI_CLI_BIN", program=program,
                 leaky=("GEMINI_", "GOOGLE_"))
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    return home


def ctx(tmp_path, profile=None, **kw):
    return launch_context(tmp_path, "gemini_cli", profile, **kw)


def settings_of(plan) -> dict:
    return json.loads(plan.files["gemini-home/.gemini/settings.json"])


def test_full_profile_becomes_the_command_line_and_a_private_home(user_home, tmp_path):
    profile = AgentProfile(name="dev", system_prompt="  You write code.\n")
    servers = {"cao-mcp-server": {"command": "/venv/bin/cao-mcp-server", "args": [],
                                  "env": {"CAO_TERMINAL_ID": "0123abcd", "CAO_API_PORT": "9889"}}}
    c = ctx(tmp_path, profile, model="gemini-2.5-flash", mcp_servers=servers)
    plan = launch(c)
    runtime = Path(c.runtime_dir)
    assert plan.argv == (os.environ["CAO_GEMINI_CLI_BIN"], "--approval-mode", "yolo",
                         "--model", "gemini-2.5-flash")
    assert plan.env == {"GEMINI_CLI_HOME": str(runtime / "gemini-home"), "GEMINI_CLI_TRUST_WORKSPACE": "true"}
    settings = settings_of(plan)
    # The profile's MCP servers replace the user's, with a timeout long enough for handoff.
    assert settings["mcpServers"] == {"cao-mcp-server": {
        "command": "/venv/bin/cao-mcp-server", "args": [], "timeout": MCP_TIMEOUT_MS,
        "env": {"CAO_TERMINAL_ID": "0123abcd", "CAO_API_PORT": "9889"}}}
    # The user's own settings are kept; what cao needs is laid over them.
    assert settings["ui"]["theme"] == "GitHub" and settings["general"]["vimMode"] is True
    assert settings["ui"]["showLineNumbers"] is False and settings["general"]["enableAutoUpdate"] is False
    assert settings["ui"]["hideBanner"] is False and settings["ide"]["enabled"] is False
    assert settings["tools"] == {"exclude": ["web_fetch"], "allowed": ["run_shell_command(git)"]}
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
    # The profile adds to Gemini CLI's prompt through the global context file, after the user's own.
    assert plan.files["gemini-home/.gemini/GEMINI.md"] == "Always answer in English.\n\nYou write code.\n"
    # The sign-in and customisations are linked, not copied; nothing of the user's was written.
    private = runtime / "gemini-home" / ".gemini"
    assert (private / "oauth_creds.json").resolve() == (user_home / ".gemini" / "oauth_creds.json").resolve()
    assert (private / "commands").is_symlink()
    assert json.loads((user_home / ".gemini" / "settings.json").read_text())["ui"]["showLineNumbers"] is True
    assert sorted(p.name for p in (user_home / ".gemini").iterdir()) == [
        "GEMINI.md", "commands", "oauth_creds.json", "settings.json"]


def test_a_bare_machine_gets_a_working_home(tmp_path, monkeypatch, user_home):
    monkeypatch.setenv("HOME", str(tmp_path / "empty-home"))
    monkeypatch.delenv("GEMINI_API_KEY")
    plan = launch(ctx(tmp_path))
    assert plan.argv[1:] == ("--approval-mode", "yolo")
    settings = settings_of(plan)
    assert settings["mcpServers"] == {} and "security" not in settings  # no key: Gemini CLI asks
    assert set(plan.files) == {"gemini-home/.gemini/settings.json"}  # no profile body, no context file


def test_the_users_gemini_cli_home_and_context_file_name_are_followed(user_home, tmp_path, monkeypatch):
    own = tmp_path / "elsewhere"
    (own / ".gemini").mkdir(parents=True)
    (own / ".gemini" / "settings.json").write_text(json.dumps({
        "context": {"fileName": ["AGENTS.md", "GEMINI.md"]},
        "security": {"auth": {"selectedType": "oauth-personal"}}}))
    (own / ".gemini" / "AGENTS.md").write_text("Be terse.")
    monkeypatch.setenv("GEMINI_CLI_HOME", str(own))
    plan = launch(ctx(tmp_path, AgentProfile(name="dev", system_prompt="Review code.")))
    assert plan.files["gemini-home/.gemini/AGENTS.md"] == "Be terse.\n\nReview code.\n"
    assert settings_of(plan)["security"]["auth"]["selectedType"] == "oauth-personal"  # the user's choice wins
    assert plan.env["GEMINI_CLI_HOME"] != str(own)


def test_approval_modes(tmp_path, user_home):
    def mode(permission=None, yolo=False):
        profile = AgentProfile(name="dev", permission_mode=permission)
        return approval_mode(ctx(tmp_path, profile, yolo=yolo))

    assert mode() == "yolo"
    assert mode("default") == "default" and mode("plan") == "plan" and mode("auto_edit") == "auto_edit"
    assert mode("acceptEdits") == "auto_edit" and mode("bypassPermissions") == "yolo"
    assert mode("default", yolo=True) == "yolo"
    assert mode("autopilot") == "autopilot"  # Gemini CLI refuses it at start-up, naming its modes
    with pytest.raises(ValueError, match="not an approval mode name"):
        mode("--yolo")
    assert launch(ctx(tmp_path, AgentProfile(name="dev", permission_mode="plan"))).argv[1:3] == (
        "--approval-mode", "plan")


def test_allowed_tools_become_exclusions(tmp_path, user_home):
    servers = {"cao": {"command": "cao-mcp-server"}, "github": {"command": "gh-mcp"}}
    plan = launch(ctx(tmp_path, allowed_tools=("fs_read", "@cao", "run_shell_command(git status)"),
                      mcp_servers=servers))
    settings = settings_of(plan)
    assert settings["mcp"]["excluded"] == ["github"]
    excluded = settings["tools"]["exclude"]
    assert "read_file" not in excluded and "run_shell_command" not in excluded
    assert {"write_file", "replace", "glob", "list_directory", "web_fetch"} <= set(excluded)
    assert settings["tools"]["allowed"] == ["run_shell_command(git)", "run_shell_command(git status)"]


def test_tool_settings_vocabulary():
    assert tool_settings(None, ["a"]) == ([], [], [])
    assert tool_settings(["*", "fs_read"], ["a"]) == ([], [], [])
    assert tool_settings(["@builtin", "@a"], ["a", "b"]) == ([], ["b"], [])
    excluded, _, _ = tool_settings(["fs_*", "discovery"], [])
    assert sorted(excluded) == sorted(NATIVE_TOOLS["execute_bash"] + NATIVE_TOOLS["web_fetch"])
    excluded, _, _ = tool_settings([], [])
    assert sorted(excluded) == ALL_NATIVE
    for bad, message in (("@", "MCP server name"), ("--yolo", "command-line option"),
                         ("(no tool)", "neither a cao tool name")):
        with pytest.raises(ValueError, match=message):
            tool_settings([bad], [])


@given(st.lists(st.text(max_size=30), max_size=8), st.lists(st.from_regex(r"[a-z]{1,8}", fullmatch=True),
                                                            max_size=4, unique=True))
def test_tool_settings_never_raises_anything_but_value_error(allowed, servers):
    try:
        excluded, excluded_servers, rules = tool_settings(allowed, servers)
    except ValueError:
        return
    assert set(excluded) <= set(ALL_NATIVE)
    assert set(excluded_servers) <= set(servers)
    assert set(rules) <= {item.strip() for item in allowed}


def test_mcp_entries_are_translated():
    entries = gemini_mcp_servers({
        "web": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"A": "b"}},
        "events": {"type": "sse", "url": "http://127.0.0.1:9/sse", "timeout": 5000},
        "local": {"type": "stdio", "command": "srv", "args": ("x",), "env": {"N": 1}, "extra": "dropped"},
    })
    assert entries["web"] == {"url": "http://127.0.0.1:9/mcp", "headers": {"A": "b"}, "type": "http",
                              "timeout": MCP_TIMEOUT_MS}
    assert entries["events"] == {"url": "http://127.0.0.1:9/sse", "type": "sse", "timeout": 5000}
    assert entries["local"] == {"command": "srv", "args": ["x"], "env": {"N": "1"}, "timeout": MCP_TIMEOUT_MS}
    for servers, message in (({"bad name": {"command": "x"}}, "1-64 letters"),
                             ({"x": {"args": []}}, "needs a command"),
                             ({"x": {"type": "grpc", "url": "http://h"}}, "not stdio, http or sse"),
                             ({"x": "cmd"}, "must be a mapping"),
                             ({"x": {"command": "c", "env": ["A=1"]}}, "env must be a mapping")):
        with pytest.raises(ValueError, match=message):
            gemini_mcp_servers(servers)


def test_binary_resolution(tmp_path, user_home, monkeypatch):
    monkeypatch.setenv("CAO_GEMINI_CLI_BIN", str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="CAO_GEMINI_CLI_BIN=.* is not an executable file"):
        launch(ctx(tmp_path))
    monkeypatch.delenv("CAO_GEMINI_CLI_BIN")
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    with pytest.raises(ValueError, match="npm install -g @google/gemini-cli"):
        launch(ctx(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path / "bin"))
    assert launch(ctx(tmp_path)).argv[0] == str(tmp_path / "bin" / "gemini")


async def test_the_kernel_reports_a_bad_profile_before_creating_anything(tmux_socket, cao_home, tmp_path,
                                                                         user_home):
    from cao_kernel.errors import InvalidInput
    from cao_kernel.kernel import Kernel
    from cao_kernel.plugins import LoadPolicy

    kernel = Kernel(policy=LoadPolicy(only=("tmux", "gemini_cli")), home=cao_home,
                    settings={"CAO_TMUX_SOCKET": tmux_socket})
    async with kernel:
        kernel.add_profile(AgentProfile(name="broken", provider="gemini_cli", allowed_tools=("--yolo",)))
        with pytest.raises(InvalidInput, match="'--yolo' looks like a command-line option"):
            await kernel.create_session(CreateTerminalRequest(
                agent_profile="broken", working_directory=str(tmp_path)))
        assert not await kernel.list_sessions()
        assert not (cao_home / "runtime" / "terminals").exists() or not any(
            (cao_home / "runtime" / "terminals").iterdir())


def test_model_endpoint_follows_the_sign_in(tmp_path):
    home = tmp_path / "h"
    (home / ".gemini").mkdir(parents=True)
    env = {"HOME": str(home)}
    assert model_endpoint(env) is None  # nothing chosen, no key: Gemini CLI would ask
    assert model_endpoint({**env, "GEMINI_API_KEY": "k"}) == "https://generativelanguage.googleapis.com"
    local = {**env, "GEMINI_API_KEY": "k", "GOOGLE_GEMINI_BASE_URL": "http://127.0.0.1:9/"}
    assert model_endpoint(local) == "http://127.0.0.1:9"
    settings = home / ".gemini" / "settings.json"

    def sign_in(kind: str) -> None:
        settings.write_text(json.dumps({"security": {"auth": {"selectedType": kind}}}))

    sign_in("vertex-ai")
    assert model_endpoint(env) == "https://aiplatform.googleapis.com"
    europe = {**env, "GOOGLE_CLOUD_LOCATION": "eu"}
    assert model_endpoint(europe) == "https://aiplatform.eu.rep.googleapis.com"
    regional = {**env, "GOOGLE_CLOUD_LOCATION": "europe-west4", "GOOGLE_CLOUD_PROJECT": "p"}
    assert model_endpoint(regional) == "https://europe-west4-aiplatform.googleapis.com"
    proxied = {**env, "GOOGLE_VERTEX_BASE_URL": "https://proxy.example"}
    assert model_endpoint(proxied) == "https://proxy.example"
    sign_in("oauth-personal")
    assert model_endpoint(env) == "https://cloudcode-pa.googleapis.com"
    settings.write_text("{not json")
    assert model_endpoint(env) is None


def test_provider_record():
    spec = gemini_cli_provider()
    assert spec.name == "gemini_cli" and spec.binary == "gemini" and spec.binary_env == "CAO_GEMINI_CLI_BIN"
    assert spec.exit_command == "/quit" and "@google/gemini-cli" in spec.install_hint
    assert spec.capabilities.enter_count == 1 and spec.capabilities.submit_delay >= 0.3
    assert spec.model_endpoint is model_endpoint


@pytest.mark.parametrize("value", ["true", "TRUE", " true "])
def test_a_ci_environment_does_not_make_the_terminal_headless(tmp_path, user_home, monkeypatch, value):
    monkeypatch.setenv("CI", value)
    monkeypatch.setenv("GITHUB_ACTIONS", value)
    plan = launch(ctx(tmp_path))
    assert plan.env["CI"] == "false" and plan.env["GITHUB_ACTIONS"] == "false"


def test_other_ci_values_are_left_alone(tmp_path, user_home, monkeypatch):
    monkeypatch.setenv("CI", "1")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    plan = launch(ctx(tmp_path))
    assert "CI" not in plan.env and "GITHUB_ACTIONS" not in plan.env
