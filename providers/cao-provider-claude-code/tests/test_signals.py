"""The hooks written for the kernel's signal command and what each hook event means."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cao_hookspecs import AgentProfile, LaunchContext, StatusReport, Terminal, TerminalStatus
from cao_provider_claude_code.launch import launch
from cao_provider_claude_code.provider import claude_code_provider
from cao_provider_claude_code.signals import native_answer, native_signal

COMMAND = ["/venv/bin/python", "-I", "-S", "/x/signal_send.py", "--socket", "/h/runtime/signal.sock",
           "--terminal", "0123abcd"]


@pytest.fixture
def user(tmp_path, monkeypatch):
    """A user machine with settings of their own, and a program standing in for the CLI."""
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "say done"}]}]}}))
    program = tmp_path / "bin" / "claude"
    program.parent.mkdir()
    program.write_text("#!/bin/sh\nexit 0\n")
    program.chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.setenv("CAO_CLAUDE_CODE_BIN", str(program))
    monkeypatch.setenv("IS_SANDBOX", "1")
    return home


def context(tmp_path: Path, env: dict[str, str]) -> LaunchContext:
    terminal = Terminal(id="0123abcd", name="dev-1a2b", session_name="cao-x", provider="claude_code",
                        agent_profile="dev")
    (tmp_path / "work").mkdir(exist_ok=True)
    return LaunchContext(terminal=terminal, profile=AgentProfile(name="dev"),
                         working_directory=str(tmp_path / "work"), runtime_dir=str(tmp_path / "runtime"),
                         env=env)


def test_hooks_run_the_signal_command_from_a_settings_file_of_the_runtime_folder(tmp_path, user):
    before = (user / ".claude" / "settings.json").read_bytes()
    plan = launch(context(tmp_path, {"CAO_SIGNAL_COMMAND": json.dumps(COMMAND)}))
    settings_path = tmp_path / "runtime" / "cao-hooks.json"
    assert plan.argv[-2:] == ("--settings", str(settings_path))
    hooks = json.loads(plan.files["cao-hooks.json"])["hooks"]
    assert set(hooks) == {"UserPromptSubmit", "Stop", "StopFailure", "Notification"}
    for event, [matcher] in hooks.items():
        [hook] = matcher["hooks"]
        # Exec form: the program and its arguments, no shell; the hook input arrives on stdin.
        assert hook == {"type": "command", "command": COMMAND[0],
                        "args": [*COMMAND[1:], "--stdin", event], "timeout": 5}
    assert hooks["Notification"][0]["matcher"] == "permission_prompt|elicitation_dialog"
    # The user's own hooks stay where they are, untouched; the private copy keeps them too.
    assert (user / ".claude" / "settings.json").read_bytes() == before
    assert json.loads(plan.files["claude-config/settings.json"])["hooks"]["Stop"]


def test_without_the_channel_there_is_no_settings_file(tmp_path, user):
    plan = launch(context(tmp_path, {}))
    assert "--settings" not in plan.argv and "cao-hooks.json" not in plan.files


@pytest.mark.parametrize("raw", ["not json", "[]", '"a string"', '["ok", 3]', '[""]'])
def test_a_malformed_signal_command_is_refused_naming_it(tmp_path, user, raw):
    with pytest.raises(ValueError, match="CAO_SIGNAL_COMMAND must be a JSON list"):
        launch(context(tmp_path, {"CAO_SIGNAL_COMMAND": raw}))


@pytest.mark.parametrize(("event", "payload", "expected"), [
    ("UserPromptSubmit", {"prompt": "Build it."}, StatusReport(status="processing")),
    ("Stop", {"stop_hook_active": False}, StatusReport(status="completed")),
    ("StopFailure", {"error": "rate_limit"}, StatusReport(status="error", evidence="rate_limit")),
    ("StopFailure", {}, StatusReport(status="error")),
    ("Notification", {"notification_type": "permission_prompt"},
     StatusReport(status="waiting_user_answer", evidence="permission_prompt")),
    ("Notification", {"notification_type": "elicitation_dialog"},
     StatusReport(status="waiting_user_answer", evidence="elicitation_dialog")),
    ("Notification", {"notification_type": "idle_prompt"}, None),
    ("Notification", {}, None),
    ("SessionStart", {"source": "startup"}, None),
])
def test_each_hook_event_means_one_status(event, payload, expected):
    assert native_signal(event, payload) == expected


def test_the_provider_declares_its_native_status():
    spec = claude_code_provider()
    assert spec.native_signal is native_signal and spec.capabilities.native_status
    assert spec.native_answer is native_answer


@pytest.mark.parametrize(("event", "payload", "expected"), [
    ("Stop", {"last_assistant_message": "**Done**: two files."}, "**Done**: two files."),
    ("Stop", {"last_assistant_message": "  "}, None),
    ("Stop", {}, None),
    ("Stop", {"last_assistant_message": 3}, None),
    ("StopFailure", {"last_assistant_message": "partial"}, None),
    ("UserPromptSubmit", {"last_assistant_message": "old"}, None),
])
def test_the_stop_hook_carries_the_turns_answer(event, payload, expected):
    assert native_answer(event, payload) == expected


@given(event=st.text(max_size=30)
       | st.sampled_from(["Stop", "StopFailure", "Notification", "UserPromptSubmit"]),
       payload=st.dictionaries(st.text(max_size=20), st.none() | st.booleans() | st.integers() | st.floats()
                               | st.text(max_size=300), max_size=8))
def test_any_event_and_payload_are_mapped_without_raising(event, payload):
    report = native_signal(event, payload)
    assert report is None or report.status != TerminalStatus.UNKNOWN
    if report is not None:
        assert len(report.evidence) <= 200
