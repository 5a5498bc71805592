"""The detector and the extractor beyond the conformance kit: evidence, typed input, menus, failed
turns, and the limits of reading answers without an echo of the message."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_hookspecs import TerminalStatus
from cao_provider_cursor_cli.prompts import read_prompt
from cao_provider_cursor_cli.provider import TESTED_VERSIONS
from cao_provider_cursor_cli.screen import detect_status, extract_last_message
from cao_testkit.recorded_screens import manifest, screen_text

SCREENS = Path(__file__).parent / "screens"
VERSION = TESTED_VERSIONS[-1]
MANIFEST = manifest(SCREENS, VERSION)
screen = partial(screen_text, SCREENS, VERSION)


def test_evidence_names_the_rule_that_decided():
    assert detect_status(screen("idle")).evidence == (
        "placeholder 'Plan, search, build anything': no message sent yet")
    assert detect_status(screen("processing")).evidence == "input box shows 'ctrl+c to stop'"
    assert detect_status(screen("completed")).evidence == "answer '1 + 1 = 2' above 'Add a follow-up'"
    assert detect_status(screen("error_trust_option")).evidence == (
        "the CLI stopped: Error: --trust can only be used with --print/headless mode")


def test_two_finished_turns_read_differently():
    other = screen("completed").replace("1 + 1 = 2", "2 + 2 = 4")
    assert detect_status(other).evidence != detect_status(screen("completed")).evidence


def test_the_answer_after_the_last_command_is_the_last_message():
    text = screen("completed").replace("  1 + 1 = 2", "  Checked.\n\n  $ ls 1s\n\n  Two files.")
    assert extract_last_message(text) == "Two files."


def test_a_menu_is_waiting_and_no_prompt_is_guessed():
    text = screen("completed").rstrip("\n") + "\n  ↑/↓ to navigate · enter to select\n"
    assert detect_status(text).status == TerminalStatus.WAITING_USER_ANSWER
    assert read_prompt(text) is None
    with pytest.raises(ValueError):
        extract_last_message(text)


def test_a_turn_error_is_an_error():
    text = screen("completed").replace("1 + 1 = 2", "[invalid_argument] unknown option")
    assert detect_status(text).status == TerminalStatus.ERROR


PLACEHOLDER = "  → Add a follow-up"
TYPED = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1,
                max_size=40)


@settings(max_examples=60, deadline=None)
@given(typed=TYPED)
def test_text_typed_over_a_finished_turn_is_never_completed(typed):
    text = screen("completed").replace(PLACEHOLDER, "  → " + typed)
    report = detect_status(text)
    if typed.strip() and typed.strip() != "Add a follow-up":
        assert report.status == TerminalStatus.PROCESSING, report
    else:
        assert report.status == TerminalStatus.COMPLETED, report


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(sorted(MANIFEST["screens"])), cut=st.integers(0, 4))
def test_rows_above_the_header_do_not_matter(name, cut):
    # Rows scroll off the top; up to the header's first row they carry nothing the status needs.
    rows = screen(name).split("\n")
    first = next((i for i, row in enumerate(rows) if row.strip() == "Cursor Agent"), 0)
    scrolled = "\n".join(rows[min(cut, first):])
    assert detect_status(scrolled).status == TerminalStatus(MANIFEST["screens"][name]["status"])
