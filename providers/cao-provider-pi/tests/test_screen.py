"""The detector and the extractor beyond the conformance kit: what the evidence says, and properties of
pi's layout (text typed over a finished turn, rows scrolled off the top)."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_hookspecs import TerminalStatus
from cao_provider_pi.provider import TESTED_VERSIONS
from cao_provider_pi.screen import detect_status, extract_last_message, parse_screen, pending_input
from cao_testkit.recorded_screens import manifest, screen_text

SCREENS = Path(__file__).parent / "screens"
VERSION = TESTED_VERSIONS[-1]
MANIFEST = manifest(SCREENS, VERSION)
#: ``screen(name)``: the text of the newest tested version's screen ``name``.
screen = partial(screen_text, SCREENS, VERSION)


def names_with(status: str) -> list[str]:
    return sorted(name for name, entry in MANIFEST["screens"].items() if entry["status"] == status)


def test_evidence_names_the_rule_that_decided():
    assert detect_status(screen("idle")).evidence == "empty input box, no message on screen"
    assert detect_status(screen("processing")).evidence == "busy row: ⠴ Working..."
    error = detect_status(screen("error"))
    assert error.evidence == "turn ended in an error: 400 model scripted is not served here"
    refused = detect_status(screen("error_refused_start-100x30"))
    assert refused.evidence == ('the CLI stopped: Model "nosuch/model" not found. Use --list-models to see '
                                'available models.')


def test_two_finished_turns_read_differently():
    first = detect_status(screen("completed"))
    second = detect_status(screen("completed_after_tool"))
    assert first.status == second.status == TerminalStatus.COMPLETED
    assert first.evidence != second.evidence


def test_the_start_up_notices_are_not_messages():
    # pi prints two notices before its TUI and draws a warning above the first message.
    assert "Offline mode enabled" in screen("idle") and "Warning: tmux extended-keys" in screen("idle")
    assert parse_screen(screen("idle")).blocks == []


def test_an_answer_of_an_earlier_turn_is_not_this_turns_answer():
    # The error screen still shows earlier answers above the failed turn.
    assert "I listed the folder." in screen("error")
    with pytest.raises(ValueError):
        extract_last_message(screen("error"))


def _typed_into_box(text: str, typed: str) -> str:
    rows = text.split("\n")
    rules = [i for i, row in enumerate(rows) if row.startswith("─" * 20)]
    rows[rules[-2] + 1] = typed
    return "\n".join(rows)


TYPED = st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp", "Zs")), min_size=1,
                max_size=60)


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(names_with("completed")), typed=TYPED)
def test_text_typed_over_a_finished_turn_is_never_completed(name, typed):
    """A message pasted into the box and not answered yet is not the last turn's completion."""
    edited = _typed_into_box(screen(name), typed)
    assert detect_status(edited).status == TerminalStatus.PROCESSING
    assert pending_input(edited) == typed.strip()
    assert pending_input(screen(name)) == ""


@pytest.mark.parametrize("name", names_with("completed"))
def test_the_answer_survives_rows_scrolled_off_the_top(name):
    answer = MANIFEST["screens"][name]["last_message"]
    rows = screen(name).split("\n")
    first = next(i for i, row in enumerate(rows) if row.strip() == answer.split("\n")[0])
    for cut in range(0, first):
        assert extract_last_message("\n".join(rows[cut:])) == answer
