"""The detector and the extractor beyond the conformance kit: evidence, typed input, failures, and
rows scrolled off the top."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_hookspecs import TerminalStatus
from cao_provider_mcode.provider import TESTED_VERSIONS
from cao_provider_mcode.screen import detect_status, extract_last_message
from cao_testkit.recorded_screens import manifest, screen_text

SCREENS = Path(__file__).parent / "screens"
VERSION = TESTED_VERSIONS[-1]
MANIFEST = manifest(SCREENS, VERSION)
screen = partial(screen_text, SCREENS, VERSION)
COMPOSER = "│ ›                                              │"


def test_evidence_names_the_rule_that_decided():
    assert detect_status(screen("idle")).evidence == "empty composer, no message sent yet"
    assert detect_status(screen("completed")).evidence == "turn after 'Explain the result.' completed"
    assert detect_status(screen("processing")).evidence.startswith("activity row: ⠹ Loading 35s")
    assert detect_status(screen("waiting_user_answer")).evidence == (
        "tool approval: Run this command? $ pnpm test")


def test_two_finished_turns_read_differently():
    second = screen("completed").replace("› Explain the result.", "› Now list the checks.")
    assert detect_status(second).status == TerminalStatus.COMPLETED
    assert detect_status(second).evidence != detect_status(screen("completed")).evidence


def test_a_sent_message_without_activity_yet_is_processing():
    text = screen("idle").replace("╭─ v0.1.2", "› Fix the build.\n╭─ v0.1.2")
    assert detect_status(text).status == TerminalStatus.PROCESSING
    with pytest.raises(ValueError, match="not completed"):
        extract_last_message(text)


def test_sign_in_and_turn_failures_are_errors():
    assert detect_status("Sign in required\nRun mcode login.\n").status == TerminalStatus.ERROR
    failed = screen("completed").replace("└ Completed in 4s · ⚡ 12.1 tok/s", "Error: 401 unauthorized")
    report = detect_status(failed)
    assert report.status == TerminalStatus.ERROR
    assert report.evidence == "turn after 'Explain the result.' failed: Error: 401 unauthorized"


def test_the_answer_of_an_earlier_turn_is_not_the_last_turns():
    text = screen("completed").replace("╭──", "› And now?\n⠹ Loading 2s · Enter queue · Esc stop\n╭──", 1)
    assert detect_status(text).status == TerminalStatus.PROCESSING
    with pytest.raises(ValueError):
        extract_last_message(text)


TYPED = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1,
                max_size=40).filter(lambda s: "│" not in s)


@settings(max_examples=60, deadline=None)
@given(typed=TYPED)
def test_text_typed_over_a_finished_turn_is_never_completed(typed):
    text = screen("completed").replace(COMPOSER, ("│ › " + typed).ljust(len(COMPOSER) - 1) + "│")
    expected = TerminalStatus.PROCESSING if typed.strip() else TerminalStatus.COMPLETED
    assert detect_status(text).status == expected


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(sorted(MANIFEST["screens"])), cut=st.integers(0, 10))
def test_scrolling_rows_off_the_top_keeps_the_status(name, cut):
    rows = screen(name).split("\n")
    last_user = max((i for i, row in enumerate(rows) if row.startswith("› ")), default=0)
    scrolled = "\n".join(rows[min(cut, last_user):])
    assert detect_status(scrolled).status == TerminalStatus(MANIFEST["screens"][name]["status"])
