"""Oh My Pi's extension events mapped to statuses, and the answer ``agent_end`` carries."""

from __future__ import annotations

from cao_hookspecs import TerminalStatus
from cao_provider_omp.signals import native_answer, native_signal


def test_loop_events_map_to_statuses():
    assert native_signal("agent_start", {}).status == TerminalStatus.PROCESSING
    done = {"last_assistant_message": "Done.", "stop_reason": "stop", "error": ""}
    assert native_signal("agent_end", done).status == TerminalStatus.COMPLETED
    failed = native_signal("agent_end", {"last_assistant_message": "", "stop_reason": "error",
                                         "error": "400 no such model"})
    assert (failed.status, failed.evidence) == (TerminalStatus.ERROR, "400 no such model")
    # An interrupted turn says nothing: the screen decides.
    assert native_signal("agent_end", {"stop_reason": "aborted"}) is None
    assert native_signal("turn_end", {}) is None


def test_agent_end_carries_the_answer_as_written():
    assert native_answer("agent_end", {"last_assistant_message": "- **bold**", "stop_reason": "stop"}) \
        == "- **bold**"
    assert native_answer("agent_end", {"last_assistant_message": "  ", "stop_reason": "stop"}) is None
    assert native_answer("agent_end", {"last_assistant_message": "x", "stop_reason": "error"}) is None
    assert native_answer("agent_start", {"last_assistant_message": "x"}) is None
