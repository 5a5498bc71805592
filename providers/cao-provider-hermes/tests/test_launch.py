"""The launch plan built from agent profiles: program, flags, the private home's files, and refusals."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
import yaml

from cao_hookspecs import AgentProfile, LaunchContext, Terminal
from cao_provider_hermes.launch import BINARY, BINARY_ENV, INSTALL_HINT, launch, model_endpoint, toolsets

TERMINAL = Terminal(id="0a1b2c3d", name="coder-1a2b", session_name="cao-test", provider="hermes",
                    agent_profile="coder")
CONFIG = "hermes-home/config.yaml"


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A user whose ``hermes`` is a script on PATH (in a venv holding hermes-agent 0.19.0's metadata)
    and whose ``~/.hermes`` holds a model config, a key file and a persona."""
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "lib/python3.11/site-packages/hermes_agent-0.19.0.dist-info").mkdir(parents=True)
    program = venv / "bin" / BINARY
    program.write_text("#!/bin/sh\n", encoding="utf-8")
    program.chmod(0o755)
    user = tmp_path / "home"
    (user / ".hermes").mkdir(parents=True)
    (user / ".hermes" / "config.yaml").write_text(
        "model:\n  provider: custom\n  default: m1\n  base_url: http://127.0.0.1:9/v1\n"
        "mcp_servers:\n  mine: {command: my-server}\nhooks:\n  post_llm_call: [{command: mine}]\n"
        "display:\n  compact: true\n", encoding="utf-8")
    (user / ".hermes" / ".env").write_text("OPENROUTER_API_KEY=sk-user\n", encoding="utf-8")
    (user / ".hermes" / "SOUL.md").write_text("The user's persona.\n", encoding="utf-8")
    for name in ("HERMES_HOME", BINARY_ENV, "CAO_SIGNAL_COMMAND"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(user))
    monkeypatch.setenv("PATH", str(venv / "bin"))
    return user


def context(tmp_path: Path, **fields) -> LaunchContext:
    fields.setdefault("profile", AgentProfile(name="coder", provider="hermes"))
    return LaunchContext(terminal=TERMINAL, working_directory=str(tmp_path), runtime_dir=str(tmp_path / "rt"),
                         **fields)


def test_a_bare_profile_runs_the_classic_repl_in_yolo_mode_with_a_private_home(tmp_path, home):
    plan = launch(context(tmp_path))
    assert plan.argv[1:] == ("chat", "--cli", "--source", "cao", "--yolo")
    assert Path(plan.argv[0]).name == BINARY
    private = tmp_path / "rt" / "hermes-home"
    assert dict(plan.env) == {"HERMES_HOME": str(private)}
    config = yaml.safe_load(plan.files[CONFIG])
    # The user's settings are kept, cao's laid over them; the user's MCP servers and hooks left out.
    assert config["model"]["base_url"] == "http://127.0.0.1:9/v1"
    assert config["display"] == {"compact": True, "interface": "cli", "busy_input_mode": "queue"}
    assert config["security"] == {"tirith_enabled": False}
    assert config["hooks_auto_accept"] is True
    assert config["mcp_servers"] == {} and config["hooks"] == {}
    # No update check at start: its cache is seeded for the installed version.
    seeded = json.loads(plan.files["hermes-home/.update_check"])
    assert (seeded["ver"], seeded["behind"]) == ("0.19.0", 0)
    # The user's keys and persona are linked in, never copied; the user's home is never written.
    assert os.readlink(private / ".env") == str(home / ".hermes" / ".env")
    assert os.readlink(private / "SOUL.md") == str(home / ".hermes" / "SOUL.md")
    assert sorted(p.name for p in (home / ".hermes").iterdir()) == [".env", "SOUL.md", "config.yaml"]


def test_model_system_prompt_and_mcp_servers(tmp_path, home):
    env = {"CAO_TERMINAL_ID": TERMINAL.id, "CAO_SERVER_URL": "http://127.0.0.1:9"}
    servers = {"cao-mcp-server": {"type": "stdio", "command": "cao-mcp-server", "args": [], "env": env},
               "docs": {"url": "http://127.0.0.1:8/mcp", "timeout": 30}}
    profile = AgentProfile(name="coder", provider="hermes", system_prompt="  You review code.\n",
                           model="m2")
    plan = launch(context(tmp_path, profile=profile, mcp_servers=servers, cao_servers=("cao-mcp-server",)))
    assert plan.argv[-2:] == ("--model", "m2")
    assert plan.files["hermes-home/SOUL.md"] == "You review code.\n"
    assert not (tmp_path / "rt" / "hermes-home" / "SOUL.md").is_symlink()
    config = yaml.safe_load(plan.files[CONFIG])
    assert config["mcp_servers"] == {
        "cao-mcp-server": {"command": "cao-mcp-server", "args": [], "env": env, "timeout": 600},
        "docs": {"url": "http://127.0.0.1:8/mcp", "timeout": 30}}
    # The request's model wins over the profile's.
    assert launch(context(tmp_path, profile=profile, model="m3")).argv[-2:] == ("--model", "m3")


def test_hooks_relay_the_turns_to_the_kernels_signal_command(tmp_path, home):
    command = ["/usr/bin/python3", "-I", "-S", "/x/signal send.py", "--socket", "/s",
               "--terminal", TERMINAL.id]
    plan = launch(context(tmp_path, env={"CAO_SIGNAL_COMMAND": json.dumps(command)}))
    hooks = yaml.safe_load(plan.files[CONFIG])["hooks"]
    assert sorted(hooks) == ["post_llm_call", "pre_llm_call"]
    [hook] = hooks["post_llm_call"]
    assert hook["timeout"] == 5
    import shlex

    argv = shlex.split(hook["command"])
    assert argv[1:3] == ["-I", "-S"] and argv[3].endswith("relay.py")
    assert argv[4:] == ["post_llm_call", "--", *command]


@pytest.mark.parametrize(("allowed", "expected"), [
    (None, (None, ["cao", "docs"])),
    (("*",), (None, ["cao", "docs"])),
    (("@builtin",), (None, [])),
    (("@builtin", "@cao"), (None, ["cao"])),
    (("execute_bash", "fs_*", "@cao"), (["terminal", "file", "mcp-cao"], ["cao"])),
    (("web_fetch", "todo"), (["web", "todo"], [])),
])
def test_allowed_tools_become_toolsets(allowed, expected):
    assert toolsets(allowed, ["cao", "docs"]) == expected


def test_what_hermes_cannot_honour_is_refused_by_name(tmp_path, home):
    with pytest.raises(ValueError, match=r"file toolset reads, lists and writes together"):
        toolsets(("fs_read",), [])
    with pytest.raises(ValueError, match=r"allowed tool 'rocket' means nothing to Hermes Agent"):
        toolsets(("rocket",), [])
    careful = AgentProfile(name="coder", provider="hermes", permission_mode="default")
    with pytest.raises(ValueError, match=r"permissionMode 'default' is not supported by Hermes Agent"):
        launch(context(tmp_path, profile=careful))
    (home / ".hermes" / "config.yaml").write_text("model: [unclosed\n", encoding="utf-8")
    with pytest.raises(ValueError, match=r"cannot read the Hermes config .*config.yaml"):
        launch(context(tmp_path))


def test_the_binary_variable_names_another_program(tmp_path, home, monkeypatch):
    program = Path(os.environ["PATH"]) / BINARY
    monkeypatch.setenv(BINARY_ENV, str(program))
    monkeypatch.setenv("PATH", "")
    assert launch(context(tmp_path)).argv[0] == str(program)
    monkeypatch.setenv(BINARY_ENV, str(tmp_path / "missing"))
    with pytest.raises(ValueError, match=f"{BINARY_ENV}=.*is not an executable file"):
        launch(context(tmp_path))


def test_a_missing_program_is_refused_with_the_install_hint(tmp_path, home, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ValueError, match=re.escape(f"('{BINARY}') is not on PATH; install it with: "
                                                   f"{INSTALL_HINT}")):
        launch(context(tmp_path))


def test_model_endpoint_reads_the_users_config(home, tmp_path):
    assert model_endpoint({"HOME": str(home)}) == "http://127.0.0.1:9/v1"
    assert model_endpoint({"HOME": str(tmp_path / "nobody")}) is None
    (home / ".hermes" / "config.yaml").write_text("model: [unclosed\n", encoding="utf-8")
    assert model_endpoint({"HOME": str(home)}) is None
