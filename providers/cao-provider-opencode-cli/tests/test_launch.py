"""The command line, config file and environment built from agent profiles (no OpenCode needed)."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_hookspecs import AgentProfile, LaunchContext, Terminal
from cao_provider_opencode_cli.config import deep_merge, model_endpoint, read_jsonc, user_config
from cao_provider_opencode_cli.launch import BINARY_ENV, INSTALL_HINT, launch, permission_rules
from cao_provider_opencode_cli.provider import opencode_provider

CAO_ENTRY = {"type": "stdio", "command": "/opt/cao/bin/cao-mcp-server", "args": [],
             "env": {"CAO_TERMINAL_ID": "0a1b2c3d", "CAO_API_HOST": "127.0.0.1", "CAO_API_PORT": "9889"}}


@pytest.fixture
def fake_opencode(tmp_path, monkeypatch) -> Path:
    """An executable named by CAO_OPENCODE_CLI_BIN, and a HOME with no OpenCode config of its own."""
    program = tmp_path / "bin" / "opencode"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\necho 1.18.33\n", encoding="utf-8")
    program.chmod(program.stat().st_mode | stat.S_IXUSR)
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv(BINARY_ENV, str(program))
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    for name in list(os.environ):
        if name.startswith("OPENCODE_"):
            monkeypatch.delenv(name)
    return program


def _ctx(tmp_path: Path, profile: AgentProfile | None = None, **fields) -> LaunchContext:
    name = profile.name if profile else "developer"
    terminal = Terminal(id="0a1b2c3d", name=f"{name}-1a2b", session_name="cao-x", provider="opencode_cli",
                        agent_profile=name)
    return LaunchContext(terminal=terminal, profile=profile, working_directory=str(tmp_path),
                         runtime_dir=str(tmp_path / "runtime"), **fields)


def _config(plan) -> dict:
    return json.loads(plan.files["opencode.json"])


def test_default_launch_runs_the_inline_interface_with_a_private_config(tmp_path, fake_opencode):
    profile = AgentProfile(name="developer", description="Writes code", system_prompt="  Be careful.  ")
    plan = launch(_ctx(tmp_path, profile, mcp_servers={"cao-mcp-server": CAO_ENTRY}))

    assert plan.argv == (str(fake_opencode), "--mini", "--agent", "cao-developer")
    runtime = tmp_path / "runtime"
    assert plan.env["OPENCODE_CONFIG"] == str(runtime / "opencode.json")
    assert plan.env["OPENCODE_DISABLE_AUTOUPDATE"] == "1"
    assert plan.files["system-prompt.md"] == "Be careful.\n"
    config = _config(plan)
    assert config["autoupdate"] is False
    assert config["instructions"] == [str(runtime / "system-prompt.md")]
    assert config["agent"] == {"cao-developer": {"mode": "primary", "description": "Writes code",
                                                 "permission": {"*": "allow"}}}
    # The server's address and the terminal id travel in the entry's own environment.
    assert config["mcp"] == {"cao-mcp-server": {
        "type": "local", "command": ["/opt/cao/bin/cao-mcp-server"], "enabled": True,
        "environment": {"CAO_TERMINAL_ID": "0a1b2c3d", "CAO_API_HOST": "127.0.0.1", "CAO_API_PORT": "9889"},
    }}


def test_model_and_remote_mcp_servers(tmp_path, fake_opencode):
    servers = {"docs": {"type": "http", "url": "https://docs.example/mcp", "headers": {"X-Key": "k"}},
               "local": {"command": "tool", "args": ["--flag", 3], "timeout": 20000}}
    plan = launch(_ctx(tmp_path, AgentProfile(name="dev"), model="anthropic/claude-sonnet-4-5",
                       mcp_servers=servers))
    assert plan.argv[-2:] == ("--model", "anthropic/claude-sonnet-4-5")
    assert "system-prompt.md" not in plan.files and "instructions" not in _config(plan)
    assert _config(plan)["mcp"] == {
        "docs": {"type": "remote", "url": "https://docs.example/mcp", "enabled": True,
                 "headers": {"X-Key": "k"}},
        "local": {"type": "local", "command": ["tool", "--flag", "3"], "enabled": True, "timeout": 20000},
    }


@pytest.mark.parametrize(("fields", "message"), [
    ({"model": "claude-sonnet-4-5"}, "provider/model"),
    ({"mcp_servers": {"bad name": {"command": "x"}}}, "MCP server name"),
    ({"mcp_servers": {"x": {"args": ["a"]}}}, "needs a 'command'"),
    ({"mcp_servers": {"x": {"url": "ftp://host"}}}, "http(s) URL"),
    ({"mcp_servers": {"x": {"command": "x", "env": {"A": ["list"]}}}}, "env must map"),
    ({"allowed_tools": ["fs_read", "Bash(git *)"]}, "Bash(git *)"),
    ({"allowed_tools": ["@no such server"]}, "MCP server name"),
])
def test_bad_values_are_refused_naming_the_problem(tmp_path, fake_opencode, fields, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("*", r"\*")):
        launch(_ctx(tmp_path, AgentProfile(name="dev"), **fields))
    assert not (tmp_path / "runtime").exists()


def test_the_binary_comes_from_the_override_or_path(tmp_path, fake_opencode, monkeypatch):
    monkeypatch.setenv(BINARY_ENV, str(tmp_path / "missing"))
    with pytest.raises(ValueError, match=BINARY_ENV):
        launch(_ctx(tmp_path))
    monkeypatch.delenv(BINARY_ENV)
    monkeypatch.setenv("PATH", str(fake_opencode.parent))
    assert launch(_ctx(tmp_path)).argv[0] == str(fake_opencode)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(ValueError, match=INSTALL_HINT):
        launch(_ctx(tmp_path))


def test_permission_modes(tmp_path, fake_opencode):
    def rules(**fields):
        yolo = fields.pop("yolo", False)
        plan = launch(_ctx(tmp_path, AgentProfile(name="dev", **fields), yolo=yolo))
        return _config(plan)["agent"]["cao-dev"]

    assert rules()["permission"] == {"*": "allow"}
    assert rules(permission_mode="bypassPermissions")["permission"] == {"*": "allow"}
    # OpenCode's own rules (and the user's config) decide: the agent carries none.
    assert "permission" not in rules(permission_mode="default")
    assert rules(permission_mode="default", yolo=True)["permission"] == {"*": "allow"}
    with pytest.raises(ValueError, match="permissionMode 'plan' is not supported"):
        rules(permission_mode="plan")


def test_allowed_tools_become_ordered_permission_rules(tmp_path):
    def rules(allowed, mode=None, servers=("cao-mcp-server", "docs")):
        ctx = _ctx(tmp_path, AgentProfile(name="dev", permission_mode=mode), allowed_tools=allowed)
        return list(permission_rules(ctx, list(servers)).items())

    assert rules(None) == [("*", "allow")]
    assert rules(["*"]) == [("*", "allow")]
    # A supervisor: cao's tools and reading, nothing else.
    assert rules(["@cao-mcp-server", "fs_read", "fs_list"]) == [
        ("*", "allow"), ("bash", "deny"), ("edit", "deny"), ("webfetch", "deny"), ("websearch", "deny"),
        ("codesearch", "deny"), ("docs_*", "deny")]
    # A developer: every native tool, and both servers.
    developer = ["@builtin", "fs_*", "execute_bash", "web_fetch", "@cao-mcp-server", "@docs"]
    assert rules(developer) == [("*", "allow")]
    # A tool allowed by OpenCode's own name wins over its category.
    assert rules(["fs_list", "read", "@builtin"], servers=()) == [("*", "allow"), ("read", "allow")]
    assert ("read", "allow") in rules(["fs_list", "read"]) and ("grep", "deny") in rules(["fs_list", "read"])
    # Under OpenCode's own rules the allowed tools are allowed outright, so they never stop to ask.
    assert rules(["execute_bash", "@docs", "todowrite", "discovery"], mode="default") == [
        ("read", "deny"), ("grep", "deny"), ("glob", "deny"), ("list", "deny"), ("edit", "deny"),
        ("webfetch", "deny"), ("websearch", "deny"), ("codesearch", "deny"), ("cao-mcp-server_*", "deny"),
        ("bash", "allow"), ("docs_*", "allow"), ("todowrite", "allow")]


def test_a_native_agent_is_run_with_top_level_rules(tmp_path, fake_opencode):
    plan = launch(_ctx(tmp_path, AgentProfile(name="dev", native_agent="reviewer", allowed_tools=None)))
    assert plan.argv[-2:] == ("--agent", "reviewer")
    config = _config(plan)
    assert "agent" not in config and config["permission"] == {"*": "allow"}
    with pytest.raises(ValueError, match="native_agent"):
        launch(_ctx(tmp_path, AgentProfile(name="dev", native_agent="../x")))


def test_the_users_own_opencode_config_is_kept_and_never_written(tmp_path, fake_opencode, monkeypatch):
    own = tmp_path / "mine" / "opencode.jsonc"
    own.parent.mkdir()
    text = """{
      // my settings
      "theme": "nord",
      "instructions": ["{file:./house-rules.md}", "/abs/rules.md"],
      "agent": {"cao-dev": {"temperature": 0.2,}},
      "mcp": {"search": {"type": "remote", "url": "https://search.example/mcp"}},
    }"""
    own.write_text(text, encoding="utf-8")
    monkeypatch.setenv("OPENCODE_CONFIG", str(own))
    profile = AgentProfile(name="dev", system_prompt="Rules.")
    plan = launch(_ctx(tmp_path, profile, mcp_servers={"cao-mcp-server": CAO_ENTRY}))
    config = _config(plan)
    assert config["theme"] == "nord"
    assert config["instructions"] == [f"{{file:{own.parent}/house-rules.md}}", "/abs/rules.md",
                                      str(tmp_path / "runtime" / "system-prompt.md")]
    assert config["agent"]["cao-dev"] == {"temperature": 0.2, "mode": "primary",
                                          "description": "cao agent profile dev",
                                          "permission": {"*": "allow"}}
    assert set(config["mcp"]) == {"search", "cao-mcp-server"}
    assert plan.env["OPENCODE_CONFIG"] == str(tmp_path / "runtime" / "opencode.json")
    assert own.read_text(encoding="utf-8") == text

    own.write_text("{ not json", encoding="utf-8")
    with pytest.raises(ValueError, match=str(own)):
        launch(_ctx(tmp_path, profile))


def test_the_record_names_the_binary_override_and_the_package(tmp_path):
    spec = opencode_provider()
    assert spec.binary_env == BINARY_ENV == "CAO_OPENCODE_CLI_BIN"
    assert "opencode-ai" in spec.install_hint
    assert spec.capabilities.accepts_input_while_busy and spec.capabilities.enter_count == 1
    assert spec.model_endpoint is model_endpoint


# -- the user's config, read as OpenCode reads it ---------------------------------------------------


def test_model_endpoint_follows_the_config_opencode_reads(tmp_path):
    home = tmp_path / "home"
    folder = home / ".config" / "opencode"
    folder.mkdir(parents=True)
    env = {"HOME": str(home)}
    assert model_endpoint(env) is None  # no model chosen: OpenCode picks one from the logins it finds
    (folder / "opencode.json").write_text('{"model": "anthropic/claude-sonnet-4-5"}', encoding="utf-8")
    assert model_endpoint(env) == "https://api.anthropic.com/v1"
    assert model_endpoint({**env, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9/v1"}) == "http://127.0.0.1:9/v1"
    gateway = {"provider": {"anthropic": {"options": {"baseURL": "https://gw.example/v1"}}}}
    (folder / "opencode.jsonc").write_text("// mine\n" + json.dumps(gateway), encoding="utf-8")
    assert model_endpoint(env) == "https://gw.example/v1"
    custom = tmp_path / "custom.json"
    custom.write_text('{"model": "openai/gpt-5"}', encoding="utf-8")
    assert model_endpoint({**env, "OPENCODE_CONFIG": str(custom)}) == "https://api.openai.com/v1"
    inline = '{"model": "lab/m", "provider": {"lab": {"options": {"baseURL": "http://10.0.0.2:8000/v1"}}}}'
    assert model_endpoint({**env, "OPENCODE_CONFIG_CONTENT": inline}) == "http://10.0.0.2:8000/v1"
    assert model_endpoint({**env, "OPENCODE_CONFIG_CONTENT": '{"model": "lab/m"}'}) is None
    assert model_endpoint({**env, "XDG_CONFIG_HOME": str(tmp_path / "elsewhere")}) is None
    (folder / "opencode.json").write_text("{ broken", encoding="utf-8")
    assert model_endpoint(env) is None  # never raises


def test_user_config_merges_in_opencodes_order(tmp_path):
    folder = tmp_path / "xdg" / "opencode"
    folder.mkdir(parents=True)
    (folder / "opencode.json").write_text('{"model": "a/1", "theme": "x", "instructions": ["g.md"]}')
    custom = tmp_path / "c.json"
    custom.write_text('{"model": "b/2", "instructions": ["c.md"]}')
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "OPENCODE_CONFIG": str(custom),
           "OPENCODE_CONFIG_CONTENT": '{"model": "c/3"}'}
    assert user_config(env) == {"model": "c/3", "theme": "x", "instructions": ["g.md", "c.md"]}


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(),
    lambda children: (st.lists(children, max_size=4)
                      | st.dictionaries(st.text(max_size=8), children, max_size=4)),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(value=_json_values, comment=st.text().filter(lambda t: "\n" not in t and "*/" not in t))
def test_jsonc_reads_what_opencode_accepts(value, comment):
    text = json.dumps(value, indent=1)
    # A comment after every row, a block comment on top, and a trailing comma before every closing
    # bracket of a non-empty list or object leave the value as it was.
    decorated = f"/* {comment} */\n" + "\n".join(f"{row} // {comment}" for row in text.split("\n"))
    assert read_jsonc(decorated) == value
    assert read_jsonc(re.sub(r"\n(\s*[\]}])", r",\n\1", text)) == value


@settings(max_examples=200, deadline=None)
@given(text=st.text())
def test_jsonc_reader_raises_only_value_error(text):
    try:
        read_jsonc(text)
    except ValueError as exc:
        assert "line" in str(exc)


@settings(max_examples=100, deadline=None)
@given(base=st.dictionaries(st.sampled_from("abc"), _json_values, max_size=3),
       top=st.dictionaries(st.sampled_from("abc"), _json_values, max_size=3))
def test_deep_merge_lets_the_later_source_win(base, top):
    merged = deep_merge(base, top)
    assert set(merged) == set(base) | set(top)
    for key, value in top.items():
        if not (isinstance(value, dict) and isinstance(base.get(key), dict)):
            assert merged[key] == value
