"""The detector and the extractor over screens recorded from the real Kimi CLI (tests/screens/<version>/),
beyond what the conformance kit checks: evidence wording, the end-of-turn rule, and properties over
edits of the recorded screens.

Each screen is labelled with the status the recording script drove the CLI into, never with what the
detector said.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_hookspecs import TerminalStatus
from cao_provider_kimi_cli.dialogs import STARTUP_DIALOGS
from cao_provider_kimi_cli.provider import TESTED_VERSIONS
from cao_provider_kimi_cli.screen import detect_status, extract_last_message
from cao_testkit.recorded_screens import manifest_entries, screen_text

SCREENS = Path(__file__).parent / "screens"
VERSION = TESTED_VERSIONS[-1]


RECORDED = manifest_entries(SCREENS)
# Completed screens with an answer (a rejected tool call ends a turn with none).
COMPLETED = [(v, n) for v, n, e in RECORDED if e["status"] == "completed" and "last_message" in e]
PROCESSING = [(v, n) for v, n, e in RECORDED if e["status"] == "processing"]
IN_PROMPT = [(v, n, e["status"]) for v, n, e in RECORDED if not n.startswith(("dialog_", "exited_"))]


def screen_of(version: str, name: str) -> str:
    return screen_text(SCREENS, version, name)


def _rows(version: str, name: str) -> list[str]:
    return screen_of(version, name).rstrip("\n").split("\n")


def _header(rows: list[str]) -> int:
    return max(i for i, row in enumerate(rows) if row.startswith("── input "))


# -- evidence -------------------------------------------------------------------------------------


def test_evidence_names_what_decided():
    assert detect_status(screen_of(VERSION, "idle")).evidence == "empty prompt, no message sent yet"
    assert detect_status(screen_of(VERSION, "processing")).evidence.startswith("waiting for the model: ")
    assert detect_status(screen_of(VERSION, "processing_tool")).evidence.startswith("spinner: ")
    assert "Using Shell (sleep 4; ls)" in detect_status(screen_of(VERSION, "processing_tool")).evidence
    completed = detect_status(screen_of(VERSION, "completed_after_tool")).evidence
    assert completed == "answer after 'Look around and report.' above an empty prompt: I listed the folder."
    error = detect_status(screen_of(VERSION, "error")).evidence
    assert error.startswith("turn after 'Try once more.' ended in an error: LLM provider error: Error code")
    approval = detect_status(screen_of(VERSION, "waiting_user_answer")).evidence
    assert approval == "approval panel: Shell is requesting approval to run command:"
    question = detect_status(screen_of(VERSION, "waiting_user_answer_question")).evidence
    assert question == "question panel: ? Which database should I use?"
    assert detect_status(screen_of(VERSION, "dialog_update_gate")).evidence == "start-up dialog: update gate"
    refused = detect_status(screen_of(VERSION, "exited_bad_config")).evidence
    assert refused == "Kimi CLI stopped: configuration refused"


def test_gate_keys_never_press_enter():
    """Enter starts a download and an install at either gate: the answers are single safe keys."""
    assert [dialog.keys for dialog in STARTUP_DIALOGS] == [("q",), ("q",)]


def test_a_gate_quoted_in_an_answer_is_not_a_gate_on_the_prompt():
    """Dialog patterns are searched by the kernel only while a terminal starts; the detector itself reads
    a gate only when no toolbar is drawn."""
    gate = [row for row in _rows(VERSION, "dialog_update_gate") if row.strip()]
    rows = _rows(VERSION, "completed")
    header = _header(rows)
    quoted = [f"  {row}" for row in gate]
    screen = "\n".join([*rows[:header - 3], *quoted, "", "", "", *rows[header:]])
    assert detect_status(screen).status == TerminalStatus.COMPLETED


# -- the end of a turn --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["completed", "completed_after_tool", "completed_after_approval"])
def test_an_answer_without_the_end_of_turn_row_is_still_processing(name):
    """Kimi prints a blank row when a turn is over; until then the answer may still be growing (its last
    part is printed after the live area has gone)."""
    rows = _rows(VERSION, name)
    header = _header(rows)
    assert rows[header - 3:header] == ["", "", ""]
    cut = "\n".join([*rows[:header - 1], *rows[header:]])
    report = detect_status(cut)
    assert report.status == TerminalStatus.PROCESSING, report
    assert "not ended" in report.evidence


def test_an_error_row_is_final_once_the_turn_has_ended():
    rows = _rows(VERSION, "error")
    header = _header(rows)
    assert rows[header - 2:header] == ["", ""]
    cut = "\n".join([*rows[:header - 1], *rows[header:]])
    assert detect_status(cut).status == TerminalStatus.PROCESSING


ERRORS = [
    "LLM not set, send \"/login\" to login",
    "Authorization failed. Your session may have expired.",
    "Membership expired, please renew your plan",
    "Server: Error code: 403 - {'error': 'forbidden'}",
    "Network connection failed: Connection error.",
    "Request timed out: Request timed out.",
    "The server returned an empty response.",
    "Unexpected error: boom",
    "Max number of steps reached: 100",
]


@pytest.mark.parametrize("message", ERRORS)
def test_every_kind_of_turn_failure_reads_as_error(message):
    """The recorded error screen with its first row replaced by each failure Kimi 1.51 prints."""
    rows = _rows(VERSION, "error")
    at = next(i for i, row in enumerate(rows) if row.startswith("LLM provider error: "))
    rows[at] = message
    report = detect_status("\n".join(rows))
    assert report.status == TerminalStatus.ERROR, report
    assert message[:30] in report.evidence


@pytest.mark.parametrize("name", ["completed", "idle", "error"])
def test_a_queued_message_keeps_the_terminal_busy(name):
    """A message typed while Kimi works waits in its queue; the header counts it until the next turn."""
    rows = _rows(VERSION, name)
    header = _header(rows)
    rows[header] = rows[header].replace("── input ──", "── input · 1 queued ──", 1)
    report = detect_status("\n".join(rows))
    assert report.status == TerminalStatus.PROCESSING
    assert report.evidence == "1 message(s) queued for the next turn"


def test_an_interrupted_turn_is_idle():
    rows = _rows(VERSION, "error")
    at = next(i for i, row in enumerate(rows) if row.startswith("LLM provider error: "))
    rows[at:at + 2] = ["Interrupted by user"]
    assert detect_status("\n".join(rows)).status == TerminalStatus.IDLE


# -- answers ------------------------------------------------------------------------------------------


def test_paragraphs_keep_their_blank_rows_and_lose_the_indent():
    answer = extract_last_message(screen_of(VERSION, "completed_after_tool"))
    assert answer == ("I listed the folder.\n\nThe build script is missing a clean step, and two tests are "
                      "slow.\n\nNext I would add the clean step.")


def test_a_tool_call_is_not_an_answer():
    rows = _rows(VERSION, "completed_after_tool")
    at = next(i for i, row in enumerate(rows) if row.startswith("• I listed the folder."))
    end = _header(rows) - 3
    with_tool_only = "\n".join([*rows[:at], *rows[end:]])
    with pytest.raises(ValueError):
        extract_last_message(with_tool_only)
    evidence = detect_status(with_tool_only).evidence
    assert evidence.startswith("turn after 'Look around and report.' ended without an answer")


def test_the_previous_turns_answer_is_not_this_turns():
    with pytest.raises(ValueError):
        extract_last_message(screen_of(VERSION, "error"))
    with pytest.raises(ValueError):
        extract_last_message(screen_of(VERSION, "processing_tool"))


def test_history_above_the_screen_is_read_too():
    """The kernel extracts from the screen plus scrollback: an answer longer than the screen."""
    rows = _rows(VERSION, "completed-100x30")
    header = _header(rows)
    at = next(i for i, row in enumerate(rows) if row.startswith("• The repository has"))
    long = [f"  Line {n} of a long answer." for n in range(60)]
    screen = "\n".join([*rows[:at + 1], *long, *rows[at + 1:header], *rows[header:]])
    answer = extract_last_message(screen)
    assert answer.splitlines()[0] == "The repository has 3 packages; all tests pass."
    assert answer.splitlines()[-1] == "Line 59 of a long answer."


# -- properties ----------------------------------------------------------------------------------------

printable = st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"))


@settings(max_examples=60, deadline=None)
@given(case=st.sampled_from(COMPLETED), typed=st.text(alphabet=printable, min_size=1, max_size=80))
def test_typed_input_over_a_finished_turn_is_never_completed(case, typed):
    """A message pasted into the input box but not submitted must not read as the last turn's answer."""
    rows = _rows(*case)
    header = _header(rows)
    rows[header + 1] = " " + typed
    report = detect_status("\n".join(rows))
    if typed.strip():
        assert report.status == TerminalStatus.PROCESSING, report
        assert report.evidence.startswith("input not submitted yet")


@settings(max_examples=60, deadline=None)
@given(case=st.sampled_from(COMPLETED),
       row=st.sampled_from(["🌑", "🌘", "⠋ Composing... <1s · 12 tokens", "⠸ Using ReadFile (README.md)",
                            "Thinking ...  2s · 40 tokens", "Retrying after server error · attempt 2/3 · <1s",
                            "o Compacting...", "⠙ Connecting to MCP servers..."]))
def test_a_live_row_after_the_answer_is_never_completed(case, row):
    rows = _rows(*case)
    header = _header(rows)
    screen = "\n".join([*rows[:header - 1], row, "", *rows[header:]])
    assert detect_status(screen).status == TerminalStatus.PROCESSING


@settings(max_examples=80, deadline=None)
@given(case=st.sampled_from(IN_PROMPT), cut=st.integers(0, 60))
def test_scrolling_the_top_away_keeps_the_status(case, cut):
    """Rows above the last message may scroll off the screen; the status must not depend on them."""
    version, name, status = case
    rows = _rows(version, name)
    last_user = max((i for i, row in enumerate(rows) if row.startswith("✨ ")), default=0)
    scrolled = "\n".join(rows[min(cut, last_user):])
    assert detect_status(scrolled).status == TerminalStatus(status)


@settings(max_examples=60, deadline=None)
@given(case=st.sampled_from(COMPLETED), message=st.lists(st.text(alphabet=printable, max_size=50), min_size=1,
                                                          max_size=4))
def test_a_multi_line_message_does_not_change_the_answer(case, message):
    """Kimi echoes a message's further lines unindented; they belong to the message, not the answer."""
    rows = _rows(*case)
    user = max(i for i, row in enumerate(rows) if row.startswith("✨ "))
    lines = [line for line in message if line.strip()]
    screen = "\n".join([*rows[:user + 1], *lines, *rows[user + 1:]])
    assert extract_last_message(screen) == extract_last_message("\n".join(rows))


@given(st.text() | st.lists(st.sampled_from(["✨ hi", "• a", "  b", "", "── input ──", "─" * 30, "agent (m ○)",
                                             "🌓", "⠋ x", "╭─ approval ─", "╰─", "Interrupted by user"]),
                            max_size=30).map("\n".join))
def test_detector_never_raises_and_always_explains(text):
    report = detect_status(text)
    assert isinstance(report.status, TerminalStatus)
    assert report.evidence
