"""Claude Code-specific readings of the screens recorded from the real CLI (tests/screens/<version>/).

The conformance kit (test_conformance.py) checks every recorded screen's status, evidence, answer and
start-up dialog, and that the detector never raises; these tests pin what is particular to Claude
Code: dialog evidence, grey hints in the input box, typed input, spinners of any verb, scrolling.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_hookspecs import TerminalStatus
from cao_provider_claude_code.provider import TESTED_VERSIONS
from cao_provider_claude_code.screen import detect_status, extract_last_message, parse_screen
from cao_testkit.recorded_screens import manifest_entries, screen_text

SCREENS = Path(__file__).parent / "screens"


RECORDED = manifest_entries(SCREENS)


def screen_of(version: str, name: str) -> str:
    return screen_text(SCREENS, version, name)


def test_dialog_evidence_names_the_dialog():
    version = TESTED_VERSIONS[-1]
    trust = detect_status(screen_of(version, "dialog_trust_folder"))
    assert trust.evidence == "start-up dialog: trust folder"
    assert "Do you want to proceed?" in detect_status(screen_of(version, "waiting_user_answer")).evidence
    assert "root/sudo" not in detect_status(screen_of(version, "exited_root")).evidence  # named, not quoted
    exited = detect_status(screen_of(version, "exited_root"))
    assert exited.evidence == "Claude Code stopped: refuses bypass mode as root"


def test_placeholder_in_the_box_is_not_pending_input():
    screen = parse_screen(screen_of(TESTED_VERSIONS[-1], "error"))
    assert screen.has_box and screen.pending_input == ""


# -- properties ------------------------------------------------------------------------------------

COMPLETED = [(v, n) for v, n, e in RECORDED if e["status"] == "completed"]
PROCESSING = [(v, n) for v, n, e in RECORDED if e["status"] == "processing"]
BY_STATUS = [(v, n, e["status"]) for v, n, e in RECORDED]


def _replace_box_row(screen: str, text: str) -> str:
    parsed = parse_screen(screen)
    rows = screen.splitlines()
    rows[parsed.box_top + 1] = "❯ " + text
    return "\n".join(rows)


@settings(max_examples=60, deadline=None)
@given(case=st.sampled_from(COMPLETED), typed=st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=60))
def test_typed_input_over_a_finished_turn_is_never_completed(case, typed):
    """A message pasted into the box but not submitted yet must not read as the last turn's completion."""
    screen = _replace_box_row(screen_of(*case), typed)
    report = detect_status(screen)
    if typed.strip() in ("", "Resend your message to try again", "Once fixed, resend your message"):
        return
    assert report.status != TerminalStatus.COMPLETED, report


@settings(max_examples=60, deadline=None)
@given(case=st.sampled_from(COMPLETED),
       verb=st.sampled_from(["Thinking", "Booping", "Compacting conversation"]),
       glyph=st.sampled_from(list("·✢✳✶✻✽*")))
def test_a_spinner_above_the_box_is_never_completed(case, verb, glyph):
    """Processing and completed never overlap: a running spinner beats the earlier turn's answer."""
    screen = screen_of(*case)
    parsed = parse_screen(screen)
    rows = screen.splitlines()
    rows.insert(parsed.box_top, f"{glyph} {verb}…")
    assert detect_status("\n".join(rows)).status == TerminalStatus.PROCESSING


@settings(max_examples=80, deadline=None)
@given(case=st.sampled_from(BY_STATUS), cut=st.integers(0, 60))
def test_scrolling_the_top_away_keeps_the_status(case, cut):
    """Rows above the last message may scroll off the screen; the status must not depend on them."""
    version, name, status = case
    rows = screen_of(version, name).splitlines()
    last_user = max((i for i, row in enumerate(rows) if row.startswith("❯ ")), default=0)
    scrolled = "\n".join(rows[min(cut, last_user):])
    assert detect_status(scrolled).status == TerminalStatus(status)


@given(st.sampled_from(PROCESSING), st.text(max_size=40))
def test_processing_screens_never_yield_an_answer_for_the_running_turn(case, extra):
    with pytest.raises(ValueError):
        extract_last_message(screen_of(*case) + ("\n" + extra if extra.startswith("❯") else ""))
