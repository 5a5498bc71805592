"""The launch plan (argv, private Codex home, config.toml) and the provider record, without running Codex."""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cao_hookspecs import AgentProfile, LaunchContext, Terminal
from cao_provider_codex.codex_home import mcp_entry, merge
from cao_provider_codex.provider import codex_provider, launch, model_endpoint

YOLO = "--dangerously-bypass-approvals-and-sandbox"

# Launch plans name the program they start: a stand-in is found, never run.
pytestmark = pytest.mark.usefixtures("fake_codex")


def context(tmp_path: Path, profile: AgentProfile | None = None, **fields) -> LaunchContext:
    terminal = Terminal(id="0123abcd", name="dev-0001", session_name="cao-s", provider="codex",
                        agent_profile="dev")
    workdir = tmp_path / "project"
    workdir.mkdir(exist_ok=True)
    fields.setdefault("working_directory", str(workdir))
    return LaunchContext(terminal=terminal, profile=profile or AgentProfile(name="dev", provider="codex"),
                         runtime_dir=str(tmp_path / "runtime"), **fields)


def config_of(plan) -> dict:
    return tomllib.loads(plan.files["codex-home/config.toml"])


def test_default_launch_is_inline_yolo_with_a_private_home(tmp_path, user_home, fake_codex):
    plan = launch(context(tmp_path, model="scripted"))
    assert plan.argv == (str(fake_codex), "--no-alt-screen", "--no-daemon", YOLO, "--model", "scripted")
    assert dict(plan.env) == {"CODEX_HOME": str(tmp_path / "runtime" / "codex-home")}
    assert set(plan.files) == {"codex-home/config.toml"}
    config = config_of(plan)
    assert config["check_for_update_on_startup"] is False
    assert config["features"] == {"shell_snapshot": False}
    assert config["projects"] == {str(tmp_path / "project"): {"trust_level": "trusted"}}
    assert "mcp_servers" not in config and "developer_instructions" not in config
    assert plan.files["codex-home/config.toml"].startswith("# Written by cao for terminal 0123abcd")


def test_profile_body_mcp_servers_and_codex_config_reach_the_config(tmp_path, user_home):
    profile = AgentProfile(
        name="dev", provider="codex", system_prompt='Be brief.\nQuote "this" \\ that.\n',
        codex_config={"model_provider": "scripted",
                      "model_providers": {"scripted": {"base_url": "http://127.0.0.1:9/v1", "env_key": "K",
                                                       "wire_api": "responses"}}},
    )
    servers = {"cao": {"command": "/venv/bin/cao-mcp-server", "args": [], "type": "stdio",
                       "env": {"CAO_TERMINAL_ID": "0123abcd", "CAO_API_PORT": 9889}},
               "web": {"url": "http://127.0.0.1:1/mcp", "headers": {"X-A": "b"}, "tool_timeout_sec": 5}}
    config = config_of(launch(context(tmp_path, profile, mcp_servers=servers)))
    assert config["developer_instructions"] == 'Be brief.\nQuote "this" \\ that.'
    assert config["model_provider"] == "scripted"
    assert config["model_providers"]["scripted"]["wire_api"] == "responses"
    assert config["mcp_servers"]["cao"] == {
        "command": "/venv/bin/cao-mcp-server", "args": [],
        "env": {"CAO_TERMINAL_ID": "0123abcd", "CAO_API_PORT": "9889"},
        "tool_timeout_sec": 600.0, "startup_timeout_sec": 30.0, "required": True,
    }
    web = config["mcp_servers"]["web"]
    assert web["http_headers"] == {"X-A": "b"} and web["tool_timeout_sec"] == 5.0
    assert isinstance(web["tool_timeout_sec"], float)


def test_restricted_tools_are_told_to_the_model(tmp_path, user_home):
    profile = AgentProfile(name="dev", provider="codex", system_prompt="Review code.")
    config = config_of(launch(context(tmp_path, profile, allowed_tools=("fs_read", "@cao-mcp-server"))))
    assert config["developer_instructions"].startswith(
        "Only use these tools in this session: fs_read, @cao-mcp-server.")
    assert config["developer_instructions"].endswith("Review code.")
    config = config_of(launch(context(tmp_path, profile, allowed_tools=("*",))))
    assert config["developer_instructions"] == "Review code."


def test_user_config_is_the_base_and_is_never_written(tmp_path, user_home):
    user_text = ('model = "o-user"\n[mcp_servers.cao]\ncommand = "old"\nextra = 1\n'
                 '[mcp_servers.mine]\ncommand = "mine"\n[projects."/elsewhere"]\ntrust_level = "trusted"\n'
                 '[features]\nshell_snapshot = true\nhooks = false\n')
    (user_home / "config.toml").write_text(user_text)
    servers = {"cao": {"command": "cao-mcp-server", "env": {"CAO_TERMINAL_ID": "0123abcd"}}}
    config = config_of(launch(context(tmp_path, mcp_servers=servers)))
    assert config["model"] == "o-user"
    assert config["mcp_servers"]["mine"] == {"command": "mine"}
    assert "extra" not in config["mcp_servers"]["cao"]  # a profile server replaces the user's whole entry
    assert config["features"] == {"shell_snapshot": False, "hooks": False}
    assert set(config["projects"]) == {"/elsewhere", str(tmp_path / "project")}
    assert (user_home / "config.toml").read_text() == user_text
    assert sorted(os.listdir(user_home)) == ["config.toml"]


def test_symlinked_working_folder_is_trusted_under_both_names(tmp_path, user_home):
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    config = config_of(launch(context(tmp_path, working_directory=str(tmp_path / "link"))))
    assert set(config["projects"]) == {str(tmp_path / "link"), str(real)}


def test_sign_in_is_linked_from_the_user_home(tmp_path, user_home):
    (user_home / "auth.json").write_text('{"tokens": {}}')
    launch(context(tmp_path))
    link = tmp_path / "runtime" / "codex-home" / "auth.json"
    assert link.is_symlink() and link.resolve() == (user_home / "auth.json").resolve()
    launch(context(tmp_path))  # a second launch of the same terminal keeps the link
    assert link.is_symlink()


def test_codex_profile_is_used_instead_of_yolo_and_copied_in(tmp_path, user_home):
    (user_home / "careful.config.toml").write_text('approval_policy = "on-request"\n')
    profile = AgentProfile(name="dev", provider="codex", codex_profile="careful")
    plan = launch(context(tmp_path, profile))
    assert plan.argv[1:5] == ("--no-alt-screen", "--no-daemon", "--profile", "careful")
    assert YOLO not in plan.argv
    assert plan.files["codex-home/careful.config.toml"] == 'approval_policy = "on-request"\n'
    # yolo (explicit, or every tool allowed) wins over the profile, as upstream does.
    assert YOLO in launch(context(tmp_path, profile, yolo=True)).argv
    assert YOLO in launch(context(tmp_path, profile, allowed_tools=("*",))).argv


def test_codex_profile_from_a_config_table_becomes_the_layered_file_codex_reads(tmp_path, user_home):
    # Codex refuses --profile while config.toml keeps a [profiles.<name>] table.
    (user_home / "config.toml").write_text('[profiles.legacy]\nmodel = "x"\n[profiles.other]\nmodel = "y"\n')
    plan = launch(context(tmp_path, AgentProfile(name="dev", provider="codex", codex_profile="legacy")))
    assert "--profile" in plan.argv and config_of(plan)["profiles"] == {"other": {"model": "y"}}
    assert tomllib.loads(plan.files["codex-home/legacy.config.toml"]) == {"model": "x"}
    # The agent profile's own codexConfig may carry the table too.
    profile = AgentProfile(name="dev", provider="codex", codex_profile="asking",
                           codex_config={"profiles": {"asking": {"approval_policy": "on-request"}}})
    plan = launch(context(tmp_path, profile))
    assert "profiles" not in config_of(plan) or "asking" not in config_of(plan)["profiles"]
    assert tomllib.loads(plan.files["codex-home/asking.config.toml"]) == {"approval_policy": "on-request"}


@pytest.mark.parametrize(("profile_fields", "servers", "message"), [
    ({"codex_profile": "missing"}, {}, "Codex profile 'missing' not found"),
    ({"codex_profile": "../etc"}, {}, "not a valid Codex profile name"),
    ({}, {"bad name": {"command": "x"}}, "MCP server name 'bad name' is not allowed"),
    ({}, {"cao\n": {"command": "x"}}, "MCP server name 'cao\\n' is not allowed"),
    ({"codex_profile": "..\n"}, {}, "not a valid Codex profile name"),
    ({}, {"cao": {"args": ["x"]}}, "MCP server 'cao': needs a 'command'"),
    ({}, {"cao": {"command": "x", "args": "a b"}}, "'args' must be a list"),
    ({}, {"cao": {"command": "x", "env": ["A=1"]}}, "'env' must be a table"),
    ({}, {"cao": {"command": "x", "tool_timeout_sec": 0}}, "tool_timeout_sec must be a positive number"),
    ({}, {"cao": {"command": "x", "startup_timeout_sec": True}}, "startup_timeout_sec must be a positive"),
    ({}, {"cao": {"command": "x", "required": "yes"}}, "'required' must be true or false"),
    ({"codex_config": {"bad": None}}, {}, "bad: TOML has no null value"),
])
def test_bad_input_is_a_clear_error_and_writes_nothing(tmp_path, user_home, profile_fields, servers, message):
    profile = AgentProfile(name="dev", provider="codex", **profile_fields)
    with pytest.raises(ValueError, match=re.escape(message)):
        launch(context(tmp_path, profile, mcp_servers=servers))
    assert not (tmp_path / "runtime").exists()


def test_broken_user_config_names_the_file(tmp_path, user_home):
    (user_home / "config.toml").write_text("model = \n")
    with pytest.raises(ValueError, match=r"config.toml is not valid TOML"):
        launch(context(tmp_path))


def test_missing_program_names_the_install_command(tmp_path, user_home, monkeypatch):
    monkeypatch.delenv("CAO_CODEX_BIN")
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match=r"Codex \('codex'\) is not on PATH; install it with: npm install -g @openai/codex"):
        launch(context(tmp_path))
    monkeypatch.setenv("CAO_CODEX_BIN", str(tmp_path / "missing"))
    with pytest.raises(ValueError, match="CAO_CODEX_BIN=.* is not an executable file"):
        launch(context(tmp_path))


def test_program_found_on_path(tmp_path, user_home, fake_codex, monkeypatch):
    monkeypatch.delenv("CAO_CODEX_BIN")
    monkeypatch.setenv("PATH", str(fake_codex.parent))
    assert launch(context(tmp_path)).argv[0] == str(fake_codex)
    # The terminal's own environment counts too, not only the kernel's.
    monkeypatch.setenv("PATH", str(tmp_path / "nowhere"))
    assert launch(context(tmp_path, env={"CAO_CODEX_BIN": str(fake_codex)})).argv[0] == str(fake_codex)


def test_provider_record():
    provider = codex_provider()
    assert (provider.name, provider.binary, provider.binary_env, provider.exit_command) == (
        "codex", "codex", "CAO_CODEX_BIN", "/exit")
    assert provider.capabilities.handoff_banner is True
    assert provider.install_hint == "npm install -g @openai/codex"
    assert provider.tested_versions == ("0.169.0",)
    assert {d.name for d in provider.startup_dialogs} == {"trust-folder", "update-prompt"}


def test_model_endpoint_follows_the_config_the_cli_reads(tmp_path):
    home = tmp_path / "codex-home"
    home.mkdir()
    env = {"CODEX_HOME": str(home)}
    assert model_endpoint(env) == "https://api.openai.com/v1"
    assert model_endpoint({**env, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}) == "http://127.0.0.1:9/v1"
    (home / "config.toml").write_text(
        'model_provider = "gateway"\n'
        '[model_providers.gateway]\nbase_url = "https://gateway.example/v1"\n'
        '[model_providers.spare]\nbase_url = "https://spare.example/v1"\n'
        '[profiles.other]\nmodel_provider = "spare"\n')
    assert model_endpoint(env) == "https://gateway.example/v1"
    # A selected profile's provider wins over the top-level one, as in Codex.
    text = (home / "config.toml").read_text()
    (home / "config.toml").write_text('profile = "other"\n' + text)
    assert model_endpoint(env) == "https://spare.example/v1"
    (home / "config.toml").write_text('model_provider = "oss"\n')
    assert model_endpoint(env) is None  # a built-in provider whose address Codex keeps to itself
    (home / "config.toml").write_text("model = \n")
    assert model_endpoint(env) == "https://api.openai.com/v1"  # unreadable config: Codex's default


def test_model_endpoint_reads_the_home_of_the_environment_given(tmp_path):
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "config.toml").write_text(
        'model_provider = "x"\n[model_providers.x]\nbase_url = "http://127.0.0.1:1/v1"\n')
    assert model_endpoint({"HOME": str(tmp_path)}) == "http://127.0.0.1:1/v1"
    assert codex_provider().model_endpoint is model_endpoint


@pytest.mark.parametrize("enabled_plugins", [("codex",)])
def test_the_entry_point_registers_the_provider(kernel):
    assert kernel.provider("codex").binary == "codex"


def test_entry_point_module_is_thin():
    import subprocess
    import sys

    code = ("import sys, cao_provider_codex.plugin; "
            "print(sorted(m for m in sys.modules if m.startswith('cao_provider_codex')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['cao_provider_codex', 'cao_provider_codex.plugin']"


# -- merging -------------------------------------------------------------------------

keys = st.text(min_size=1, max_size=10)
scalars = (st.booleans() | st.integers(min_value=-(2**63), max_value=2**63 - 1)
           | st.floats(allow_nan=False) | st.text(max_size=30))
values = st.recursive(scalars,
                      lambda inner: st.lists(inner, max_size=4) | st.dictionaries(keys, inner, max_size=4),
                      max_leaves=12)


@given(st.dictionaries(keys, values, max_size=4), st.dictionaries(keys, values, max_size=4))
def test_merge_keeps_base_keys_and_takes_every_override(base, over):
    merged = merge(base, over)
    for name, value in over.items():
        if not isinstance(value, dict):
            assert merged[name] == value
    assert set(merged) == set(base) | set(over)


def test_mcp_entry_passes_codex_keys_only():
    entry = mcp_entry("s", {"command": "c", "type": "stdio", "timeout": 3, "enabled_tools": ["a"],
                            "cwd": "/x"})
    assert entry == {"command": "c", "enabled_tools": ["a"], "cwd": "/x", "tool_timeout_sec": 600.0,
                     "startup_timeout_sec": 30.0, "required": True}
    assert mcp_entry("s", {"command": "c", "required": False})["required"] is False


def test_caos_own_server_is_pre_approved_and_the_others_are_not(tmp_path, user_home):
    servers = {"cao": {"command": "/venv/bin/cao-mcp-server"}, "web": {"url": "http://127.0.0.1:1/mcp"},
               "strict": {"command": "/venv/bin/cao-mcp-server", "default_tools_approval_mode": "prompt"}}
    config = config_of(launch(context(tmp_path, mcp_servers=servers, cao_servers=("cao", "strict"))))
    modes = {name: table.get("default_tools_approval_mode") for name, table in config["mcp_servers"].items()}
    # An approval prompt on send_message would stall a delegation; the profile's own choice stands.
    assert modes == {"cao": "approve", "web": None, "strict": "prompt"}
