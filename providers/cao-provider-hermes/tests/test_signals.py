"""Hermes's hook payloads, relayed flat to the signal command, and the statuses and answers they mean."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cao_hookspecs import TerminalStatus
from cao_provider_hermes.signals import hooks, native_answer, native_signal

# A post_llm_call payload as Hermes 0.19.0 writes it (its shape recorded from a run, shortened).
POST = {"hook_event_name": "post_llm_call", "tool_name": None, "tool_input": None,
        "session_id": "20261128_131029_ba2dd9", "cwd": "/w",
        "extra": {"task_id": "t", "turn_id": "t:1", "user_message": "Say pong please",
                  "assistant_response": "PONG **42**\n\n- done", "conversation_history": [{"role": "user"}],
                  "model": "scripted", "platform": "cli"}}


def _relayed(tmp_path: Path, stdin: str, event: str = "post_llm_call") -> dict:
    """What the relay hands the signal command: a stand-in command writes its arguments to a file."""
    out = tmp_path / "argv.json"
    fake = tmp_path / "fake.py"
    fake.write_text(f"import json, sys\nopen({str(out)!r}, 'w').write(json.dumps(sys.argv[1:]))\n")
    hook = hooks([sys.executable, str(fake)])[event][0]["command"]
    import shlex

    done = subprocess.run(shlex.split(hook), input=stdin, capture_output=True, text=True,
                          timeout=20, check=False)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    argv = json.loads(out.read_text())
    assert argv[0] == event
    return json.loads(argv[1])


def test_the_relay_lifts_the_answer_and_the_turn_out_of_extra(tmp_path):
    flat = _relayed(tmp_path, json.dumps(POST))
    assert flat == {"hook_event_name": "post_llm_call", "session_id": "20261128_131029_ba2dd9",
                    "platform": "cli", "turn_id": "t:1", "model": "scripted",
                    "last_assistant_message": "PONG **42**\n\n- done"}
    assert native_answer("post_llm_call", flat) == "PONG **42**\n\n- done"
    assert native_signal("post_llm_call", flat).status == TerminalStatus.COMPLETED


@pytest.mark.parametrize("stdin", ["not json", "[1, 2]", "", json.dumps({"extra": "x"})])
def test_the_relay_sends_an_empty_payload_for_what_it_cannot_read(tmp_path, stdin):
    assert _relayed(tmp_path, stdin) == {}


def test_a_subagents_turn_says_nothing_about_this_terminal():
    sub = {"platform": "subagent", "last_assistant_message": "child's answer"}
    assert native_signal("post_llm_call", sub) is None
    assert native_answer("post_llm_call", sub) is None
    assert native_signal("pre_llm_call", sub) is None


def test_events_map_exactly():
    assert native_signal("pre_llm_call", {"platform": "cli"}).status == TerminalStatus.PROCESSING
    assert native_signal("on_session_end", {"completed": True}) is None
    assert native_answer("pre_llm_call", {"last_assistant_message": "x"}) is None
    assert native_answer("post_llm_call", {"last_assistant_message": "  "}) is None
