"""Codex-specific readings of the screens recorded from the real Codex (scripts/record_screens.py).

The conformance kit (test_conformance.py) checks every recorded screen's status, evidence, answer and
start-up dialog; these tests pin what is particular to Codex: which row decides, the two-row footer,
colour codes, and answers of any shape.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from cao_hookspecs import TerminalStatus
from cao_provider_codex.provider import TESTED_VERSIONS
from cao_provider_codex.screen import detect_status, extract_last_message
from cao_testkit.recorded_screens import manifest_entries, screen_text

SCREENS = Path(__file__).parent / "screens"


RECORDED = manifest_entries(SCREENS)


def screen(name: str, version: str = TESTED_VERSIONS[-1]) -> str:
    return screen_text(SCREENS, version, name)


@pytest.mark.parametrize(("name", "evidence"), [
    ("processing-thinking", "esc to interrupt"),
    ("processing-tool", "esc to interrupt"),
    ("processing-typed-unsent", "unsent text"),
    ("completed-reply", "Worked for"),
    ("error-model-refusal", "scripted refusal: context too long"),
    ("error-login", "login screen"),
    ("waiting-trust-folder", "trust-folder dialog"),
    ("waiting-approval", "approval prompt"),
    ("waiting-update-prompt", "update prompt"),
    ("idle-interrupted", "interrupted"),
    ("unknown-starting", "starting"),
])
def test_evidence_names_the_deciding_row(name, evidence):
    assert evidence in detect_status(screen(name)).evidence


def test_the_two_row_footer_does_not_hide_a_finished_turn():
    # Upstream read this screen as still running: the prompt is not on the last row any more.
    rows = screen("completed-reply").rstrip("\n").splitlines()
    assert "? for shortcuts" in rows[-1] and " \u00b7 " in rows[-2] and rows[-4].startswith("\u203a")
    assert detect_status("\n".join(rows)).status == TerminalStatus.COMPLETED


def test_colour_codes_and_trailing_blank_rows_change_nothing():
    for version, name, expected in RECORDED:
        text = screen(name, version)
        rows = [f"\x1b[2m{row}\x1b[0m   " if row else row for row in text.splitlines()]
        coloured = "\n".join(rows) + "\n\n\n"
        assert detect_status(coloured).status == TerminalStatus(expected["status"]), name


# -- properties -------------------------------------------------------------------------------------

answer_lines = st.lists(
    st.text(alphabet=st.characters(categories=["L", "N", "P", "S", "Zs"],
                                   exclude_characters="\u2028\u2029\x85"),
            min_size=1, max_size=80).map(str.strip),
    min_size=1, max_size=6,
).filter(lambda lines: lines[0] != "" and lines[-1] != "")


def _with_answer(template: str, old: str, lines: list[str]) -> str:
    # Codex renders an answer as "• first line" with its further lines indented by two spaces.
    rendered = "\n".join([f"\u2022 {lines[0]}", *[f"  {line}" if line else "" for line in lines[1:]]])
    return template.replace(f"\u2022 {old}", rendered)


@settings(max_examples=200, deadline=None)
@given(lines=answer_lines)
def test_any_answer_text_is_extracted_exactly_and_stays_completed(lines):
    glyphs = ("\u2022", "\u25e6", "\u25a0", "\u2714", "\u2717", "\u26a0")
    assume(all(not line.startswith(glyphs) for line in lines))
    assume(not any(line.startswith("Worked for") for line in lines))
    text = _with_answer(screen("completed-reply"), "The answer is 42, from the scripted model.", lines)
    report = detect_status(text)
    assert report.status == TerminalStatus.COMPLETED, (report, text)
    assert extract_last_message(text) == "\n".join(lines)


@settings(max_examples=100, deadline=None)
@given(lines=answer_lines)
def test_an_answer_quoting_dialogs_and_prompts_is_still_an_answer(lines):
    quoted = ["Would you like to run the following command?", "\u203a 1. Yes, proceed (y)", *lines,
              "Press enter to confirm or esc to cancel", "Working (3s \u2022 esc to interrupt)"]
    text = _with_answer(screen("completed-reply"), "The answer is 42, from the scripted model.", quoted)
    assert detect_status(text).status == TerminalStatus.COMPLETED
    assert extract_last_message(text) == "\n".join(quoted)


@settings(max_examples=100, deadline=None)
@given(message=st.text(alphabet=st.characters(categories=["L", "N", "P", "Zs"]), min_size=1, max_size=100)
       .map(str.strip).filter(bool))
def test_any_user_message_while_thinking_is_processing(message):
    text = screen("processing-thinking").replace("\u203a Think about it.", f"\u203a {message}")
    assert detect_status(text).status == TerminalStatus.PROCESSING


@settings(max_examples=200, deadline=None)
@given(rows=st.lists(st.sampled_from([
    "", "\u203a hello", "\u203a Ask Codex to do anything", "\u2022 answer", "  more",
    "  Worked for 2s \u2022 10:00",
    "\u25e6 Working (1s \u2022 esc to interrupt)", "\u25a0 boom", "  scripted default \u00b7 ~/p",
    "  \u2190 for agents \u00b7 ? for shortcuts", "  Press enter to continue", "\u203a 1. Yes", "  2. No",
]), max_size=25))
def test_detector_on_shuffled_codex_rows_never_raises_and_extraction_is_consistent(rows):
    text = "\n".join(rows)
    report = detect_status(text)
    assert report.evidence
    try:
        answer = extract_last_message(text)
    except ValueError:
        return
    assert answer and "Worked for" in text
