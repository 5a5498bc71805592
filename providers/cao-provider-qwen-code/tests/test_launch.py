"""The launch plan built from agent profiles: program, flags, the private QWEN_HOME, and refusals."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from cao_hookspecs import AgentProfile, LaunchContext, Terminal
from cao_provider_qwen_code.launch import BINARY, BINARY_ENV, launch, model_endpoint

TERMINAL = Terminal(id="0a1b2c3d", name="coder-1a2b", session_name="cao-test",
                    provider="qwen_code", agent_profile="coder")
SETTINGS = "qwen-home/settings.json"


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A HOME and a ``qwen`` program on PATH (the plan only names it)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    program = folder / BINARY
    program.write_text("#!/bin/sh\n", encoding="utf-8")
    program.chmod(0o755)
    monkeypatch.delenv(BINARY_ENV, raising=False)
    monkeypatch.delenv("QWEN_HOME", raising=False)
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def context(tmp_path: Path, **fields) -> LaunchContext:
    fields.setdefault("profile", AgentProfile(name="coder"))
    return LaunchContext(terminal=TERMINAL, working_directory=str(tmp_path), runtime_dir=str(tmp_path / "rt"),
                         **fields)


def test_a_bare_profile_runs_in_yolo_mode_with_a_private_home_that_never_updates(tmp_path, home):
    plan = launch(context(tmp_path))
    assert plan.argv == (str(tmp_path / "bin" / BINARY), "--approval-mode", "yolo")
    assert dict(plan.env) == {"QWEN_HOME": str(tmp_path / "rt" / "qwen-home")}
    settings = json.loads(plan.files[SETTINGS])
    assert settings["general"]["enableAutoUpdate"] is False
    assert settings["privacy"]["usageStatisticsEnabled"] is False
    assert settings["telemetry"]["enabled"] is False
    assert settings["ui"]["enableFollowupSuggestions"] is False
    assert settings["memory"]["enableManagedAutoMemory"] is False
    assert "hooks" not in settings  # the kernel offered no signal command


def test_model_system_prompt_and_mcp_servers(tmp_path, home):
    env = {"CAO_TERMINAL_ID": TERMINAL.id, "CAO_SERVER_URL": "http://127.0.0.1:9"}
    servers = {"cao-mcp-server": {"command": "cao-mcp-server", "args": [], "env": env},
               "docs": {"command": "docs-mcp"}}
    profile = AgentProfile(name="coder", system_prompt="  You review code.\n")
    plan = launch(context(tmp_path, profile=profile, model="small-1", mcp_servers=servers,
                          cao_servers=("cao-mcp-server",)))
    assert plan.argv[3:] == ("--model", "small-1", "--append-system-prompt", "You review code.",
                             "--mcp-config", str(tmp_path / "rt" / "mcp.json"))
    written = json.loads(plan.files["mcp.json"])["mcpServers"]
    assert written["cao-mcp-server"] == {**servers["cao-mcp-server"], "type": "stdio",
                                         "alwaysLoadTools": True, "trust": True}
    assert written["docs"] == {"command": "docs-mcp", "type": "stdio", "alwaysLoadTools": True}


def test_approval_modes(tmp_path, home):
    careful = AgentProfile(name="coder", permission_mode="default")
    assert launch(context(tmp_path, profile=careful)).argv[1:3] == ("--approval-mode", "default")
    assert launch(context(tmp_path, profile=careful, yolo=True)).argv[1:3] == ("--approval-mode", "yolo")
    with pytest.raises(ValueError, match="permissionMode '--yolo' is not an approval mode name"):
        launch(context(tmp_path, profile=AgentProfile(name="coder", permission_mode="--yolo")))
    with pytest.raises(ValueError, match="model '--bad' is not a model name"):
        launch(context(tmp_path, model="--bad"))


def test_allowed_tools_exclude_the_other_categories_and_servers(tmp_path, home):
    servers = {"cao-mcp-server": {"command": "cao-mcp-server"}, "docs": {"command": "docs-mcp"}}
    plan = launch(context(tmp_path, allowed_tools=["fs_read", "execute_bash", "@cao-mcp-server"],
                          mcp_servers=servers))
    argv = list(plan.argv)
    excluded = argv[argv.index("--exclude-tools") + 1:argv.index("--allowed-tools")]
    assert set(excluded) == {"glob", "list_directory", "write_file", "edit", "notebook_edit", "web_fetch",
                             "web_search"}
    assert argv[argv.index("--allowed-tools") + 1:argv.index("--mcp-config")] == [
        "run_shell_command", "read_file", "grep_search"]
    assert set(json.loads(plan.files["mcp.json"])["mcpServers"]) == {"cao-mcp-server"}
    assert "--exclude-tools" not in launch(context(tmp_path, allowed_tools=["*"])).argv
    with pytest.raises(ValueError, match="allowed tool 'Bash\\(git \\*\\)' is not one Qwen Code"):
        launch(context(tmp_path, allowed_tools=["Bash(git *)"]))


def test_the_users_settings_are_kept_under_cao_s_and_never_written(tmp_path, home):
    user = home / ".qwen"
    user.mkdir(parents=True)
    own_hook = {"hooks": [{"type": "command", "command": "notify-me"}]}
    original = {"security": {"auth": {"selectedType": "anthropic"}}, "general": {"enableAutoUpdate": True},
                "mcpServers": {"mine": {"command": "x"}}, "hooks": {"Stop": [own_hook]}}
    (user / "settings.json").write_text(json.dumps(original), encoding="utf-8")
    (user / "oauth_creds.json").write_text("{}", encoding="utf-8")
    command = ["cao-signal", "--socket", "/run/s", "0a1b2c3d"]
    plan = launch(context(tmp_path, env={"CAO_SIGNAL_COMMAND": json.dumps(command)}))
    settings = json.loads(plan.files[SETTINGS])
    assert settings["security"]["auth"] == {"selectedType": "anthropic"}
    assert settings["general"]["enableAutoUpdate"] is False
    assert "mcpServers" not in settings
    stop = settings["hooks"]["Stop"]
    assert stop[0] == own_hook
    assert stop[1]["hooks"][0]["command"] == shlex.join([*command, "--stdin", "Stop"])
    assert set(settings["hooks"]) == {"UserPromptSubmit", "Stop", "StopFailure", "Notification"}
    assert settings["hooks"]["Notification"][0]["matcher"] == "permission_prompt"
    # The sign-in is linked (a token refresh lands in the user's own file); their settings stay unchanged.
    assert (tmp_path / "rt" / "qwen-home" / "oauth_creds.json").resolve() == (user / "oauth_creds.json")
    assert json.loads((user / "settings.json").read_text(encoding="utf-8")) == original


def test_the_binary_variable_names_another_program(tmp_path, home, monkeypatch):
    monkeypatch.setenv(BINARY_ENV, str(tmp_path / "bin" / BINARY))
    monkeypatch.setenv("PATH", "")
    assert launch(context(tmp_path)).argv[0] == str(tmp_path / "bin" / BINARY)
    monkeypatch.delenv(BINARY_ENV)
    with pytest.raises(ValueError, match="npm install -g @qwen-code/qwen-code"):
        launch(context(tmp_path))


def test_model_endpoint_follows_the_sign_in_type(tmp_path, home):
    assert model_endpoint({"HOME": str(home)}) is None
    local = "http://127.0.0.1:9/v1"
    assert model_endpoint({"HOME": str(home), "OPENAI_BASE_URL": local}) == local
    (home / ".qwen").mkdir(parents=True)
    (home / ".qwen" / "settings.json").write_text('{"security": {"auth": {"selectedType": "anthropic"}}}')
    assert model_endpoint({"HOME": str(home)}) == "https://api.anthropic.com"
    assert model_endpoint({"HOME": str(home), "ANTHROPIC_BASE_URL": "http://x"}) == "http://x"
