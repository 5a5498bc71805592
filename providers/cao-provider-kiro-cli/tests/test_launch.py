"""The launch plan built from a profile: command line, the agent file in the user's agent folder, the
copy in the runtime folder, hostile names and values refused before anything is written, and the
wrapper that removes the agent file when the CLI exits."""

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

from cao_hookspecs import AgentProfile, LaunchContext, Terminal, TerminalStatus
from cao_provider_kiro_cli.agent_file import CAO_MCP_TIMEOUT_MS
from cao_provider_kiro_cli.launch import BINARY_ENV, CLEANUP_SCRIPT, LEGACY_UI_ENV, launch, resolve_binary
from cao_provider_kiro_cli.provider import TESTED_VERSIONS, kiro_cli_provider, parse_version
from cao_provider_kiro_cli.tools import agent_tools

TERMINAL_ID = "0123abcd"
# A program standing in for kiro-cli where only its exit matters (the wrapper's clean-up): it records the
# arguments it got, then exits with the status given in $EXIT_WITH, or sleeps when told to.
RECORDER = """#!/bin/sh
printf '%s\\n' "$@" > "$ARGS_FILE"
if [ -n "$SLEEP_FOR" ]; then exec sleep "$SLEEP_FOR"; fi
exit "${EXIT_WITH:-0}"
"""


@pytest.fixture
def home(tmp_path, monkeypatch):
    """A user machine: an empty HOME, and ``CAO_KIRO_CLI_BIN`` naming an executable file."""
    home = tmp_path / "home"
    home.mkdir()
    program = tmp_path / "bin" / "kiro-cli"
    program.parent.mkdir()
    program.write_text(RECORDER)
    program.chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv(BINARY_ENV, str(program))
    return home


def agent_dir(home: Path) -> Path:
    return home / ".kiro" / "agents"


def ctx(tmp_path, profile=None, terminal_id=TERMINAL_ID, **kw):
    name = profile.name if profile else "developer"
    terminal = Terminal(id=terminal_id, name=f"{name}-1a2b", session_name="cao-x", provider="kiro_cli",
                        agent_profile=name)
    work = tmp_path / "work"
    work.mkdir(exist_ok=True)
    return LaunchContext(terminal=terminal, profile=profile or AgentProfile(name=name),
                         working_directory=str(work), runtime_dir=str(tmp_path / "runtime"), **kw)


CAO_SERVER = {"command": "/venv/bin/cao-mcp-server", "args": [],
              "env": {"CAO_TERMINAL_ID": TERMINAL_ID, "CAO_API_HOST": "127.0.0.1", "CAO_API_PORT": "9889"}}


def test_full_profile_becomes_command_line_and_agent_file(home, tmp_path):
    profile = AgentProfile(
        name="dev", description="Writes code", system_prompt="\n  You write code.\n", prompt="Be brief.",
        tool_aliases={"@git/status": "git_status"}, tools_settings={"fs_write": {"allowedPaths": ["src/**"]}},
        resources=("file://README.md",), hooks={"agentSpawn": [{"command": "git status"}]},
        use_legacy_mcp_json=False,
    )
    other = {"command": "uvx", "args": ["other-server"], "env": {"CAO_TERMINAL_ID": TERMINAL_ID}}
    c = ctx(tmp_path, profile, model="claude-sonnet-4", mcp_servers={"cao-mcp-server": CAO_SERVER, "other": other},
            allowed_tools=("@cao-mcp-server", "fs_read", "fs_list", "discovery"))
    plan = launch(c)
    path = agent_dir(home) / f"cao-dev-{TERMINAL_ID}.json"
    assert plan.argv == (
        "/bin/sh", "-c", CLEANUP_SCRIPT, str(path), os.environ[BINARY_ENV], "chat", "--trust-all-tools",
        "--model", "claude-sonnet-4", "--agent", f"cao-dev-{TERMINAL_ID}",
    )
    assert plan.env == {}
    written = path.read_text(encoding="utf-8")
    assert plan.files == {"kiro-agent.json": written}
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
        "includeMcpJson": False,
    }
    # Only the agent file: the temporary file it was written through is gone.
    assert sorted(p.name for p in agent_dir(home).iterdir()) == [path.name]


def test_minimal_profile(home, tmp_path):
    plan = launch(ctx(tmp_path))
    config = json.loads(plan.files["kiro-agent.json"])
    assert config == {"name": f"cao-developer-{TERMINAL_ID}", "description": f"cao agent for terminal {TERMINAL_ID}",
                      "mcpServers": {}, "tools": ["*"], "allowedTools": ["*"]}
    assert "--model" not in plan.argv


def test_a_timeout_set_in_the_profile_is_kept(home, tmp_path):
    servers = {"cao": {**CAO_SERVER, "timeout": 5000}}
    config = json.loads(launch(ctx(tmp_path, mcp_servers=servers)).files["kiro-agent.json"])
    assert config["mcpServers"]["cao"]["timeout"] == 5000


def test_allowed_tools_in_caos_vocabulary():
    assert agent_tools(None) == ["*"]
    assert agent_tools(["*", "fs_read"]) == ["*"]
    assert agent_tools(None, ["fs_read", "@git"]) == ["fs_read", "@git"]
    developer = ["@builtin", "fs_*", "execute_bash", "web_fetch", "@cao-mcp-server"]
    assert agent_tools(developer) == ["@builtin", "fs_read", "fs_write", "execute_bash", "web_fetch", "@cao-mcp-server"]
    assert agent_tools(["@cao-mcp-server", "fs_read", "fs_list"]) == ["@cao-mcp-server", "fs_read"]
    assert agent_tools(["@git/git_status", "discovery", ""]) == ["@git/git_status"]
    assert agent_tools([]) == []
    for bad, words in (("--trust-all-tools", "command-line option"), ("fs read", "not a Kiro tool name"),
                       ("@", "not a Kiro tool name"), ("$(rm -rf /)", "not a Kiro tool name")):
        with pytest.raises(ValueError, match=words):
            agent_tools([bad])


@given(st.lists(st.text(max_size=20), max_size=8))
def test_agent_tools_gives_only_tool_names_or_refuses(allowed):
    try:
        tools = agent_tools(allowed)
    except ValueError as exc:
        assert "tool" in str(exc)
        return
    assert len(tools) == len(set(tools))
    assert not any(t.startswith("-") or any(c.isspace() for c in t) for t in tools)


@pytest.mark.parametrize("name", ["../evil", "a b", "x;rm", "", "a" * 65, "ok/../../x", "dev\n"])
def test_hostile_profile_names_are_refused_before_anything_is_written(home, tmp_path, name):
    with pytest.raises(ValueError, match="cannot name a Kiro agent file"):
        launch(ctx(tmp_path, AgentProfile(name=name)))
    assert not agent_dir(home).exists()


@settings(max_examples=60, deadline=None)
@given(name=st.text(min_size=1, max_size=70))
def test_agent_file_always_lands_inside_the_agent_folder(tmp_path_factory, name):
    root = tmp_path_factory.mktemp("names")
    home = root / "home"
    home.mkdir()
    program = root / "kiro-cli"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    env = {"HOME": str(home), BINARY_ENV: str(program)}
    try:
        plan = launch(ctx(root, AgentProfile(name=name), env=env))
    except ValueError:
        assert not agent_dir(home).exists()
        return
    path = Path(plan.argv[3])
    assert path.parent == agent_dir(home) and path.is_file()
    assert [p.name for p in home.rglob("*") if p.is_file()] == [path.name]


def test_bad_terminal_id_and_model_are_refused(home, tmp_path):
    with pytest.raises(ValueError, match="terminal id"):
        launch(ctx(tmp_path, terminal_id="../../x"))
    with pytest.raises(ValueError, match="model '--trust-all-tools'"):
        launch(ctx(tmp_path, model="--trust-all-tools"))
    with pytest.raises(ValueError, match="MCP server name"):
        launch(ctx(tmp_path, mcp_servers={"bad name": {"command": "x"}}))
    with pytest.raises(ValueError, match="not a Kiro tool name"):
        launch(ctx(tmp_path, allowed_tools=("fs read",)))
    assert not agent_dir(home).exists()


def test_missing_program_names_the_cli_and_how_to_install_it(home, tmp_path, monkeypatch):
    monkeypatch.delenv(BINARY_ENV)
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    with pytest.raises(ValueError) as refused:
        launch(ctx(tmp_path))
    message = str(refused.value)
    assert "Kiro CLI ('kiro-cli') is not on PATH" in message
    assert "cao-provider-kiro-cli" in message and "curl -fsSL https://cli.kiro.dev/install | bash" in message
    assert "unrelated" in message and BINARY_ENV in message
    monkeypatch.setenv(BINARY_ENV, str(tmp_path / "missing"))
    with pytest.raises(ValueError, match=f"{BINARY_ENV}=.* is not an executable file"):
        launch(ctx(tmp_path))
    assert not agent_dir(home).exists()


def test_program_found_on_path(home):
    program = Path(os.environ[BINARY_ENV])
    assert resolve_binary({"PATH": str(program.parent)}) == str(program)


def test_an_agent_file_is_replaced_whole(home, tmp_path):
    first = launch(ctx(tmp_path, model="m1"))
    path = Path(first.argv[3])
    second = launch(ctx(tmp_path, AgentProfile(name="developer", description="again")))
    assert path.read_text(encoding="utf-8") == second.files["kiro-agent.json"]
    assert [p.name for p in agent_dir(home).iterdir()] == [path.name]


def test_a_failed_write_leaves_no_temporary_file(home, tmp_path):
    # A folder where the agent file should go: the rename fails, for real.
    blocked = agent_dir(home) / f"cao-developer-{TERMINAL_ID}.json"
    blocked.mkdir(parents=True)
    with pytest.raises(OSError):
        launch(ctx(tmp_path))
    assert [p.name for p in agent_dir(home).iterdir()] == [blocked.name]


def _run_wrapper(plan, tmp_path, **env):
    args_file = tmp_path / "args"
    proc = subprocess.Popen(list(plan.argv), env={**os.environ, "ARGS_FILE": str(args_file), **env},
                            start_new_session=True)
    return proc, args_file


def test_wrapper_passes_the_command_line_and_removes_the_agent_file(home, tmp_path):
    plan = launch(ctx(tmp_path, model="m"))
    agent_file = Path(plan.argv[3])
    proc, args_file = _run_wrapper(plan, tmp_path, EXIT_WITH="3")
    assert proc.wait(10) == 3  # the CLI's own exit status
    assert not agent_file.exists()
    assert args_file.read_text().splitlines() == list(plan.argv[5:])


def test_wrapper_removes_the_agent_file_when_the_terminal_hangs_up(home, tmp_path):
    plan = launch(ctx(tmp_path))
    agent_file = Path(plan.argv[3])
    proc, args_file = _run_wrapper(plan, tmp_path, SLEEP_FOR="30")
    deadline = time.monotonic() + 10
    while not args_file.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert agent_file.exists()
    os.killpg(proc.pid, signal.SIGHUP)  # what closing a tmux window does
    assert proc.wait(10) == 129
    assert not agent_file.exists()


def test_legacy_ui_on_request(home, tmp_path):
    plan = launch(ctx(tmp_path, env={LEGACY_UI_ENV: "1"}))
    assert plan.argv[5:] == ("chat", "--trust-all-tools", "--legacy-ui", "--agent", f"cao-developer-{TERMINAL_ID}")
    assert "--legacy-ui" not in launch(ctx(tmp_path, env={LEGACY_UI_ENV: "0"})).argv
    with pytest.raises(ValueError, match=f"{LEGACY_UI_ENV}='yes'"):
        launch(ctx(tmp_path, env={LEGACY_UI_ENV: "yes"}))


def test_provider_record(home):
    provider = kiro_cli_provider()
    assert provider.name == "kiro_cli" and provider.binary == "kiro-cli" and provider.binary_env == BINARY_ENV
    assert provider.exit_command == "/quit"
    assert "curl -fsSL https://cli.kiro.dev/install | bash" in provider.install_hint
    assert provider.tested_versions == TESTED_VERSIONS == ("1.20.0", "2.25.0")
    assert [d.name for d in provider.startup_dialogs] == ["trust all tools consent"]
    assert provider.startup_dialogs[0].keys == ("Down", "Enter")
    assert provider.agent_dirs == ("~/.kiro/agents",)
    assert provider.model_endpoint is not None and provider.model_endpoint({"HOME": "/x"}) is None
    assert provider.capabilities.enter_count == 1
    assert provider.detect_status("").status is TerminalStatus.UNKNOWN


@pytest.fixture
def enabled_plugins():
    return ("kiro_cli",)


def test_plugin_registers_through_its_entry_point(kernel):
    record = next(r for r in kernel.plugin_records() if r.name == "kiro_cli")
    assert record.status == "active" and record.distribution == "cao-provider-kiro-cli"
    assert kernel.providers["kiro_cli"].name == "kiro_cli"


def test_version_output_is_parsed():
    assert parse_version("kiro-cli 1.20.0\n") == "1.20.0"
    assert parse_version("kiro-cli 2.25.0") == "2.25.0"
    assert parse_version("q 1.17.0") is None
    assert parse_version("") is None


@given(st.tuples(st.integers(0, 99), st.integers(0, 99), st.integers(0, 999)), st.text(max_size=30))
def test_version_parser_finds_the_version_and_never_raises(parts, noise):
    version = ".".join(map(str, parts))
    assert parse_version(f"kiro-cli {version}\n") == version
    found = parse_version(noise)
    assert found is None or found in noise
