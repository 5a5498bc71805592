"""The detector and the extractor beyond the conformance kit: evidence, typed input, the -i
instructions' turn, errors and rows scrolled off the top."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_hookspecs import TerminalStatus
from cao_provider_antigravity_cli.provider import TESTED_VERSIONS
from cao_provider_antigravity_cli.screen import detect_status, extract_last_message
from cao_testkit.recorded_screens import manifest, screen_text

SCREENS = Path(__file__).parent / "screens"
VERSION = TESTED_VERSIONS[-1]
MANIFEST = manifest(SCREENS, VERSION)
screen = partial(screen_text, SCREENS, VERSION)


def test_evidence_names_the_rule_that_decided():
    assert detect_status(screen("idle")).evidence == "empty prompt, no message sent yet"
    assert detect_status(screen("processing")).evidence == (
        "footer 'esc to cancel' after 'Reply with exactly one word: PONG'")
    assert detect_status(screen("completed")).evidence == (
        "answer after 'Reply with exactly one word: PONG' above the empty prompt")
    assert detect_status(screen("dialog_trust_folder")).evidence == "start-up dialog: trust folder"
    assert detect_status(screen("dialog_feedback_survey")).evidence == "start-up dialog: feedback survey"


def test_two_finished_turns_read_differently():
    first, second = detect_status(screen("completed")), detect_status(screen("completed_after_tools"))
    assert first.status == second.status == TerminalStatus.COMPLETED
    assert first.evidence != second.evidence


def test_the_instructions_turn_is_a_finished_turn():
    # The -i message and its acknowledgement: the terminal is ready for its task.
    rows = screen("completed_after_tools").split("\n")
    first_turn = "\n".join(["> You are the reviewer.", *rows[1:7], *rows[45:]])
    assert detect_status(first_turn).status == TerminalStatus.COMPLETED
    assert extract_last_message(first_turn).startswith("I am the independent Gemini Code Reviewer Agent")


def test_a_spinner_in_the_turn_is_processing_even_with_the_ready_footer():
    text = screen("completed").replace("  PONG", "  PONG\n⣽ Working...")
    assert detect_status(text).status == TerminalStatus.PROCESSING
    with pytest.raises(ValueError, match="still running"):
        extract_last_message(text)


def test_errors():
    failed = screen("completed").replace("  PONG", "Error: quota exhausted")
    report = detect_status(failed)
    assert report.status == TerminalStatus.ERROR and "quota exhausted" in report.evidence
    assert detect_status("$ agy --bogus\nError: unknown flag: --bogus\n$").status == TerminalStatus.ERROR


TYPED = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1,
                max_size=60)


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(["completed", "completed_after_tools", "completed-100x30"]), typed=TYPED)
def test_text_typed_over_a_finished_turn_is_never_completed(name, typed):
    rows = screen(name).rstrip("\n").split("\n")
    at = max(i for i, row in enumerate(rows) if row == ">")
    rows[at] = "> " + typed
    expected = TerminalStatus.PROCESSING if typed.strip() else TerminalStatus.COMPLETED
    assert detect_status("\n".join(rows)).status == expected


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(sorted(MANIFEST["screens"])), cut=st.integers(0, 20))
def test_scrolling_rows_off_the_top_keeps_the_status(name, cut):
    rows = screen(name).split("\n")
    last_query = max((i for i, row in enumerate(rows) if row.startswith("> ")), default=0)
    scrolled = "\n".join(rows[min(cut, last_query):])
    assert detect_status(scrolled).status == TerminalStatus(MANIFEST["screens"][name]["status"])
