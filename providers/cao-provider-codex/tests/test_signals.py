"""``notify`` in the private config and what its calls mean, without running Codex."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cao_hookspecs import AgentProfile, LaunchContext, StatusReport, Terminal, TerminalStatus
from cao_provider_codex.provider import codex_provider, launch
from cao_provider_codex.signals import native_signal

COMMAND = ["/venv/bin/python", "-I", "-S", "/x/signal_send.py", "--socket", "/h/runtime/signal.sock",
           "--terminal", "0123abcd"]


pytestmark = pytest.mark.usefixtures("fake_codex")


def context(tmp_path: Path, env: dict[str, str], profile: AgentProfile | None = None) -> LaunchContext:
    terminal = Terminal(id="0123abcd", name="dev-0001", session_name="cao-s", provider="codex",
                        agent_profile="dev")
    (tmp_path / "project").mkdir(exist_ok=True)
    return LaunchContext(terminal=terminal, profile=profile or AgentProfile(name="dev", provider="codex"),
                         working_directory=str(tmp_path / "project"), runtime_dir=str(tmp_path / "runtime"),
                         env=env)


def config_of(plan) -> dict:
    return tomllib.loads(plan.files["codex-home/config.toml"])


def test_the_kernels_signal_command_becomes_codexs_notify(tmp_path, user_home):
    (user_home / "config.toml").write_text('notify = ["notify-send", "codex"]\nmodel = "o3"\n')
    before = (user_home / "config.toml").read_bytes()
    profile = AgentProfile(name="dev", provider="codex", codex_config={"notify": ["their-own"]})
    plan = launch(context(tmp_path, {"CAO_SIGNAL_COMMAND": json.dumps(COMMAND)}, profile))
    config = config_of(plan)
    assert config["notify"] == [*COMMAND, "notify"]
    assert config["model"] == "o3"  # the rest of the user's config is kept
    assert (user_home / "config.toml").read_bytes() == before


def test_without_the_channel_the_users_notify_is_kept(tmp_path, user_home):
    (user_home / "config.toml").write_text('notify = ["notify-send", "codex"]\n')
    assert config_of(launch(context(tmp_path, {})))["notify"] == ["notify-send", "codex"]


@pytest.mark.parametrize("raw", ["not json", "[]", '"a string"', '["ok", 3]', '[""]', "{}"])
def test_a_malformed_signal_command_is_refused_naming_it(tmp_path, user_home, raw):
    with pytest.raises(ValueError, match="CAO_SIGNAL_COMMAND must be a JSON list"):
        launch(context(tmp_path, {"CAO_SIGNAL_COMMAND": raw}))


def test_turn_end_of_the_agent_is_completed_and_side_threads_are_not():
    done = {"type": "agent-turn-complete", "thread-id": "t", "turn-id": "u", "last-assistant-message": "42."}
    assert native_signal("notify", done) == StatusReport(status=TerminalStatus.COMPLETED,
                                                         evidence="agent-turn-complete")
    # The thread Codex starts to title the conversation ends while the agent is still working.
    title = {**done, "last-assistant-message": '{"title": "Answer question"}'}
    assert native_signal("notify", title) is None
    # An answer that merely looks like JSON is still the agent's answer.
    looks_like_json = {**done, "last-assistant-message": '{"title": "x", "body": 1}'}
    assert native_signal("notify", looks_like_json) is not None
    assert native_signal("notify", {**done, "last-assistant-message": "{not json"}) is not None
    assert native_signal("notify", {"type": "approval-requested"}) is None
    assert native_signal("Stop", done) is None


def test_the_provider_declares_its_native_status():
    spec = codex_provider()
    assert spec.native_signal is native_signal and spec.capabilities.native_status


payloads = st.dictionaries(st.text(max_size=20), st.none() | st.booleans() | st.integers() | st.floats()
                           | st.text(max_size=200) | st.just('{"title": "t"}'), max_size=8)


@given(event=st.text(max_size=30) | st.just("notify"),
       payload=payloads | payloads.map(lambda p: {**p, "type": "agent-turn-complete"}))
def test_any_call_is_mapped_without_raising(event, payload):
    report = native_signal(event, payload)
    assert report is None or (report.status == TerminalStatus.COMPLETED and event == "notify")
