"""The launch plan built from agent profiles: program, flags, the private agent folder, and refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cao_hookspecs import AgentProfile, LaunchContext, Terminal
from cao_provider_omp.launch import BINARY, BINARY_ENV, launch, model_endpoint

TERMINAL = Terminal(id="0a1b2c3d", name="coder-1a2b", session_name="cao-test", provider="omp",
                    agent_profile="coder")


def _program(folder: Path, name: str) -> None:
    folder.mkdir(exist_ok=True)
    (folder / name).write_text("#!/bin/sh\n", encoding="utf-8")
    (folder / name).chmod(0o755)


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A HOME, and ``omp`` and ``bun`` on PATH (the plan only names them)."""
    folder = tmp_path / "bin"
    _program(folder, BINARY)
    _program(folder, "bun")
    for name in (BINARY_ENV, "PI_CODING_AGENT_DIR"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def context(tmp_path: Path, **fields) -> LaunchContext:
    fields.setdefault("profile", AgentProfile(name="coder"))
    return LaunchContext(terminal=TERMINAL, working_directory=str(tmp_path), runtime_dir=str(tmp_path / "rt"),
                         **fields)


def test_a_bare_profile_runs_in_yolo_mode_with_a_private_agent_folder(tmp_path, home):
    plan = launch(context(tmp_path))
    rt = tmp_path / "rt"
    assert list(plan.argv) == [str(tmp_path / "bin" / BINARY), "--approval-mode", "yolo", "--no-title",
                         "--config", str(rt / "cao-config.yml")]
    assert plan.env == {"PI_CODING_AGENT_DIR": str(rt / "omp-agent"), "CLAUDE_CONFIG_DIR": "",
                        "OTEL_SDK_DISABLED": "true"}
    settings = json.loads(plan.files["omp-agent/config.yml"])
    assert settings["setupVersion"] == 2 and settings["tools"] == {"xdev": False}
    assert settings["startup"]["checkUpdate"] is False and settings["mcp"] == {"enableProjectConfig": False}
    assert plan.files["cao-config.yml"] == plan.files["omp-agent/config.yml"]
    assert json.loads(plan.files["omp-agent/mcp.json"]) == {"mcpServers": {}}
    assert not home.exists()


def test_profile_fields_become_flags_files_and_the_extension(tmp_path, home):
    agent = home / ".omp" / "agent"
    agent.mkdir(parents=True)
    (agent / "config.yml").write_text("theme: dark\n", encoding="utf-8")
    (agent / "models.yml").write_text("providers:\n  mine:\n    baseUrl: http://127.0.0.1:9/v1\n",
                                      encoding="utf-8")
    profile = AgentProfile(name="coder", system_prompt="Be careful.", permission_mode="always-ask")
    servers = {"cao-mcp-server": {"command": "cao-mcp-server", "env": {"CAO_TERMINAL_ID": "0a1b2c3d"}},
               "other": {"command": "other"}}
    ctx = context(tmp_path, profile=profile, model="mine/m1", mcp_servers=servers,
                  allowed_tools=["fs_read", "@cao-mcp-server"],
                  env={"CAO_SIGNAL_COMMAND": json.dumps(["cao-signal", "--socket", "/s", "0a1b2c3d"])})
    plan = launch(ctx)
    rt = tmp_path / "rt"
    assert list(plan.argv[1:]) == ["--approval-mode", "always-ask", "--no-title", "--model", "mine/m1",
                             "--append-system-prompt", str(rt / "system-prompt.md"),
                             "--tools", "read,grep,ask,todo",
                             "--config", str(agent / "config.yml"), "--config", str(rt / "cao-config.yml"),
                             "--extension", str(rt / "cao-signals.ts")]
    assert plan.files["system-prompt.md"] == "Be careful.\n"
    # Only the servers the allowed tools keep, with cao's environment.
    assert json.loads(plan.files["omp-agent/mcp.json"]) == {"mcpServers": {"cao-mcp-server": {
        "type": "stdio", "command": "cao-mcp-server", "env": {"CAO_TERMINAL_ID": "0a1b2c3d"}}}}
    assert '["cao-signal", "--socket", "/s", "0a1b2c3d"]' in plan.files["cao-signals.ts"]
    # The user's model providers are linked, never copied or written.
    assert (rt / "omp-agent" / "models.yml").resolve() == agent / "models.yml"
    assert model_endpoint({"HOME": str(home)}) == "http://127.0.0.1:9/v1"


@pytest.mark.parametrize(("fields", "message"), [
    ({"profile": AgentProfile(name="coder", permission_mode="ask")}, "permissionMode 'ask'"),
    ({"allowed_tools": ["fs_read", "rm_rf"]}, "allowed tool 'rm_rf'"),
    ({"model": "--evil"}, "model '--evil'"),
])
def test_values_oh_my_pi_cannot_take_are_refused_by_name(tmp_path, home, fields, message):
    with pytest.raises(ValueError, match=message):
        launch(context(tmp_path, **fields))


def test_a_missing_bun_is_named(tmp_path, home):
    (tmp_path / "bin" / "bun").unlink()
    with pytest.raises(ValueError, match="runs on Bun"):
        launch(context(tmp_path))


def test_no_endpoint_without_a_models_file(home):
    assert model_endpoint({"HOME": str(home)}) is None
