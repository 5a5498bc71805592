"""The launch plan built from a profile: command line, files, environment, the user's files untouched."""

from __future__ import annotations

import json
import os
import re

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from cao_hookspecs import AgentProfile, CreateTerminalRequest
from cao_provider_copilot_cli.launch import (
    AGENT_DIR,
    CATEGORIES,
    DEFAULT_ENDPOINT,
    MCP_CONFIG_FILE,
    launch,
    model_endpoint,
    resolve_binary,
    tool_args,
)
from cao_testkit.files import file_bytes
from cao_testkit.launching import launch_context, noop_program, user_machine


@pytest.fixture
def fake_copilot(tmp_path, monkeypatch):
    """A user machine: HOME with a Copilot folder of their own, and an executable named as the override."""
    home = tmp_path / "home"
    (home / ".copilot" / "agents").mkdir(parents=True)
    (home / ".copilot" / "config.json").write_text('{"firstLaunchAt": "2025-01-01T00:00:00.000Z"}')
    (home / ".copilot" / "mcp-config.json").write_text('{"mcpServers": {}}')
    program = noop_program(tmp_path / "bin" / "copilot")
    user_machine(monkeypatch, home, binary_env="CAO_COPILOT_CLI_BIN", program=program, leaky=("COPILOT_",))
    return home


def ctx(tmp_path, profile=None, **kw):
    return launch_context(tmp_path, "copilot_cli", profile, **kw)


def test_full_profile_becomes_the_command_line(fake_copilot, tmp_path):
    before = file_bytes(fake_copilot)
    profile = AgentProfile(name="dev", description='Writes code: "carefully"',
                           system_prompt="  You write code.\n")
    servers = {"cao-mcp-server": {"command": "/opt/cao-mcp-server", "args": ["--stdio"],
                                  "env": {"CAO_TERMINAL_ID": "0123abcd", "CAO_API_PORT": "9999"}}}
    plan = launch(ctx(tmp_path, profile, model="gpt-5.4", mcp_servers=servers))
    runtime = tmp_path / "runtime"
    assert plan.argv == (
        os.environ["CAO_COPILOT_CLI_BIN"], "--allow-all", "--stream=off", "--model=gpt-5.4",
        "--add-dir", str(runtime / AGENT_DIR), "--agent", "cao-dev",
        "--additional-mcp-config", "@" + str(runtime / MCP_CONFIG_FILE),
    )
    assert dict(plan.env) == {"COPILOT_AUTO_UPDATE": "false", "COPILOT_ALLOW_ALL": "true"}

    agent = plan.files[f"{AGENT_DIR}/.github/agents/cao-dev.agent.md"]
    _, header, body = agent.split("---\n", 2)
    assert yaml.safe_load(header) == {"name": "cao-dev", "description": 'Writes code: "carefully"'}
    assert body == "\nYou write code.\n"

    config = json.loads(plan.files[MCP_CONFIG_FILE])
    assert config == {"mcpServers": {"cao-mcp-server": {
        "command": "/opt/cao-mcp-server", "args": ["--stdio"], "type": "stdio", "tools": ["*"],
        "env": {"CAO_TERMINAL_ID": "0123abcd", "CAO_API_PORT": "9999"},
    }}}
    # Everything lives in the runtime folder the kernel writes; the user's Copilot folder is untouched.
    assert not runtime.exists()
    assert file_bytes(fake_copilot) == before
    assert "COPILOT_HOME" not in plan.env


def test_no_body_no_agent_and_no_servers_no_config(fake_copilot, tmp_path):
    plan = launch(ctx(tmp_path, AgentProfile(name="bare")))
    assert plan.argv[1:] == ("--allow-all", "--stream=off")
    assert dict(plan.files) == {}


def test_an_entry_keeps_its_own_type_and_tools(fake_copilot, tmp_path):
    servers = {"docs": {"type": "http", "url": "http://127.0.0.1:1/mcp", "tools": ["search"]}}
    plan = launch(ctx(tmp_path, None, mcp_servers=servers))
    assert json.loads(plan.files[MCP_CONFIG_FILE])["mcpServers"]["docs"] == servers["docs"]


def test_a_restricted_agent_gets_rules_and_no_blanket_permission(fake_copilot, tmp_path, monkeypatch):
    monkeypatch.setenv("COPILOT_ALLOW_ALL", "true")  # the user's own setting must not reach this agent
    servers = {"cao-mcp-server": {"command": "cao-mcp-server"}, "github": {"command": "gh-mcp"}}
    plan = launch(ctx(tmp_path, AgentProfile(name="rev"), mcp_servers=servers,
                      allowed_tools=("fs_read", "fs_list", "@cao-mcp-server")))
    assert plan.argv[1:-2] == (
        "--allow-all-paths", "--deny-tool=shell", "--deny-tool=write", "--deny-tool=url",
        "--allow-tool=cao-mcp-server", "--deny-tool=github", "--stream=off",
    )
    assert plan.env["COPILOT_ALLOW_ALL"] == "false"


def test_yolo_lifts_the_restrictions(fake_copilot, tmp_path):
    plan = launch(ctx(tmp_path, AgentProfile(name="rev"), allowed_tools=("fs_read",), yolo=True))
    assert plan.argv[1] == "--allow-all" and plan.env["COPILOT_ALLOW_ALL"] == "true"


@pytest.mark.parametrize(("allowed", "expected"), [
    (None, ["--allow-all"]),
    (["*"], ["--allow-all"]),
    (["fs_read", "*"], ["--allow-all"]),
    (["@builtin"], ["--allow-all-paths", "--allow-tool=shell", "--allow-tool=write", "--allow-all-urls"]),
    (["execute_bash", "fs_*"],
     ["--allow-all-paths", "--allow-tool=shell", "--allow-tool=write", "--deny-tool=url"]),
    ([], ["--allow-all-paths", "--deny-tool=shell", "--excluded-tools=glob", "--excluded-tools=view",
          "--excluded-tools=grep", "--deny-tool=write", "--deny-tool=url"]),
    (["discovery", " fs_read ", ""], ["--allow-all-paths", "--deny-tool=shell", "--excluded-tools=glob",
                                       "--deny-tool=write", "--deny-tool=url"]),
    # A Copilot pattern of a kind keeps the rest of that kind asking, instead of denied as a whole.
    (["fs_*", "shell(git:*)"], ["--allow-all-paths", "--allow-tool=write", "--deny-tool=url",
                                "--allow-tool=shell(git:*)"]),
    (["fs_*", "url(github.com)"], ["--allow-all-paths", "--deny-tool=shell", "--allow-tool=write",
                                   "--allow-tool=url(github.com)"]),
])
def test_tool_vocabulary(allowed, expected):
    assert tool_args(allowed, []) == expected


def test_mcp_servers_allowed_by_name_or_pattern():
    args = tool_args(["fs_*", "@docs", "github(get_issue)"], ["docs", "github", "other"])
    assert "--allow-tool=docs" in args and "--allow-tool=github(get_issue)" in args
    assert "--deny-tool=other" in args
    assert "--deny-tool=github" not in args and "--deny-tool=docs" not in args


@pytest.mark.parametrize(("allowed", "message"), [
    (["fs_read", "Bash"], r"allowed tool 'Bash' is not one copilot_cli understands"),
    (["@"], r"'@' must be followed by an MCP server name"),
    (["@bad name"], r"'@' must be followed by an MCP server name"),
    (["--allow-all"], r"allowed tool '--allow-all' is not one"),
])
def test_unknown_tools_are_refused_by_name(allowed, message):
    with pytest.raises(ValueError, match=message):
        tool_args(allowed, [])


VOCABULARY = ["@builtin", "fs_*", *CATEGORIES, "@docs", "@github", "shell(git:*)", "write(docs/)",
              "url(github.com)", "github(get_issue)", "discovery"]


@given(st.lists(st.sampled_from(VOCABULARY), max_size=8))
def test_no_tool_is_both_allowed_and_denied(allowed):
    args = tool_args(allowed, ["docs", "github", "other"])
    assert "--allow-all" not in args and args[0] == "--allow-all-paths"
    allowed_kinds = {a.split("=", 1)[1].split("(")[0] for a in args if a.startswith("--allow-tool=")}
    denied = {a.split("=", 1)[1] for a in args if a.startswith("--deny-tool=")}
    assert not allowed_kinds & denied, args
    if "--allow-all-urls" in args:
        assert "url" not in denied
    # Each option is one argument: nothing a later option could swallow as a value.
    assert all(a.startswith("--") and (" " not in a) for a in args)
    # What the list leaves out is denied or hidden.
    for category, (kind, hidden) in CATEGORIES.items():
        granted = (category in allowed or "@builtin" in allowed
                   or (category.startswith("fs_") and "fs_*" in allowed))
        if not granted:
            assert (kind in denied or any(r.startswith(f"{kind}(") for r in allowed)) if kind else all(
                f"--excluded-tools={tool}" in args for tool in hidden)


def test_bad_names_are_refused(fake_copilot, tmp_path):
    with pytest.raises(ValueError, match="MCP server name 'bad name'"):
        launch(ctx(tmp_path, None, mcp_servers={"bad name": {"command": "x"}}))
    with pytest.raises(ValueError, match="cannot name a Copilot agent"):
        launch(ctx(tmp_path, AgentProfile(name="a b", system_prompt="x")))


def test_binary_override_and_path(tmp_path, monkeypatch):
    monkeypatch.setenv("CAO_COPILOT_CLI_BIN", str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="CAO_COPILOT_CLI_BIN=.* is not an executable file"):
        resolve_binary(dict(os.environ))
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match=r"not on PATH; install it with: npm install -g @github/copilot"):
        resolve_binary({"PATH": str(empty)})
    program = empty / "copilot"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    assert resolve_binary({"PATH": str(empty)}) == str(program)


def test_the_environment_of_the_request_picks_the_binary(fake_copilot, tmp_path):
    other = tmp_path / "other-copilot"
    other.write_text("#!/bin/sh\n")
    other.chmod(0o755)
    plan = launch(ctx(tmp_path, None, env={"CAO_COPILOT_CLI_BIN": str(other)}))
    assert plan.argv[0] == str(other)


@given(description=st.text(max_size=80), prompt=st.text(min_size=1, max_size=200).filter(str.strip))
def test_any_description_survives_the_agent_header(tmp_path_factory, description, prompt):
    """The agent file's header is YAML: quotes, colons, '---' or newlines in a description cannot break it."""
    tmp = tmp_path_factory.mktemp("agent")
    program = tmp / "copilot"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    plan = launch(ctx(tmp, AgentProfile(name="dev", description=description, system_prompt=prompt),
                      env={"CAO_COPILOT_CLI_BIN": str(program)}))
    agent = plan.files[f"{AGENT_DIR}/.github/agents/cao-dev.agent.md"]
    header = re.match(r"---\n(.*?)\n---\n", agent, re.DOTALL)
    assert header is not None
    assert yaml.safe_load(header.group(1)) == {"name": "cao-dev", "description": description or "cao-dev"}
    assert agent[header.end():] == "\n" + prompt.strip() + "\n"


@pytest.mark.parametrize(("env", "expected"), [
    ({}, DEFAULT_ENDPOINT),
    ({"COPILOT_PROVIDER_BASE_URL": " http://127.0.0.1:11434/v1 "}, "http://127.0.0.1:11434/v1"),
    ({"GH_HOST": "github.com"}, DEFAULT_ENDPOINT),
    ({"GH_HOST": "https://GitHub.com/"}, DEFAULT_ENDPOINT),
    ({"GH_HOST": "mycompany.ghe.com"}, None),
    ({"GH_HOST": "mycompany.ghe.com", "COPILOT_GH_HOST": "github.com"}, DEFAULT_ENDPOINT),
    ({"GH_HOST": "x.ghe.com", "COPILOT_PROVIDER_BASE_URL": "https://gw.example.com/v1"}, "https://gw.example.com/v1"),
])
def test_model_endpoint(env, expected):
    assert model_endpoint(env) == expected


@given(st.dictionaries(st.sampled_from(["COPILOT_PROVIDER_BASE_URL", "GH_HOST", "COPILOT_GH_HOST", "HOME"]),
                       st.text(max_size=40)))
def test_model_endpoint_never_raises(env):
    url = model_endpoint(env)
    assert url is None or isinstance(url, str)


async def test_a_bad_profile_is_refused_by_the_kernel_with_nothing_created(fake_copilot, make_kernel,
                                                                            tmp_path):
    from cao_kernel.errors import InvalidInput

    work = tmp_path / "work"
    work.mkdir()
    async with make_kernel() as kernel:
        kernel.add_profile(AgentProfile(name="odd", provider="copilot_cli",
                                        allowed_tools=("fs_read", "Bash")))
        with pytest.raises(InvalidInput, match="allowed tool 'Bash' is not one copilot_cli understands"):
            await kernel.create_session(CreateTerminalRequest(
                agent_profile="odd", working_directory=str(work)))
        assert await kernel.list_sessions() == []
