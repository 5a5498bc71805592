"""The launch plan built from a profile: command line, files, environment, the user's files untouched."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cao_hookspecs import AgentProfile
from cao_provider_claude_code.launch import NATIVE_TOOLS, launch, tool_args
from cao_provider_claude_code.provider import claude_code_provider
from cao_testkit.launching import launch_context, noop_program, user_machine

KEY = "sk-ant-api03-" + "k" * 60 + "LAST20CHARSOFTHEKEY0"


@pytest.fixture
def fake_claude(tmp_path, monkeypatch):
    """A user machine: HOME with a user config, and an executable named as the CLI's override."""
    home = tmp_path / "home"
    (home / ".claude" / "agents").mkdir(parents=True)
    (home / ".claude" / ".credentials.json").write_text('{"token": "users-own"}')
    (home / ".claude" / "settings.json").write_text('{"model": "sonnet", "env": {"A": "1"}}')
    (home / ".claude.json").write_text(json.dumps({
        "userID": "u-1", "oauthAccount": {"emailAddress": "dev@example.com"}, "theme": "light",
        "projects": {"/elsewhere": {"hasTrustDialogAccepted": True}}, "numStartups": 40,
        "customApiKeyResponses": {"approved": ["previously-approved0"], "rejected": ["rejected-one"]},
    }))
    program = noop_program(tmp_path / "bin" / "claude")
    user_machine(monkeypatch, home, binary_env="CAO_CLAUDE_CODE_BIN", program=program,
                 leaky=("ANTHROPIC_", "CLAUDE", "IS_SANDBOX"))
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("IS_SANDBOX", "1")
    return home


def ctx(tmp_path, profile=None, **kw):
    return launch_context(tmp_path, "claude_code", profile, **kw)


def test_full_profile_becomes_the_upstream_command_line(fake_claude, tmp_path):
    profile = AgentProfile(
        name="dev", system_prompt="  You write code.\n", permission_mode=None, native_agent="reviewer",
        claude_config={"effort": "high", "fallback_model": "sonnet"},
    )
    servers = {"cao-mcp-server": {"command": "/venv/bin/cao-mcp-server", "args": [],
                                  "env": {"CAO_TERMINAL_ID": "0123abcd", "CAO_API_PORT": "9889"}}}
    c = ctx(tmp_path, profile, model="opus", mcp_servers=servers)
    plan = launch(c)
    runtime = Path(c.runtime_dir)
    assert plan.argv == (
        os.environ["CAO_CLAUDE_CODE_BIN"], "--dangerously-skip-permissions", "--model", "opus",
        "--effort", "high", "--fallback-model", "sonnet", "--agent", "reviewer",
        "--append-system-prompt-file", str(runtime / "system-prompt.md"),
        "--mcp-config", str(runtime / "mcp.json"), "--strict-mcp-config",
    )
    assert plan.files["system-prompt.md"] == "You write code.\n"
    mcp = json.loads(plan.files["mcp.json"])
    assert mcp == {"mcpServers": {"cao-mcp-server": {
        "type": "stdio", "command": "/venv/bin/cao-mcp-server", "args": [],
        "env": {"CAO_TERMINAL_ID": "0123abcd", "CAO_API_PORT": "9889"}}}}
    assert plan.env["CLAUDE_CONFIG_DIR"] == str(runtime / "claude-config")
    assert plan.env["DISABLE_AUTOUPDATER"] == "1"


def test_private_config_is_seeded_and_the_users_files_are_untouched(fake_claude, tmp_path):
    before = {p: p.read_bytes() for p in fake_claude.rglob("*") if p.is_file()}
    c = ctx(tmp_path)
    plan = launch(c)
    config = json.loads(plan.files["claude-config/.claude.json"])
    assert config["hasCompletedOnboarding"] is True and config["bypassPermissionsModeAccepted"] is True
    assert config["projects"] == {c.working_directory: {
        "hasTrustDialogAccepted": True, "hasCompletedProjectOnboarding": True,
        "projectOnboardingSeenCount": 1}}
    approved = {"approved": ["previously-approved0", KEY[-20:]], "rejected": []}
    assert config["customApiKeyResponses"] == approved
    # Who the user is and their theme are kept; their project history is not copied.
    assert config["userID"] == "u-1" and config["oauthAccount"]["emailAddress"] == "dev@example.com"
    assert config["theme"] == "light" and "numStartups" not in config
    assert json.loads(plan.files["claude-config/settings.json"]) == {"model": "sonnet", "env": {"A": "1"}}
    private = Path(c.runtime_dir) / "claude-config"
    # Credentials are linked (a token refresh lands in the user's own file), folders too.
    assert (private / ".credentials.json").is_symlink()
    users = fake_claude / ".claude" / ".credentials.json"
    assert (private / ".credentials.json").resolve() == users.resolve()
    assert (private / "agents").is_symlink()
    assert not (private / "commands").exists()  # the user has none
    after = {p: p.read_bytes() for p in fake_claude.rglob("*") if p.is_file()}
    assert after == before


def test_no_user_config_at_all(fake_claude, tmp_path, monkeypatch):
    empty = tmp_path / "empty-home"
    empty.mkdir()
    monkeypatch.setenv("HOME", str(empty))
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    plan = launch(ctx(tmp_path))
    config = json.loads(plan.files["claude-config/.claude.json"])
    assert config["customApiKeyResponses"] == {"approved": [], "rejected": []}
    assert config["theme"] == "dark"
    assert "claude-config/settings.json" not in plan.files
    assert list(empty.iterdir()) == []


def test_users_custom_config_dir_is_the_source(fake_claude, tmp_path, monkeypatch):
    custom = tmp_path / "custom"
    custom.mkdir()
    (custom / ".claude.json").write_text('{"userID": "from-custom"}')
    (custom / ".credentials.json").write_text("{}")
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(custom))
    c = ctx(tmp_path)
    plan = launch(c)
    assert json.loads(plan.files["claude-config/.claude.json"])["userID"] == "from-custom"
    linked = Path(c.runtime_dir) / "claude-config" / ".credentials.json"
    assert linked.resolve() == custom / ".credentials.json"
    assert plan.env["CLAUDE_CONFIG_DIR"] != str(custom)


def test_permission_modes(fake_claude, tmp_path, monkeypatch):
    assert "--dangerously-skip-permissions" in launch(ctx(tmp_path, yolo=True)).argv
    planned = launch(ctx(tmp_path, AgentProfile(name="p", permission_mode="plan"), yolo=False)).argv
    assert planned[1:3] == ("--permission-mode", "plan") and "--dangerously-skip-permissions" not in planned
    # yolo wins over the profile's mode
    both = ctx(tmp_path, AgentProfile(name="p", permission_mode="plan"), yolo=True)
    assert "--dangerously-skip-permissions" in launch(both).argv
    with pytest.raises(ValueError, match="permissionMode 'plan; rm -rf /' is not a permission mode name"):
        launch(ctx(tmp_path, AgentProfile(name="p", permission_mode="plan; rm -rf /")))


def test_default_mode_as_root_outside_a_sandbox_keeps_the_clis_default(fake_claude, tmp_path, monkeypatch):
    monkeypatch.delenv("IS_SANDBOX")
    argv = launch(ctx(tmp_path)).argv
    if os.geteuid() == 0:
        assert "--dangerously-skip-permissions" not in argv  # Claude Code would refuse to start
        # Asked for explicitly: passed on, and Claude Code's refusal is reported.
        assert "--dangerously-skip-permissions" in launch(ctx(tmp_path, yolo=True)).argv
    else:
        assert "--dangerously-skip-permissions" in argv


def test_bad_profile_values_are_refused_with_the_key_named(fake_claude, tmp_path):
    with pytest.raises(ValueError, match="claudeConfig key 'colour' is not supported"):
        launch(ctx(tmp_path, AgentProfile(name="p", claude_config={"colour": "red"})))
    with pytest.raises(ValueError, match="claudeConfig effort must be a non-empty word"):
        sneaky = {"effort": "--dangerously-skip-permissions"}
        launch(ctx(tmp_path, AgentProfile(name="p", claude_config=sneaky)))
    with pytest.raises(ValueError, match="native_agent"):
        launch(ctx(tmp_path, AgentProfile(name="p", native_agent="../x")))
    with pytest.raises(ValueError, match="MCP server name"):
        launch(ctx(tmp_path, mcp_servers={"bad name": {"command": "x"}}))
    # Refused before anything was created.
    assert not (tmp_path / "runtime").exists()


def test_missing_program_names_the_install_command(fake_claude, tmp_path, monkeypatch):
    monkeypatch.delenv("CAO_CLAUDE_CODE_BIN")
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="npm install -g @anthropic-ai/claude-code"):
        launch(ctx(tmp_path))
    monkeypatch.setenv("CAO_CLAUDE_CODE_BIN", str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="CAO_CLAUDE_CODE_BIN=.* is not an executable file"):
        launch(ctx(tmp_path))


def test_program_found_on_path(fake_claude, tmp_path, monkeypatch):
    program = Path(os.environ["CAO_CLAUDE_CODE_BIN"])
    monkeypatch.delenv("CAO_CLAUDE_CODE_BIN")
    monkeypatch.setenv("PATH", str(program.parent))
    assert launch(ctx(tmp_path)).argv[0] == str(program)


def test_allowed_tools_in_caos_vocabulary():
    assert tool_args(None, ["cao-mcp-server"]) == []
    assert tool_args(["*"], ["cao-mcp-server"]) == []
    supervisor = tool_args(["@cao-mcp-server", "fs_read", "fs_list"], ["cao-mcp-server", "other"])
    allow = supervisor[supervisor.index("--allowedTools") + 1:supervisor.index("--disallowedTools")]
    deny = supervisor[supervisor.index("--disallowedTools") + 1:]
    assert allow == ["Glob", "LS", "Read", "Grep", "mcp__cao-mcp-server"]
    assert set(deny) == {*NATIVE_TOOLS["execute_bash"], *NATIVE_TOOLS["fs_write"], *NATIVE_TOOLS["web_fetch"],
                         "mcp__other"}
    developer = tool_args(["@builtin", "fs_*", "execute_bash", "web_fetch", "@cao-mcp-server"],
                          ["cao-mcp-server"])
    assert "--disallowedTools" not in developer
    assert tool_args(["Bash(git *)"], [])[:2] == ["--allowedTools", "Bash(git *)"]
    with pytest.raises(ValueError, match="looks like a command-line option"):
        tool_args(["--dangerously-skip-permissions"], [])
    with pytest.raises(ValueError, match="MCP server name"):
        tool_args(["@"], [])


@given(st.lists(st.sampled_from([*NATIVE_TOOLS, "fs_*", "@builtin", "@cao-mcp-server", "@x", "discovery",
                                 "Bash(ls)", "*", ""]), max_size=8),
       st.lists(st.sampled_from(["cao-mcp-server", "x", "y"]), max_size=3, unique=True))
def test_tool_args_never_allow_and_deny_the_same_tool(allowed, servers):
    args = tool_args(allowed, servers)
    if "--allowedTools" in args and "--disallowedTools" in args:
        allow = set(args[args.index("--allowedTools") + 1:args.index("--disallowedTools")])
        deny = set(args[args.index("--disallowedTools") + 1:])
        assert not allow & deny
    values = [a for a in args if a not in ("--allowedTools", "--disallowedTools")]
    assert not any(v.startswith("-") for v in values)


def test_provider_record(fake_claude):
    provider = claude_code_provider()
    assert provider.name == "claude_code" and provider.binary == "claude"
    assert provider.exit_command == "/exit"
    assert provider.install_hint == "npm install -g @anthropic-ai/claude-code"
    assert provider.tested_versions and all(v.count(".") == 2 for v in provider.tested_versions)
    assert provider.capabilities.enter_count == 1 and provider.capabilities.accepts_input_while_busy
    assert {d.name for d in provider.startup_dialogs} >= {"trust folder", "API key confirmation",
                                                         "bypass permissions confirmation"}


def test_model_endpoint_is_the_api_the_cli_will_call():
    provider = claude_code_provider()
    assert provider.binary_env == "CAO_CLAUDE_CODE_BIN"
    endpoint = provider.model_endpoint
    assert endpoint({}) == "https://api.anthropic.com"
    assert endpoint({"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}) == "http://127.0.0.1:9"
    # Through a cloud provider the address depends on its region: unknown unless given.
    assert endpoint({"CLAUDE_CODE_USE_BEDROCK": "1", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}) is None
    assert endpoint({"CLAUDE_CODE_USE_BEDROCK": "1",
                     "ANTHROPIC_BEDROCK_BASE_URL": "https://bedrock.example"}) == "https://bedrock.example"
    assert endpoint({"CLAUDE_CODE_USE_VERTEX": "1"}) is None


def test_plugin_registers_through_its_entry_point(kernel):
    assert "claude_code" in kernel.providers


@pytest.fixture
def enabled_plugins():
    return ("claude_code",)


def test_runtime_files_the_kernel_writes_stay_private(fake_claude, tmp_path):
    """Files are handed to the kernel (which writes them 0600); links are made in the runtime folder only."""
    c = ctx(tmp_path)
    launch(c)
    private = Path(c.runtime_dir) / "claude-config"
    assert stat.S_IMODE(private.stat().st_mode) == 0o700
    assert all(p.is_symlink() for p in private.iterdir())


def test_caos_own_tools_are_allowed_under_a_permission_mode_that_asks(fake_claude, tmp_path):
    servers = {"cao-mcp-server": {"command": "/venv/bin/cao-mcp-server"}, "web": {"command": "web"}}
    asking = AgentProfile(name="dev", permission_mode="default")
    argv = launch(ctx(tmp_path, asking, mcp_servers=servers, cao_servers=("cao-mcp-server",))).argv
    # An approval prompt on send_message would stall a delegation; other servers still ask.
    assert argv[argv.index("--allowedTools") + 1:][:1] == ("mcp__cao-mcp-server",)
    assert "mcp__web" not in argv
    # A restricted tool list decides on its own (it may leave cao's server out on purpose).
    restricted = launch(ctx(tmp_path, asking, mcp_servers=servers, cao_servers=("cao-mcp-server",),
                            allowed_tools=("fs_read",))).argv
    allowed = restricted[restricted.index("--allowedTools"):restricted.index("--disallowedTools")]
    assert "mcp__cao-mcp-server" not in allowed and "mcp__cao-mcp-server" in restricted
