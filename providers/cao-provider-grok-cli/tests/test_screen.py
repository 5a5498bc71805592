"""The detector and the extractor beyond the conformance kit: what the evidence says, and properties
of this CLI's layout (text typed over a finished turn, rows scrolled off the top)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_hookspecs import TerminalStatus
from cao_provider_grok_cli.provider import TESTED_VERSIONS
from cao_provider_grok_cli.screen import detect_status, extract_last_message, pending_input
from cao_testkit.recorded_screens import manifest, screen_text

SCREENS = Path(__file__).parent / "screens"
VERSION = TESTED_VERSIONS[-1]
MANIFEST = manifest(SCREENS, VERSION)
#: ``screen(name)``: the text of the newest tested version's screen ``name``.
screen = partial(screen_text, SCREENS, VERSION)


def names_with(status: str) -> list[str]:
    return sorted(name for name, entry in MANIFEST["screens"].items() if entry["status"] == status)


def test_evidence_names_the_rule_that_decided():
    assert detect_status(screen("idle")).evidence == "empty input box, no message sent yet"
    error = detect_status(screen("error"))
    assert error.evidence == ("turn after 'Try once more.' failed: Bad request (400): invalid_request_error: "
                              "scripted refusal")
    busy = "busy: ⠹ Waiting for response… 0.3s 0.3s ⇣2.20k [stop]"
    assert detect_status(screen("processing")).evidence == busy
    assert detect_status(screen("completed")).evidence.startswith(
        "turn after 'Summarise the repository.' done: Worked for ")


def test_two_finished_turns_read_differently():
    # The kernel tells turns apart by their readings: the evidence names the message answered.
    first = detect_status(screen("completed"))
    second = detect_status(screen("completed_after_tool"))
    assert first.status == second.status == TerminalStatus.COMPLETED
    assert first.evidence != second.evidence


def test_a_tool_row_and_the_clock_are_not_part_of_the_answer():
    assert "◆ Run ls" in screen("completed_after_tool")
    answer = "I listed the folder: it holds nothing yet."
    assert extract_last_message(screen("completed_after_tool")) == answer


def test_a_failed_turn_has_no_answer():
    with pytest.raises(ValueError):
        extract_last_message(screen("error"))


def test_a_screen_without_the_input_box_is_unknown_or_a_stopped_cli():
    assert detect_status("").status == TerminalStatus.UNKNOWN
    assert detect_status("loading…").status == TerminalStatus.UNKNOWN
    refused = "error: unexpected argument '--bad' found\n\nUsage: grok [OPTIONS]\n$ "
    assert detect_status(refused).evidence == "the CLI stopped: bad command-line option"


def _composer(rows: list[str]) -> int:
    return next(i for i, row in enumerate(rows) if row.strip().startswith("│ ❯"))


TYPED = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"),
                                       blacklist_characters="│█"), min_size=1, max_size=60)


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(names_with("completed")), typed=TYPED)
def test_text_typed_over_a_finished_turn_is_never_completed(name, typed):
    """A message pasted into the input box and not sent yet is not the last turn's completion."""
    rows = screen(name).rstrip("\n").split("\n")
    at = _composer(rows)
    rows[at] = f"  │ ❯ {typed}".ljust(len(rows[at]) - 1) + "│"
    report = detect_status("\n".join(rows))
    if typed.strip():
        assert report.status == TerminalStatus.PROCESSING, report
        assert pending_input("\n".join(rows)) == typed.strip()
    else:
        assert report.status == TerminalStatus.COMPLETED, report


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(sorted(MANIFEST["screens"])), cut=st.integers(0, 60))
def test_scrolling_rows_off_the_top_keeps_the_status(name, cut):
    """Rows above the last message scroll away as the transcript grows; the status must not depend on them."""
    rows = screen(name).split("\n")
    last_user = max((i for i, row in enumerate(rows) if row.startswith("     ❯ ")), default=0)
    scrolled = "\n".join(rows[min(cut, last_user):])
    assert detect_status(scrolled).status == TerminalStatus(MANIFEST["screens"][name]["status"])
