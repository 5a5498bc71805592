"""The bridge's turn events mapped to statuses and answers."""

from __future__ import annotations

from cao_hookspecs import TerminalStatus
from cao_provider_pi.signals import native_answer, native_signal


def test_a_turn_starts_and_ends_with_its_answer():
    assert native_signal("agent_start", {}).status == TerminalStatus.PROCESSING
    end = {"stop_reason": "stop", "last_assistant_message": "Done."}
    assert native_signal("agent_end", end).status == TerminalStatus.COMPLETED
    assert native_answer("agent_end", end) == "Done."


def test_a_failed_turn_is_left_to_the_screen():
    # pi may retry it by itself: only the screen says whether it does.
    end = {"stop_reason": "error", "error": "429 rate limited"}
    assert native_signal("agent_end", end) is None
    assert native_answer("agent_end", end) is None


def test_an_aborted_turn_waits_for_the_user_and_unknown_events_say_nothing():
    assert native_signal("agent_end", {"stop_reason": "aborted"}).status == TerminalStatus.IDLE
    assert native_signal("agent_end", {"stop_reason": "none"}) is None
    assert native_signal("agent_end", {}) is None
    assert native_signal("session_start", {}) is None
    assert native_answer("agent_start", {"last_assistant_message": "x"}) is None
    assert native_answer("agent_end", {"stop_reason": "stop", "last_assistant_message": "  "}) is None
