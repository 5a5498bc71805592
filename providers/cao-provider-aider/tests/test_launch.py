"""The launch plan built from a profile: Aider's flags, files in the runtime folder, refusals by name."""

from __future__ import annotations

import json

import pytest

from cao_hookspecs import AgentProfile, LaunchContext, Terminal
from cao_provider_aider.launch import launch, model_endpoint


def _program(tmp_path):
    program = tmp_path / "aider"
    program.write_text("#!/bin/sh\n")
    program.chmod(0o755)
    return str(program)


def _ctx(tmp_path, **fields) -> LaunchContext:
    profile = fields.pop("profile", AgentProfile(name="dev", system_prompt="Be brief."))
    fields.setdefault("env", {"CAO_AIDER_BIN": _program(tmp_path)})
    return LaunchContext(terminal=Terminal(id="t1", name="dev", session_name="s", provider="aider",
                                           agent_profile="dev", working_directory=str(tmp_path)),
                         profile=profile, working_directory=str(tmp_path), runtime_dir=str(tmp_path / "rt"),
                         **fields)


def test_the_profile_becomes_flags_and_files(tmp_path):
    plan = launch(_ctx(tmp_path, model="openai/scripted"))
    argv = list(plan.argv)
    assert argv[0] == str(tmp_path / "aider")
    for flag in ("--no-check-update", "--no-show-release-notes", "--no-analytics", "--no-gitignore",
                 "--no-auto-commits", "--no-detect-urls", "--no-git"):
        assert flag in argv
    assert argv[argv.index("--read") + 1] == str(tmp_path / "rt" / "system-prompt.md")
    assert plan.files["system-prompt.md"] == "Be brief.\n"
    assert "openai/scripted" in json.loads(plan.files["model-metadata.json"])
    assert "--yes-always" not in argv and "--notifications-command" not in argv


def test_yolo_answers_every_question_and_reports_turn_ends(tmp_path):
    env = {"CAO_AIDER_BIN": _program(tmp_path), "CAO_SIGNAL_COMMAND": json.dumps(["/bin/sig", "t1"])}
    argv = list(launch(_ctx(tmp_path, yolo=True, env=env)).argv)
    assert "--yes-always" in argv
    assert argv[argv.index("--notifications-command") + 1] == "/bin/sig t1 turn_end"


def test_allowed_tools_switch_off_shell_and_edits_and_refuse_the_rest(tmp_path):
    argv = list(launch(_ctx(tmp_path, allowed_tools=("fs_read",))).argv)
    assert "--no-suggest-shell-commands" in argv and argv[argv.index("--chat-mode") + 1] == "ask"
    with pytest.raises(ValueError, match="allowedTools.*web_fetch"):
        launch(_ctx(tmp_path, allowed_tools=("web_fetch",)))


def test_mcp_servers_other_than_caos_are_refused(tmp_path):
    cao = {"cao": {"command": "cao-mcp-server", "env": {}}}
    assert "cao" not in " ".join(launch(_ctx(tmp_path, mcp_servers=cao, cao_servers=("cao",))).argv)
    with pytest.raises(ValueError, match="no MCP client.*'github'"):
        launch(_ctx(tmp_path, mcp_servers={"github": {"command": "gh-mcp"}}))


def test_the_model_endpoint_comes_from_the_environment():
    assert model_endpoint({"OPENAI_API_BASE": "http://127.0.0.1:9/v1"}) == "http://127.0.0.1:9/v1"
    assert model_endpoint({"OPENAI_API_KEY": "k"}) == "https://api.openai.com/v1"
    assert model_endpoint({}) is None
