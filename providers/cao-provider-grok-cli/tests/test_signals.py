"""Grok's hook events as cao's native signals, and the hooks written into its private config."""

from __future__ import annotations

import shlex

from cao_hookspecs import TerminalStatus
from cao_provider_grok_cli.signals import hook_config, native_answer, native_signal

TURN = {"promptId": "p-1", "sessionId": "s-1"}


def test_turn_events_map_to_statuses():
    assert native_signal("UserPromptSubmit", TURN).status == TerminalStatus.PROCESSING
    done = native_signal("Stop", {**TURN, "lastAssistantMessage": "Done."})
    assert done.status == TerminalStatus.COMPLETED
    failed = native_signal("StopFailure", {**TURN, "error": "invalid_request",
                                           "errorDetails": "400: too long"})
    assert (failed.status, failed.evidence) == (TerminalStatus.ERROR, "400: too long")
    assert native_signal("PreToolUse", TURN) is None


def test_session_and_subagent_events_say_nothing_about_the_turn():
    assert native_signal("Stop", {"sessionId": "s-1"}) is None  # the session-end Stop
    assert native_signal("Stop", {**TURN, "subagentType": "explore"}) is None
    assert native_answer("Stop", {"sessionId": "s-1", "lastAssistantMessage": "bye"}) is None


def test_the_answer_is_taken_whole_as_the_signal_command_sends_it():
    assert native_answer("Stop", {**TURN, "lastAssistantMessage": "- a\n- b"}) == "- a\n- b"
    # The signal command keeps this key whole (or leaves it out): a long answer is an answer.
    assert native_answer("Stop", {**TURN, "lastAssistantMessage": "x" * 5000}) == "x" * 5000
    from cao_kernel import signal_send

    sent = signal_send.compact({**TURN, "lastAssistantMessage": "x" * 5000})
    assert native_answer("Stop", sent) == "x" * 5000
    assert native_answer("Stop", {**TURN, "lastAssistantMessage": "  "}) is None
    assert native_answer("StopFailure", {**TURN, "lastAssistantMessage": "Bad request"}) is None


def test_each_hook_runs_the_signal_command_with_its_event_on_stdin():
    hooks = hook_config(["/usr/bin/python3", "-I", "/opt/cao dir/send.py", "--terminal", "0a1b2c3d"])
    assert sorted(hooks) == ["Stop", "StopFailure", "UserPromptSubmit"]
    (group,) = hooks["Stop"]
    (handler,) = group["hooks"]
    assert handler["type"] == "command" and handler["timeout"] == 5
    assert shlex.split(handler["command"]) == ["/usr/bin/python3", "-I", "/opt/cao dir/send.py", "--terminal",
                                               "0a1b2c3d", "--stdin", "Stop"]
