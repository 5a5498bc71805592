"""The launch plan built from agent profiles: program, first message, private data folder, the MCP
plugin, and refusals."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from cao_hookspecs import AgentProfile, LaunchContext, Terminal
from cao_provider_mcode.launch import BINARY, BINARY_ENV, launch, model_endpoint

TERMINAL = Terminal(id="0a1b2c3d", name="coder-1a2b", session_name="cao-test",
                    provider="mcode", agent_profile="coder")
PLUGIN = "minimax-data/plugins/cao-terminal"


def context(tmp_path: Path, **fields) -> LaunchContext:
    fields.setdefault("profile", AgentProfile(name="coder"))
    fields.setdefault("env", {"HOME": str(tmp_path / "home")})
    return LaunchContext(terminal=TERMINAL, working_directory=str(tmp_path), runtime_dir=str(tmp_path / "rt"),
                         **fields)


@pytest.fixture(autouse=True)
def cli_on_path(cli_bin, monkeypatch):
    monkeypatch.delenv(BINARY_ENV, raising=False)
    monkeypatch.delenv("MINIMAX_DATA_DIR", raising=False)
    monkeypatch.setenv("PATH", str(cli_bin))


def test_bare_profile_runs_with_a_private_data_folder(tmp_path, cli_bin):
    plan = launch(context(tmp_path))
    assert plan.argv == (str(cli_bin / BINARY),)
    assert dict(plan.env) == {"MINIMAX_DATA_DIR": str(tmp_path / "rt" / "minimax-data")}
    assert dict(plan.files) == {}


def test_the_profile_body_is_the_first_message(tmp_path):
    plan = launch(context(tmp_path, profile=AgentProfile(name="coder", system_prompt="  You review code.\n")))
    assert plan.argv[1].startswith("You review code.\n\n")
    assert "reply with one word, Understood" in plan.argv[1]


def test_sign_in_and_config_are_linked_never_copied(tmp_path):
    user = tmp_path / "home" / ".minimax"
    (user / "cli-auth").mkdir(parents=True)
    (user / "config.yaml").write_text("theme: dark\n", encoding="utf-8")
    launch(context(tmp_path))
    private = tmp_path / "rt" / "minimax-data"
    assert (private / "cli-auth").resolve() == (user / "cli-auth").resolve()
    assert (private / "config.yaml").is_symlink()
    assert not (private / "local-runtime.auth.json").exists()


def test_a_model_goes_into_a_private_copy_of_the_config(tmp_path):
    user = tmp_path / "home" / ".minimax"
    user.mkdir(parents=True)
    (user / "config.yaml").write_text("theme: dark\ndefaultModel: old\n", encoding="utf-8")
    plan = launch(context(tmp_path, model="MiniMax-M3"))
    written = yaml.safe_load(plan.files["minimax-data/config.yaml"])
    assert written == {"theme": "dark", "defaultModel": "MiniMax-M3"}
    assert not (tmp_path / "rt" / "minimax-data" / "config.yaml").exists()  # written by the kernel
    assert (user / "config.yaml").read_text(encoding="utf-8") == "theme: dark\ndefaultModel: old\n"
    with pytest.raises(ValueError, match="not a model name"):
        launch(context(tmp_path, model="--yolo"))


def test_mcp_servers_become_a_plugin(tmp_path):
    env = {"CAO_TERMINAL_ID": TERMINAL.id}
    servers = {"cao-mcp-server": {"command": "/opt/cao/bin/cao-mcp-server", "args": ["--x"], "env": env},
               "docs": {"type": "http", "url": "https://example.invalid/mcp", "headers": {"A": "b"}}}
    plan = launch(context(tmp_path, mcp_servers=servers))
    manifest = json.loads(plan.files[f"{PLUGIN}/.minimax-plugin/plugin.json"])
    assert manifest["mcpServers"] == ["servers.mcp.json"]
    listing = json.loads(plan.files[f"{PLUGIN}/servers.mcp.json"])["mcpServers"]
    cao = listing["cao-mcp-server"]
    assert (cao["type"], cao["command"], cao["args"], cao["timeout"]) == ("stdio", "cao-mcp-server", ["--x"],
                                                                         600_000)
    assert cao["env"]["CAO_TERMINAL_ID"] == TERMINAL.id
    assert cao["env"]["PATH"].split(":")[0] == "/opt/cao/bin"
    assert listing["docs"] == {"type": "streamable-http", "url": "https://example.invalid/mcp",
                               "headers": {"A": "b"}, "timeout": 600_000}


@pytest.mark.parametrize("servers, problem", [
    ({"Bad Name": {"command": "x"}}, "lowercase words"),
    ({"ok": {"command": "bin/x"}}, "program name or an absolute path"),
    ({"ok": {"type": "ws", "url": "ws://x"}}, "type http or sse"),
])
def test_unusable_mcp_servers_are_refused(tmp_path, servers, problem):
    with pytest.raises(ValueError, match=problem):
        launch(context(tmp_path, mcp_servers=servers))


def test_a_tool_restriction_is_refused_unless_yolo(tmp_path):
    with pytest.raises(ValueError, match=r"allowedTools .*no option that limits its tools"):
        launch(context(tmp_path, allowed_tools=("fs_read", "@cao-mcp-server")))
    assert launch(context(tmp_path, allowed_tools=("fs_read",), yolo=True))
    assert launch(context(tmp_path, allowed_tools=("*",)))


def test_a_missing_program_is_refused_with_the_install_hint(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(ValueError, match=re.escape("npm install -g @minimax-ai/code")):
        launch(context(tmp_path))


def test_model_endpoint_is_unknown():
    assert model_endpoint({"ANTHROPIC_BASE_URL": "http://127.0.0.1:8080"}) is None
