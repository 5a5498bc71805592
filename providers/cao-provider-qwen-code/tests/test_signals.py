"""Qwen Code's hook events mapped to statuses, and the answer a Stop hook carries."""

from __future__ import annotations

from cao_hookspecs import TerminalStatus
from cao_provider_qwen_code.signals import native_answer, native_signal


def test_turn_events_map_to_statuses():
    assert native_signal("UserPromptSubmit", {"prompt": "hi"}).status == TerminalStatus.PROCESSING
    assert native_signal("Stop", {"last_assistant_message": "Done."}).status == TerminalStatus.COMPLETED
    failed = native_signal("StopFailure", {"error": "invalid_request", "error_details": "400 no such model"})
    assert (failed.status, failed.evidence) == (TerminalStatus.ERROR, "400 no such model")
    waiting = native_signal("Notification", {"notification_type": "permission_prompt"})
    assert waiting.status == TerminalStatus.WAITING_USER_ANSWER
    # Said after every turn, and nothing new: the Stop before it told.
    assert native_signal("Notification", {"notification_type": "idle_prompt"}) is None
    assert native_signal("SessionStart", {}) is None


def test_the_stop_hook_carries_the_answer_as_written():
    assert native_answer("Stop", {"last_assistant_message": "- **bold** item"}) == "- **bold** item"
    assert native_answer("Stop", {"last_assistant_message": "  "}) is None
    assert native_answer("StopFailure", {"last_assistant_message": "[API Error: 400]"}) is None
