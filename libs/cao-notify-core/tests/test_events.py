"""Events: every kind has an example hook call and a description; what terminals show is cleaned."""

from __future__ import annotations

import pytest

from cao_hookspecs import DelegationResult
from cao_notify_core.events import EVENT_KINDS, LEVELS, Notice, clean, describe
from cao_testkit.notify.examples import example_hook_calls, example_notices

AT = 1_700_000_000.5


def test_every_kind_has_exactly_one_example_and_a_notice() -> None:
    calls = example_hook_calls()
    assert sorted(kind for _, _, kind in calls) == sorted(EVENT_KINDS)
    notices = example_notices(AT)
    assert list(notices) == [kind for _, _, kind in calls]
    for kind, notice in notices.items():
        assert isinstance(notice, Notice) and notice.kind == kind and notice.at == AT
        assert notice.title and notice.level in LEVELS
        assert all(name and value for name, value in notice.fields)
    assert notices["waiting_user_answer"].summary.endswith("is waiting for your answer. (permission prompt)")


def test_an_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown event kind 'lunch'"):
        describe("lunch", {}, AT)


def test_escape_sequences_and_control_characters_are_removed() -> None:
    cleaned = clean("\x1b[1;32mgreen\x1b[0m bell\x07 nul\x00 tab\tkept\nline")
    assert cleaned == "green bell nul tab\tkept\nline"
    assert clean("\x1b]0;window title\x07after") == "after"
    assert clean(None) == ""


def test_a_handoff_carries_its_answer_and_leaves_empty_fields_out() -> None:
    failed = DelegationResult(kind="handoff", success=False, message="Handoff timed out", agent_profile="dev",
                              output="\x1b[31mpartial\x1b[0m", duration=2.04)
    notice = describe("handoff_finished", {"result": failed}, AT)
    assert (notice.title, notice.summary, notice.level) == ("Handoff failed: dev", "Handoff timed out", "bad")
    assert notice.body == "partial"
    assert dict(notice.fields) == {"Profile": "dev", "Duration": "2.0 s"}
