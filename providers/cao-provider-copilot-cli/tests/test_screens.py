"""The detector and the extractor on what sets Copilot CLI apart, over screens recorded from the real CLI.

The conformance kit (test_conformance.py) checks every recorded screen's status, answer and dialog. These
tests pin the evidence each rule gives, and properties built on the recorded screens: rows the CLI adds
on its own, tool rows that look like answers, the scrollbar, text typed into the box, scrolling.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_hookspecs import TerminalStatus
from cao_provider_copilot_cli.provider import TESTED_VERSIONS
from cao_provider_copilot_cli.screen import NOT_ANSWERS, detect_status, extract_last_message, parse_screen
from cao_testkit.recorded_screens import manifest, screen_text

SCREENS = Path(__file__).parent / "screens"
VERSION = TESTED_VERSIONS[-1]


def screen_of(name: str, version: str = VERSION) -> str:
    return screen_text(SCREENS, version, name)


def _manifest(version: str = VERSION) -> dict:
    return manifest(SCREENS, version)["screens"]


RECORDED = sorted(_manifest())
COMPLETED = sorted(name for name, entry in _manifest().items() if entry["status"] == "completed")
BY_STATUS = sorted((name, entry["status"]) for name, entry in _manifest().items())


@pytest.mark.parametrize(("name", "evidence"), [
    ("idle", r"no message sent yet, prompt is waiting$"),
    ("processing", r"footer says the turn runs: \S Working esc esc edit prompt "),
    ("processing_tool", r"footer says the turn runs: \S Working (?:· \d+ B )?esc esc interrupt "),
    ("processing_retrying", r"footer says the turn runs: "),
    ("completed", r"answer after 'Summarise the repository\.' above an empty prompt$"),
    ("error", r"turn after 'Try once more\.' ended in an error: ✗ 400 messages: text content blocks must be"),
    ("error_provider_unreachable", r"turn after 'Hello\?' ended in an error: ✗ Could not connect to local "),
    ("dialog_trust_folder", r"start-up dialog: trust folder$"),
    ("waiting_user_answer", r"permission request: Do you want to run this command\?$"),
    ("waiting_user_answer_question", r"question from the model: Which database should I use\?$"),
    ("waiting_user_answer_question_answer3",
     r"question from the model: Which database should I use\?, its text field open$"),
    ("idle_cancelled", r"turn after 'Wait for the build\.' cancelled; prompt is waiting$"),
    ("processing_between_steps", r"turn after 'Step \d+, please\.' waits for the model after: \$ Shell List"),
    ("error_not_signed_in", r"not signed in: Please use /login to sign in to use Copilot$"),
    ("error_offline_without_provider", r"Copilot CLI stopped: offline mode without a model provider$"),
    ("error_bad_option", r"Copilot CLI stopped: bad command-line option$"),
    ("first_run_banner", r"still starting: \S Loading:"),
])
def test_evidence_names_the_rule(name, evidence):
    assert re.match(evidence, detect_status(screen_of(name)).evidence)


def test_a_refused_message_names_the_sign_in():
    report = detect_status(screen_of("error_not_signed_in_after_send"))
    assert report.status == TerminalStatus.ERROR
    assert report.evidence == "message refused: ✗ You must be logged in to send messages. Please run /login"


def test_a_failed_tool_is_not_the_end_of_the_turn():
    """"✗ Shell ... Failed with exit code 3" is the tool's result for the model, not a turn error."""
    report = detect_status(screen_of("processing_after_failed_tool"))
    assert report.status == TerminalStatus.PROCESSING
    assert "✗ Shell Fail on purpose" in report.evidence


def test_tool_rows_drawn_like_answers_are_not_answers():
    """Without the final answer, a turn whose last row is an MCP tool call ("● ping (MCP: probe) · ...")
    is still waiting for the model, and has no answer to extract."""
    rows = screen_of("completed_after_mcp_tool").split("\n")
    answer = next(i for i, row in enumerate(rows) if row.startswith(" ● The probe answered."))
    shortened = "\n".join(rows[:answer] + rows[answer + 1:])
    assert detect_status(shortened).status == TerminalStatus.PROCESSING
    with pytest.raises(ValueError):
        extract_last_message(shortened)


@pytest.mark.parametrize("row", [
    "ping (MCP: probe) · text: \"hello\" pong: hello",
    "Asked user Which database should I use?",
    "Read notes.txt 2 lines read",
    "Create new.txt +1",
    "Edit notes.txt +1 -1",
    "List todos (sql)",
    "Listing background agents",
    "Response was interrupted due to a server error. Retrying...",
])
def test_tool_and_note_rows_are_not_answers(row):
    assert NOT_ANSWERS.search(row)


@pytest.mark.parametrize("row", ["Read the docs first, then edit notes.txt.",
                                 "Created new.txt with one line.", "Done: 3 files changed (+12 -4)."])
def test_answers_that_mention_tools_stay_answers(row):
    assert not NOT_ANSWERS.search(row)


def test_the_scrollbar_is_not_part_of_the_answer():
    screen = screen_of("completed_after_tool-100x30")
    assert "┃" in screen  # recorded with the transcript taller than the screen
    assert "┃" not in extract_last_message(screen)


# -- properties ------------------------------------------------------------------------------------


def _box_row(screen: str) -> int:
    parsed = parse_screen(screen)
    assert parsed.box_top is not None
    return parsed.box_top + 1


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(COMPLETED), typed=st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=60))
def test_typed_input_over_a_finished_turn_is_never_completed(name, typed):
    """A message pasted into the box but not submitted yet must not read as the last turn's completion."""
    rows = screen_of(name).split("\n")
    rows[_box_row(screen_of(name))] = "❯ " + typed
    report = detect_status("\n".join(rows))
    if typed.strip() == "" or typed.strip().startswith("Type @ to mention files"):
        return
    assert report.status == TerminalStatus.PROCESSING, report


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(COMPLETED), tip=st.sampled_from([
    " ● Tip: /app", " ● MCP Servers reloaded: 1 server connected", " ● Selected custom agent: cao-recorder",
    " ! Failed to connect to MCP server \"probe\"",
]))
def test_rows_the_cli_adds_on_its_own_change_nothing(name, tip):
    """Tips, MCP status and warnings are drawn whenever they are ready, after an answer too."""
    screen = screen_of(name)
    rows = screen.split("\n")
    path_row = _box_row(screen) - 2
    rows[path_row:path_row] = ["", tip, ""]
    edited = "\n".join(rows)
    assert detect_status(edited).status == TerminalStatus.COMPLETED
    assert extract_last_message(edited) == extract_last_message(screen)


@settings(max_examples=80, deadline=None)
@given(case=st.sampled_from(BY_STATUS), cut=st.integers(0, 60))
def test_scrolling_the_top_away_keeps_the_status(case, cut):
    """Rows above the last message scroll off the screen; the status must not depend on them."""
    name, status = case
    rows = screen_of(name).split("\n")
    last_user = max((i for i, row in enumerate(rows) if row.startswith(" ❯ ")), default=0)
    scrolled = "\n".join(rows[min(cut, last_user):])
    assert detect_status(scrolled).status == TerminalStatus(status)


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(COMPLETED))
def test_a_scrollbar_on_every_row_changes_nothing(name):
    screen = screen_of(name)
    width = max(len(row) for row in screen.split("\n"))
    box = _box_row(screen) - 2
    rows = [row.ljust(width) + " ┃" if i < box and not row.endswith("┃") else row
            for i, row in enumerate(screen.split("\n"))]
    edited = "\n".join(rows)
    assert detect_status(edited).status == TerminalStatus.COMPLETED
    assert extract_last_message(edited) == extract_last_message(screen)


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(["waiting_user_answer_question_answer3",
                             "waiting_user_answer_question-100x30_answer3"]),
       typed=st.text(alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), max_size=60))
def test_text_typed_into_a_questions_field_still_waits(name, typed):
    """The field a question's "Other" row opens is drawn like the input box, under the question: text
    typed there is the answer being written, not a message waiting to be sent."""
    rows = screen_of(name).split("\n")
    rows[_box_row(screen_of(name))] = "❯ " + typed
    report = detect_status("\n".join(rows))
    assert report.status == TerminalStatus.WAITING_USER_ANSWER, report


def test_two_turns_read_differently():
    """Completed readings name the message they answer, so a kernel comparing readings can tell two
    turns with the same last rows apart."""
    first = detect_status(screen_of("completed")).evidence
    second = detect_status(screen_of("completed_after_tool")).evidence
    assert first != second
