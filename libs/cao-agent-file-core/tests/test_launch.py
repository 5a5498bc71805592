"""The launch plan each provider builds from a profile: command line, the agent file in the user's
agent folder, the copy in the runtime folder, hostile names and values refused before anything is
written, and the wrapper that removes the agent file when the CLI exits."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_agent_file_core.agent_file import CAO_MCP_TIMEOUT_MS
from cao_agent_file_core.launch import CLEANUP_SCRIPT
from cao_hookspecs import AgentProfile, LaunchContext, Terminal

TERMINAL_ID = "0123abcd"
CAO_SERVER = {"command": "/venv/bin/cao-mcp-server", "args": [],
              "env": {"CAO_TERMINAL_ID": TERMINAL_ID, "CAO_API_HOST": "127.0.0.1", "CAO_API_PORT": "9889"}}


def ctx(case, tmp_path, profile=None, terminal_id=TERMINAL_ID, **kw):
    name = profile.name if profile else "developer"
    terminal = Terminal(id=terminal_id, name=f"{name}-1a2b", session_name="cao-x", provider=case.name,
                        agent_profile=name)
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return LaunchContext(terminal=terminal, profile=profile or AgentProfile(name=name),
                         working_directory=str(work), runtime_dir=str(tmp_path / "runtime"), **kw)


def launch(case, *args, **kw):
    return case.launch.launch(ctx(case, *args, **kw))


def test_full_profile_becomes_command_line_and_agent_file(case, home, tmp_path):
    profile = AgentProfile(
        name="dev", description="Writes code", system_prompt="\n  You write code.\n", prompt="Be brief.",
        tool_aliases={"@git/status": "git_status"}, tools_settings={"fs_write": {"allowedPaths": ["src/**"]}},
        resources=("file://README.md",), hooks={"agentSpawn": [{"command": "git status"}]},
        use_legacy_mcp_json=False,
    )
    other = {"command": "uvx", "args": ["other-server"], "env": {"CAO_TERMINAL_ID": TERMINAL_ID}}
    plan = launch(case, tmp_path, profile, model="claude-sonnet-4",
                  mcp_servers={"cao-mcp-server": CAO_SERVER, "other": other},
                  allowed_tools=("@cao-mcp-server", "fs_read", "fs_list", "discovery"))
    path = case.agents(home) / f"cao-dev-{TERMINAL_ID}.json"
    assert plan.argv == (
        "/bin/sh", "-c", CLEANUP_SCRIPT, str(path), os.environ[case.binary_env], "chat", "--trust-all-tools",
        "--model", "claude-sonnet-4", "--agent", f"cao-dev-{TERMINAL_ID}",
    )
    assert plan.env == {}
    written = path.read_text(encoding="utf-8")
    assert plan.files == {case.runtime_copy: written}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert json.loads(written) == {
        "name": f"cao-dev-{TERMINAL_ID}",
        "description": "Writes code",
        "prompt": "You write code.\n\nBe brief.",
        "mcpServers": {
            "cao-mcp-server": {**CAO_SERVER, "timeout": CAO_MCP_TIMEOUT_MS},
            "other": other,
        },
        "tools": ["@cao-mcp-server", "fs_read"],
        "allowedTools": ["@cao-mcp-server", "fs_read"],
        "toolAliases": {"@git/status": "git_status"},
        "toolsSettings": {"fs_write": {"allowedPaths": ["src/**"]}},
        "resources": ["file://README.md"],
        "hooks": {"agentSpawn": [{"command": "git status"}]},
        case.legacy_mcp_json_key: False,
    }
    # Only the agent file: the temporary file it was written through is gone.
    assert sorted(p.name for p in case.agents(home).iterdir()) == [path.name]


def test_minimal_profile(case, home, tmp_path):
    plan = launch(case, tmp_path)
    config = json.loads(plan.files[case.runtime_copy])
    assert config == {"name": f"cao-developer-{TERMINAL_ID}", "description": f"cao agent for terminal {TERMINAL_ID}",
                      "mcpServers": {}, "tools": ["*"], "allowedTools": ["*"]}
    assert "--model" not in plan.argv


def test_a_timeout_set_in_the_profile_is_kept(case, home, tmp_path):
    servers = {"cao": {**CAO_SERVER, "timeout": 5000}}
    config = json.loads(launch(case, tmp_path, mcp_servers=servers).files[case.runtime_copy])
    assert config["mcpServers"]["cao"]["timeout"] == 5000


@pytest.mark.parametrize("name", ["../evil", "a b", "x;rm", "", "a" * 65, "ok/../../x", "dev\n"])
def test_hostile_profile_names_are_refused_before_anything_is_written(case, home, tmp_path, name):
    with pytest.raises(ValueError, match=f"cannot name a {case.short} agent file"):
        launch(case, tmp_path, AgentProfile(name=name))
    assert not case.agents(home).exists()


@settings(max_examples=60, deadline=None)
@given(name=st.text(min_size=1, max_size=70))
def test_agent_file_always_lands_inside_the_agent_folder(case, tmp_path_factory, name):
    root = tmp_path_factory.mktemp("names")
    home = root / "home"
    home.mkdir()
    program = root / case.binary
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    env = {"HOME": str(home), case.binary_env: str(program)}
    try:
        plan = launch(case, root, AgentProfile(name=name), env=env)
    except ValueError:
        assert not case.agents(home).exists()
        return
    path = Path(plan.argv[3])
    assert path.parent == case.agents(home) and path.is_file()
    assert [p.name for p in home.rglob("*") if p.is_file()] == [path.name]


def test_bad_terminal_id_and_model_are_refused(case, home, tmp_path):
    with pytest.raises(ValueError, match="terminal id"):
        launch(case, tmp_path, terminal_id="../../x")
    with pytest.raises(ValueError, match="model '--trust-all-tools'"):
        launch(case, tmp_path, model="--trust-all-tools")
    with pytest.raises(ValueError, match="MCP server name"):
        launch(case, tmp_path, mcp_servers={"bad name": {"command": "x"}})
    with pytest.raises(ValueError, match=f"not a {case.short} tool name"):
        launch(case, tmp_path, allowed_tools=("fs read",))
    assert not case.agents(home).exists()


def test_missing_program_names_the_cli_and_how_to_install_it(case, home, tmp_path, monkeypatch):
    monkeypatch.delenv(case.binary_env)
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    with pytest.raises(ValueError) as refused:
        launch(case, tmp_path)
    message = str(refused.value)
    for words in case.missing_words:
        assert words in message
    assert case.binary_env in message
    monkeypatch.setenv(case.binary_env, str(tmp_path / "missing"))
    with pytest.raises(ValueError, match=f"{case.binary_env}=.* is not an executable file"):
        launch(case, tmp_path)
    assert not case.agents(home).exists()


def test_program_found_on_path(case, home):
    program = Path(os.environ[case.binary_env])
    assert case.launch.resolve_binary({"PATH": str(program.parent)}) == str(program)


def test_an_agent_file_is_replaced_whole(case, home, tmp_path):
    first = launch(case, tmp_path, model="m1")
    path = Path(first.argv[3])
    second = launch(case, tmp_path, AgentProfile(name="developer", description="again"))
    assert path.read_text(encoding="utf-8") == second.files[case.runtime_copy]
    assert [p.name for p in case.agents(home).iterdir()] == [path.name]


def test_a_failed_write_leaves_no_temporary_file(case, home, tmp_path):
    # A folder where the agent file should go: the rename fails, for real.
    blocked = case.agents(home) / f"cao-developer-{TERMINAL_ID}.json"
    blocked.mkdir(parents=True)
    with pytest.raises(OSError):
        launch(case, tmp_path)
    assert [p.name for p in case.agents(home).iterdir()] == [blocked.name]


def _run_wrapper(plan, tmp_path, **env):
    args_file = tmp_path / "args"
    proc = subprocess.Popen(list(plan.argv), env={**os.environ, "ARGS_FILE": str(args_file), **env},
                            start_new_session=True)
    return proc, args_file


def test_wrapper_passes_the_command_line_and_removes_the_agent_file(case, home, tmp_path):
    plan = launch(case, tmp_path, model="m")
    agent_file = Path(plan.argv[3])
    proc, args_file = _run_wrapper(plan, tmp_path, EXIT_WITH="3")
    assert proc.wait(10) == 3  # the CLI's own exit status
    assert not agent_file.exists()
    assert args_file.read_text().splitlines() == list(plan.argv[5:])


def test_wrapper_removes_the_agent_file_when_the_terminal_hangs_up(case, home, tmp_path):
    plan = launch(case, tmp_path)
    agent_file = Path(plan.argv[3])
    proc, args_file = _run_wrapper(plan, tmp_path, SLEEP_FOR="30")
    deadline = time.monotonic() + 10
    while not args_file.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert agent_file.exists()
    os.killpg(proc.pid, signal.SIGHUP)  # what closing a tmux window does
    assert proc.wait(10) == 129
    assert not agent_file.exists()
