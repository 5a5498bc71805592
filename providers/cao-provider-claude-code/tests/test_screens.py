"""The detector and the extractor over screens recorded from the real Claude Code (tests/screens/<version>/).

Recorded with scripts/record_screens.py; each screen is labelled with the status the recording script
drove the CLI into, never with what the detector said.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_hookspecs import TerminalStatus
from cao_provider_claude_code.dialogs import STARTUP_DIALOGS
from cao_provider_claude_code.provider import TESTED_VERSIONS
from cao_provider_claude_code.screen import detect_status, extract_last_message, parse_screen

SCREENS = Path(__file__).parent / "screens"


def _recorded() -> list[tuple[str, str, dict]]:
    cases = []
    for manifest_path in sorted(SCREENS.glob("*/manifest.json")):
        manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        for name, entry in manifest["screens"].items():
            cases.append((manifest["version"], name, entry))
    return cases


RECORDED = _recorded()
IDS = [f"{version}/{name}" for version, name, _ in RECORDED]


def screen_of(version: str, name: str) -> str:
    return (SCREENS / version / f"{name}.txt").read_text(encoding="utf-8")


def test_every_tested_version_has_every_status_recorded():
    for version in TESTED_VERSIONS:
        statuses = {entry["status"] for v, _, entry in RECORDED if v == version}
        assert statuses >= {"idle", "processing", "completed", "waiting_user_answer", "error"}, version


@pytest.mark.parametrize(("version", "name", "entry"), RECORDED, ids=IDS)
def test_recorded_screen_reads_as_recorded(version, name, entry):
    report = detect_status(screen_of(version, name))
    assert report.status == TerminalStatus(entry["status"]), report
    assert report.evidence


@pytest.mark.parametrize(("version", "name", "entry"), RECORDED, ids=IDS)
def test_last_message_of_recorded_screen(version, name, entry):
    screen = screen_of(version, name)
    if "last_message" in entry:
        assert extract_last_message(screen) == entry["last_message"]
    elif entry["status"] in ("processing", "error", "idle"):
        # Nothing answers the last message yet (or the turn ended in an error).
        with pytest.raises(ValueError):
            extract_last_message(screen)


@pytest.mark.parametrize(("version", "name", "entry"), RECORDED, ids=IDS)
def test_startup_dialogs_match_only_their_own_screens(version, name, entry):
    screen = screen_of(version, name)
    matching = [d.name for d in STARTUP_DIALOGS if re.search(d.pattern, screen, re.MULTILINE)]
    expected = {
        "dialog_trust_folder": ["trust folder"],
        "dialog_api_key": ["API key confirmation"],
        "dialog_bypass_permissions": ["bypass permissions confirmation"],
    }.get(name, [])
    assert matching == expected


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

SCREEN_CHARS = st.sampled_from(list("❯●⏺⎿─╌✻✢✶*·…▐▛█ \n") + ["esc to interrupt", "Do you want", "API Error",
                                                             "Enter to confirm", "for 3s", "  "])
noise = st.lists(SCREEN_CHARS | st.text(max_size=8), max_size=80).map("".join)


@given(st.text() | noise)
def test_detector_never_raises(text):
    report = detect_status(text)
    assert isinstance(report.status, TerminalStatus)
    assert report.evidence


@given(st.text() | noise)
def test_extractor_raises_only_value_error(text):
    try:
        assert isinstance(extract_last_message(text), str)
    except ValueError:
        pass


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
