"""The launch plan built from a profile: command line, files, environment, the user's files untouched."""

from __future__ import annotations

import json
import os
import tomllib
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_hookspecs import AgentProfile
from cao_provider_kimi_cli.launch import (
    INSTALL_HINT,
    NATIVE_TOOLS,
    agent_spec,
    installed_version,
    launch,
    tool_policy,
    yaml_text,
)
from cao_provider_kimi_cli.provider import kimi_cli_provider, model_endpoint
from cao_testkit.files import file_bytes
from cao_testkit.launching import launch_context, user_machine

USER_CONFIG = """\
default_model = "k2"
theme = "light"

[providers.moonshot]
type = "kimi"
base_url = "https://api.moonshot.example/v1"
api_key = "users-own-key"

[models.k2]
provider = "moonshot"
model = "kimi-k2-0905"
max_context_size = 262144
display_name = "Kimi K2"

[loop_control]
max_steps_per_turn = 40
"""


def fake_kimi(root: Path, version: str) -> Path:
    """A kimi-cli install as uv tool / pipx / a venv lays it out: the program and the package metadata."""
    program = root / "bin" / "kimi"
    program.parent.mkdir(parents=True)
    program.write_text(f"#!/bin/sh\necho 'kimi, version {version}'\n")
    program.chmod(0o755)
    metadata = root / "lib" / "python3.13" / "site-packages" / f"kimi_cli-{version}.dist-info" / "METADATA"
    metadata.parent.mkdir(parents=True)
    metadata.write_text(f"Metadata-Version: 2.3\nName: kimi-cli\nVersion: {version}\n\nThe CLI.\n")
    return program


@pytest.fixture
def user_home(tmp_path, monkeypatch):
    """A user machine: HOME with a Kimi share folder (config, sign-in, plugins) and kimi-cli 1.51.0."""
    home = tmp_path / "home"
    share = home / ".kimi"
    (share / "credentials").mkdir(parents=True)
    (share / "credentials" / "kimi-code.json").write_text('{"token": "users-own"}')
    (share / "plugins").mkdir()
    (share / "device_id").write_text("device-1")
    (share / "config.toml").write_text(USER_CONFIG)
    (share / "sessions").mkdir()
    program = fake_kimi(tmp_path / "kimi-env", "1.51.0")
    user_machine(monkeypatch, home, binary_env="CAO_KIMI_CLI_BIN", program=program,
                 leaky=("KIMI_", "OPENAI_"))
    return home


def ctx(tmp_path, profile=None, **kw):
    return launch_context(tmp_path, "kimi_cli", profile, **kw)


def test_full_profile_becomes_the_command_line(user_home, tmp_path):
    profile = AgentProfile(name="dev", system_prompt="  You write code.\n", allowed_tools=("fs_read", "@cao"))
    servers = {
        "cao": {"type": "stdio", "command": "/venv/bin/cao-mcp-server", "args": [],
                "env": {"CAO_TERMINAL_ID": "0123abcd", "CAO_API_PORT": "9889"}},
        "other": {"command": "other-server"},
    }
    c = ctx(tmp_path, profile, model="k2", mcp_servers=servers, allowed_tools=profile.allowed_tools)
    plan = launch(c)
    runtime = Path(c.runtime_dir)
    assert plan.argv == (
        os.environ["CAO_KIMI_CLI_BIN"], "--yolo", "--model", "k2",
        "--agent-file", str(runtime / "kimi-agent.yaml"),
        "--mcp-config-file", str(runtime / "kimi-mcp.json"),
    )
    spec = yaml.safe_load(plan.files["kimi-agent.yaml"])
    assert spec["version"] == 1
    assert spec["agent"]["extend"] == "default"
    assert spec["agent"]["system_prompt_args"] == {"ROLE_ADDITIONAL": "You write code."}
    excluded = set(spec["agent"]["exclude_tools"])
    assert "kimi_cli.tools.shell:Shell" in excluded and "kimi_cli.tools.agent:Agent" in excluded
    assert not excluded & set(NATIVE_TOOLS["fs_read"])
    # Only the allowed MCP server, with the environment cao-mcp-server needs in its own entry.
    assert json.loads(plan.files["kimi-mcp.json"]) == {"mcpServers": {"cao": {
        "transport": "stdio", "command": "/venv/bin/cao-mcp-server", "args": [],
        "env": {"CAO_TERMINAL_ID": "0123abcd", "CAO_API_PORT": "9889"}}}}
    assert plan.env == {"KIMI_SHARE_DIR": str(runtime / "kimi-share"), "KIMI_CLI_NO_AUTO_UPDATE": "1"}


def test_private_share_folder_keeps_the_users_settings_and_never_writes_them(user_home, tmp_path):
    before = file_bytes(user_home)
    settings = {"loop_control": {"max_retries_per_step": 5}, "theme": "dark"}
    c = ctx(tmp_path, AgentProfile(name="dev", extra={"kimiConfig": settings}))
    plan = launch(c)
    config = tomllib.loads(plan.files["kimi-share/config.toml"])
    # The user's providers and models are kept; the profile's settings win; cao's own go on top.
    assert config["providers"]["moonshot"]["api_key"] == "users-own-key"
    assert config["default_model"] == "k2"
    assert config["loop_control"] == {"max_steps_per_turn": 40, "max_retries_per_step": 5}
    assert config["theme"] == "dark"
    assert config["mcp"]["client"]["tool_call_timeout_ms"] == 600_000
    private = Path(c.runtime_dir) / "kimi-share"
    linked = {p.name: os.readlink(p) for p in private.iterdir() if p.is_symlink()}
    share = user_home / ".kimi"
    assert linked == {"credentials": str(share / "credentials"), "device_id": str(share / "device_id"),
                      "plugins": str(share / "plugins")}
    assert not (private / "sessions").exists()
    assert file_bytes(user_home) == before


def test_kimi_share_dir_names_the_users_folder(user_home, tmp_path, monkeypatch):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "config.toml").write_text('default_model = ""\ntelemetry = false\n')
    monkeypatch.setenv("KIMI_SHARE_DIR", str(elsewhere))
    c = ctx(tmp_path)
    plan = launch(c)
    assert tomllib.loads(plan.files["kimi-share/config.toml"])["telemetry"] is False
    assert plan.env["KIMI_SHARE_DIR"] == str(Path(c.runtime_dir) / "kimi-share")


def test_no_profile_runs_kimis_default_agent_in_yolo_mode(user_home, tmp_path):
    plan = launch(ctx(tmp_path))
    assert plan.argv == (os.environ["CAO_KIMI_CLI_BIN"], "--yolo")
    assert set(plan.files) == {"kimi-share/config.toml"}


@pytest.mark.parametrize(("mode", "yolo", "flags"), [
    ("default", False, ()), ("default", True, ("--yolo",)), ("plan", False, ("--plan",)),
    ("afk", False, ("--afk",)), ("bypassPermissions", False, ("--yolo",)),
    ("plan", True, ("--plan", "--yolo")),
])
def test_permission_modes(user_home, tmp_path, mode, yolo, flags):
    plan = launch(ctx(tmp_path, AgentProfile(name="dev", permission_mode=mode), yolo=yolo))
    assert plan.argv[1:] == flags


def test_an_unknown_permission_mode_is_refused_by_name(user_home, tmp_path):
    with pytest.raises(ValueError, match=r"permissionMode 'acceptEdits' is not supported by Kimi CLI"):
        launch(ctx(tmp_path, AgentProfile(name="dev", permission_mode="acceptEdits")))


@pytest.mark.parametrize(("requested", "alias", "added"), [
    ("k2", "k2", None),                      # an entry of the config
    ("kimi-k2-0905", "k2", None),            # the model of an entry
    ("kimi-k2-turbo", "kimi-k2-turbo", {"provider": "moonshot", "model": "kimi-k2-turbo",
                                        "max_context_size": 262144}),   # a new entry on the default provider
])
def test_model_names_become_config_entries(user_home, tmp_path, requested, alias, added):
    plan = launch(ctx(tmp_path, model=requested))
    assert plan.argv[-2:] == ("--model", alias)
    config = tomllib.loads(plan.files["kimi-share/config.toml"])
    if added is not None:
        assert config["models"][alias] == added


def test_without_a_configured_model_the_name_goes_to_kimis_environment(user_home, tmp_path):
    (user_home / ".kimi" / "config.toml").unlink()
    plan = launch(ctx(tmp_path, model="kimi-k2-turbo"))
    assert "--model" not in plan.argv
    assert plan.env["KIMI_MODEL_NAME"] == "kimi-k2-turbo"


@pytest.mark.parametrize(("profile", "problem"), [
    (AgentProfile(name="dev", extra={"kimiConfig": "fast"}), "kimiConfig must be a table"),
    (AgentProfile(name="dev", extra={"kimiConfig": {"mcp": 3}}), "'mcp' must be a table"),
    (AgentProfile(name="dev", allowed_tools=("Bash(git *)",)),
     r"allowed tool 'Bash\(git \*\)' means nothing"),
])
def test_bad_profile_values_are_refused_naming_the_key(user_home, tmp_path, profile, problem):
    with pytest.raises(ValueError, match=problem):
        launch(ctx(tmp_path, profile, allowed_tools=profile.allowed_tools))


@pytest.mark.parametrize(("servers", "problem"), [
    ({"bad name!": {"command": "x"}}, "MCP server name 'bad name!'"),
    ({"s": {"args": ["x"]}}, "needs a 'command' to run or a 'url'"),
    ({"s": {"command": "x", "args": "x y"}}, "'args' must be a list"),
    ({"s": {"command": "x", "type": "http"}}, "must be of type stdio"),
    ({"s": "cao-mcp-server"}, "expected a table"),
])
def test_bad_mcp_entries_are_refused_naming_the_server(user_home, tmp_path, servers, problem):
    with pytest.raises(ValueError, match=problem):
        launch(ctx(tmp_path, mcp_servers=servers))


def test_a_remote_mcp_server_keeps_its_transport(user_home, tmp_path):
    plan = launch(ctx(tmp_path, mcp_servers={"docs": {"type": "http", "url": "http://127.0.0.1:1/mcp"}}))
    assert json.loads(plan.files["kimi-mcp.json"])["mcpServers"]["docs"] == {
        "transport": "http", "url": "http://127.0.0.1:1/mcp"}


def test_a_broken_user_config_is_an_error_naming_the_file(user_home, tmp_path):
    (user_home / ".kimi" / "config.toml").write_text("default_model = [unclosed\n")
    with pytest.raises(ValueError, match=r"the Kimi CLI config .*config\.toml is not valid TOML"):
        launch(ctx(tmp_path))


# -- the program ---------------------------------------------------------------------------------------


def test_missing_program_names_the_install_command(user_home, tmp_path, monkeypatch):
    monkeypatch.delenv("CAO_KIMI_CLI_BIN")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(ValueError, match=r"Kimi CLI \('kimi'\) is not on PATH; install it with: uv tool"):
        launch(ctx(tmp_path))


def test_a_binary_override_must_be_executable(user_home, tmp_path, monkeypatch):
    monkeypatch.setenv("CAO_KIMI_CLI_BIN", str(tmp_path / "nothing-here"))
    with pytest.raises(ValueError, match="CAO_KIMI_CLI_BIN=.* is not an executable file"):
        launch(ctx(tmp_path))


def test_kimi_on_path_is_found_through_its_symlink(user_home, tmp_path, monkeypatch):
    """uv tool and pipx put a symlink on PATH; the version is read from the environment behind it."""
    program = fake_kimi(tmp_path / "tool-env", "1.50.0")
    bin_dir = tmp_path / "local-bin"
    bin_dir.mkdir()
    (bin_dir / "kimi").symlink_to(program)
    monkeypatch.delenv("CAO_KIMI_CLI_BIN")
    monkeypatch.setenv("PATH", str(bin_dir))
    assert installed_version(str(bin_dir / "kimi")) == "1.50.0"
    assert launch(ctx(tmp_path)).argv[0] == str(bin_dir / "kimi")


def test_the_archived_stub_release_is_refused(user_home, tmp_path, monkeypatch):
    monkeypatch.setenv("CAO_KIMI_CLI_BIN", str(fake_kimi(tmp_path / "stub-env", "1.52.0")))
    with pytest.raises(ValueError, match=rf"kimi-cli 1\.52\.0, a release that is no longer the CLI.*"
                                         rf"{INSTALL_HINT}"):
        launch(ctx(tmp_path))


def test_a_program_without_metadata_is_asked_for_its_version(tmp_path):
    program = tmp_path / "kimi"
    program.write_text("#!/bin/sh\necho 'kimi, version 1.49.0'\n")
    program.chmod(0o755)
    assert installed_version(str(program)) == "1.49.0"


# -- tools ----------------------------------------------------------------------------------------------


def test_unrestricted_tools_exclude_nothing():
    assert tool_policy(None, ["a", "b"]) == ([], ["a", "b"])
    assert tool_policy(["*"], ["a"]) == ([], ["a"])
    assert tool_policy(["@builtin", "@a"], ["a", "b"]) == ([], ["a"])


def test_categories_and_kimi_tool_names():
    excluded, kept = tool_policy(["fs_*", "Shell", "discovery"], [])
    assert kept == []
    assert set(excluded) == {*NATIVE_TOOLS["web_fetch"], *NATIVE_TOOLS["execute_bash"][1:],
                             "kimi_cli.tools.agent:Agent"}


@given(st.lists(st.sampled_from(["execute_bash", "fs_read", "fs_list", "fs_write", "fs_*", "web_fetch",
                                 "@builtin", "@cao", "@docs", "ReadFile", "Shell", "discovery", " fs_read "]),
                max_size=8))
def test_allowed_tools_are_never_excluded(allowed):
    excluded, kept = tool_policy(allowed, ["cao", "docs", "other"])
    items = {item.strip() for item in allowed}
    categories = {c for c in NATIVE_TOOLS if c in items or (c.startswith("fs_") and "fs_*" in items)}
    for category in categories:
        assert not set(NATIVE_TOOLS[category]) & set(excluded)
    assert "other" not in kept
    assert set(kept) == {s for s in ("cao", "docs") if f"@{s}" in items}
    if "@builtin" in items:
        assert excluded == []


# -- files Kimi reads -------------------------------------------------------------------------------------

any_text = st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=200)


@settings(max_examples=200)
@given(prompt=any_text, tools=st.lists(any_text, max_size=3))
def test_agent_files_read_back_unchanged_as_yaml(prompt, tools):
    """Kimi reads agent specs with a YAML parser; the JSON cao writes must come back exactly."""
    spec = agent_spec(prompt, tools)
    if spec is None:
        assert not prompt.strip() and not tools
        return
    assert yaml.safe_load(yaml_text(spec)) == spec


# -- the model endpoint -----------------------------------------------------------------------------------


def test_model_endpoint_follows_kimis_own_rules(user_home):
    home = {"HOME": str(user_home)}
    assert model_endpoint(home) == "https://api.moonshot.example/v1"
    assert model_endpoint({**home, "KIMI_BASE_URL": "http://127.0.0.1:8000/v1"}) == "http://127.0.0.1:8000/v1"
    # OPENAI_BASE_URL applies to the OpenAI provider types only.
    openai = {**home, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    assert model_endpoint(openai) == "https://api.moonshot.example/v1"


def test_model_endpoint_without_a_model_is_kimis_environment_set_up(tmp_path):
    assert model_endpoint({"HOME": str(tmp_path)}) is None
    env_only = {"HOME": str(tmp_path), "KIMI_BASE_URL": "https://api.example/v1"}
    assert model_endpoint(env_only) == "https://api.example/v1"
    broken = tmp_path / ".kimi"
    broken.mkdir()
    (broken / "config.toml").write_text("this is = = not toml")
    assert model_endpoint({"HOME": str(tmp_path)}) is None


def test_openai_provider_types_take_openai_base_url(tmp_path):
    share = tmp_path / "share"
    share.mkdir()
    (share / "config.toml").write_text(
        'default_model = "m"\n[providers.p]\ntype = "openai_responses"\nbase_url = "http://127.0.0.1:1/v1"\n'
        'api_key = "k"\n[models.m]\nprovider = "p"\nmodel = "m"\nmax_context_size = 1000\n')
    env = {"KIMI_SHARE_DIR": str(share)}
    assert model_endpoint(env) == "http://127.0.0.1:1/v1"
    assert model_endpoint({**env, "OPENAI_BASE_URL": "http://127.0.0.1:2/v1"}) == "http://127.0.0.1:2/v1"


def test_the_provider_record():
    spec = kimi_cli_provider()
    assert spec.name == "kimi_cli" and spec.binary == "kimi" and spec.binary_env == "CAO_KIMI_CLI_BIN"
    assert spec.exit_command == "/exit"
    assert spec.install_hint == INSTALL_HINT == "uv tool install kimi-cli==1.51.0"
    assert spec.model_endpoint is model_endpoint
