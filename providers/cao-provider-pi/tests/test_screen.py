"""The detector and the extractor beyond the conformance kit: what the evidence says, and properties
of this CLI's layout (text typed over a finished turn, rows scrolled off the top)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_hookspecs import TerminalStatus
from cao_provider_pi.provider import TESTED_VERSIONS
from cao_provider_pi.screen import detect_status, extract_last_message, pending_input
from cao_testkit.recorded_screens import manifest, screen_text

SCREENS = Path(__file__).parent / "screens"
VERSION = TESTED_VERSIONS[-1]
MANIFEST = manifest(SCREENS, VERSION)
#: ``screen(name)``: the text of the newest tested version's screen ``name``.
screen = partial(screen_text, SCREENS, VERSION)


def names_with(status: str) -> list[str]:
    return sorted(name for name, entry in MANIFEST["screens"].items() if entry["status"] == status)


def test_evidence_names_the_rule_that_decided():
    assert detect_status(screen("dialog_trust_folder")).evidence == "start-up dialog: trust folder"
    question = detect_status(screen("waiting_user_answer"))
    assert question.evidence == ("question waiting for a key: Allow run_command? [y] Yes · "
                                 "[a] Yes, always for run_command · [n] No")
    error = detect_status(screen("error"))
    assert error.evidence == "turn after 'Try once more.' ended in an error: 529 overloaded_error: Overloaded"
    assert detect_status(screen("processing")).evidence == "busy row: · Working… (ctrl+c to interrupt)"


def test_two_finished_turns_read_differently():
    # The kernel tells turns apart by their readings: the evidence names the message answered.
    first = detect_status(screen("completed"))
    second = detect_status(screen("waiting_user_answer_answer1"))
    assert first.status == second.status == TerminalStatus.COMPLETED
    assert first.evidence != second.evidence


def test_an_answer_of_an_earlier_turn_is_not_this_turns_answer():
    # The error screen still shows earlier answers above the failed turn.
    assert "● " in screen("error")
    with pytest.raises(ValueError):
        extract_last_message(screen("error"))


TYPED = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1,
                max_size=60)


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(names_with("completed")), typed=TYPED)
def test_text_typed_over_a_finished_turn_is_never_completed(name, typed):
    """A message pasted at the prompt and not answered yet is not the last turn's completion."""
    rows = screen(name).rstrip("\n").split("\n")
    assert rows[-1] == ">"
    rows[-1] = "> " + typed
    report = detect_status("\n".join(rows))
    assert pending_input("\n".join(rows)) == typed.strip()
    if typed.strip():
        assert report.status == TerminalStatus.PROCESSING, report
    else:
        assert report.status == TerminalStatus.COMPLETED, report


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(sorted(MANIFEST["screens"])), cut=st.integers(0, 60))
def test_scrolling_rows_off_the_top_keeps_the_status(name, cut):
    """Rows above the last message scroll away as the transcript grows; the status must not depend on them."""
    rows = screen(name).split("\n")
    last_user = max((i for i, row in enumerate(rows) if row.startswith("> ")), default=0)
    scrolled = "\n".join(rows[min(cut, last_user):])
    assert detect_status(scrolled).status == TerminalStatus(MANIFEST["screens"][name]["status"])
