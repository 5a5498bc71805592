"""OpenCode-specific readings of the screens recorded from the real CLI (scripts/record_screens.py).

The conformance kit (test_conformance.py) checks every recorded screen's status, evidence and answer;
these tests pin what is particular to OpenCode's inline interface: which row decides, answers of any
shape between a tool's output and the ``▣`` row, the scrollback above a screen, and the live area.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from cao_hookspecs import TerminalStatus
from cao_provider_opencode_cli.provider import TESTED_VERSIONS
from cao_provider_opencode_cli.screen import detect_status, extract_last_message, parse_screen
from cao_testkit.recorded_screens import manifest, screen_text

SCREENS = Path(__file__).parent / "screens"
VERSION = TESTED_VERSIONS[-1]
MANIFEST = manifest(SCREENS, VERSION)
#: ``screen(name)``: the text of the newest tested version's screen ``name``.
screen = partial(screen_text, SCREENS, VERSION)


@pytest.mark.parametrize(("name", "evidence"), [
    ("idle", "no message sent yet"),
    ("processing_typed_unsent", "not sent yet: Fix the flaky test"),
    ("processing", "esc interrupt"),
    ("processing_tool", "esc interrupt"),
    ("completed", "after 'Summarise the repository.' finished: ▣ Cao-Recorder"),
    ("completed_after_tool", "after 'Look around and report.' finished"),
    ("error", "ended in an error: invalid x-api-key"),
    ("error_no_provider", "ProviderNoProvidersError: No providers are available"),
    ("exited_bad_config", "config file is not valid"),
    # OpenCode prints its usage for an option it does not know (as a release without --mini would).
    ("exited_unknown_option", "printed its usage"),
    ("idle_interrupted", "interrupted"),
    ("waiting_user_answer", "permission prompt: Shell command"),
    ("waiting_user_answer_question", "Which database should I use?"),
])
def test_evidence_names_the_deciding_row(name, evidence):
    assert evidence in detect_status(screen(name)).evidence


def test_the_live_area_is_told_from_the_transcript():
    typed = parse_screen(screen("processing_typed_unsent"))
    assert typed.prompt == ["Fix the flaky test"] and not typed.placeholder
    idle = parse_screen(screen("idle"))
    assert idle.prompt == [] and idle.placeholder
    done = parse_screen(screen("completed_after_tool"))
    assert done.prompt == [] and done.transcript[-1] == "" and done.footer.endswith("ctrl+p cmd")


def test_the_error_is_the_text_after_the_turns_row():
    # The 401 is printed twice: as the turn's text and, after its ▣ row, as OpenCode's report of the failure.
    rows = screen("error").rstrip("\n").split("\n")
    marker = max(i for i, row in enumerate(rows) if row.startswith("▣ "))
    assert rows[marker - 2] == rows[marker + 2] == "invalid x-api-key"


# -- answers of any shape ---------------------------------------------------------------------------

_WORD = st.text(alphabet=st.characters(codec="utf-8", categories=("L", "N")), min_size=1, max_size=9)
_ROW = st.lists(_WORD, min_size=1, max_size=8).map(" ".join)
_PARAGRAPH = st.lists(_ROW, min_size=1, max_size=4)
_ANSWER = st.lists(_PARAGRAPH, min_size=1, max_size=4).map(lambda ps: "\n\n".join("\n".join(p) for p in ps))


def _with_answer(name: str, answer: str) -> str:
    """A recorded completed screen with its answer rows replaced by ``answer``."""
    rows = screen(name).rstrip("\n").split("\n")
    recorded = MANIFEST["screens"][name]["last_message"].split("\n")
    marker = max(i for i, row in enumerate(rows) if row.startswith("▣ "))
    start = marker - 1 - len(recorded)
    assert rows[start:marker - 1] == recorded
    return "\n".join([*rows[:start], *answer.split("\n"), *rows[marker - 1:]])


@settings(max_examples=80, deadline=None)
@given(answer=_ANSWER, name=st.sampled_from(["completed", "completed_after_tool",
                                             "completed_after_permission", "completed_after_question",
                                             "completed_after_tool-100x30"]))
def test_any_answer_is_extracted_exactly(answer, name):
    assume(answer.split("\n")[-1].strip() != "Aborted")
    text = _with_answer(name, answer)
    assert detect_status(text).status == TerminalStatus.COMPLETED
    assert extract_last_message(text) == answer


@settings(max_examples=40, deadline=None)
@given(answer=_ANSWER, thinking=_ROW)
def test_shown_reasoning_is_not_part_of_the_answer(answer, thinking):
    text = _with_answer("completed", f"Thinking: {thinking}\n\n{answer}")
    assert extract_last_message(text) == answer


def test_scrollback_above_the_screen_changes_nothing():
    # The kernel reads answers with history above the screen: earlier turns, the header, a replay.
    history = screen("completed_after_tool") + "\n" + screen("error")
    latest = screen("completed_after_tool-100x30")
    assert extract_last_message(history + latest) == MANIFEST["screens"]["completed_after_tool-100x30"][
        "last_message"]
    assert detect_status(history + latest).status == TerminalStatus.COMPLETED


def test_an_answer_longer_than_the_screen_is_read_from_the_scrollback():
    long = "\n".join(f"Row {n} of a long report." for n in range(1, 120))
    text = _with_answer("completed-100x30", long)
    assert extract_last_message(text) == long


# -- the live area decides first --------------------------------------------------------------------


_COMPLETED = [name for name, entry in MANIFEST["screens"].items() if entry["status"] == "completed"]


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(_COMPLETED), typed=_ROW)
def test_text_typed_into_the_prompt_is_not_a_finished_turn(name, typed):
    rows = screen(name).rstrip("\n").split("\n")
    assert rows[-3] == "" and rows[-2] == ""
    rows[-3] = typed
    text = "\n".join(rows)
    report = detect_status(text)
    assert report.status == TerminalStatus.PROCESSING and "not sent yet" in report.evidence
    with pytest.raises(ValueError):
        extract_last_message(text)


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(_COMPLETED), error=_ROW)
def test_text_after_the_turns_row_is_an_error(name, error):
    rows = screen(name).rstrip("\n").split("\n")
    marker = max(i for i, row in enumerate(rows) if row.startswith("▣ "))
    text = "\n".join([*rows[:marker + 1], "", error, *rows[marker + 1:]])
    report = detect_status(text)
    assert report.status == TerminalStatus.ERROR and error.strip() in report.evidence
    with pytest.raises(ValueError, match="error"):
        extract_last_message(text)


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(_COMPLETED), message=_ROW)
def test_a_new_message_without_its_row_is_still_running(name, message):
    rows = screen(name).rstrip("\n").split("\n")
    text = "\n".join([*rows[:-4], "", f"› {message}", *rows[-4:]])
    assert detect_status(text).status == TerminalStatus.PROCESSING
    with pytest.raises(ValueError):
        extract_last_message(text)


def test_a_stack_trace_before_the_turns_row_is_an_error():
    text = screen("error_no_provider")
    assert detect_status(text).status == TerminalStatus.ERROR
    with pytest.raises(ValueError, match="error"):
        extract_last_message(text)


@settings(max_examples=60, deadline=None)
@given(noise=st.text(max_size=200))
def test_random_text_without_the_footer_is_never_ready(noise):
    report = detect_status(noise)
    assume(not noise.rstrip().endswith("ctrl+p cmd"))
    assert report.status not in (TerminalStatus.IDLE, TerminalStatus.COMPLETED)


def test_an_answer_whose_start_is_not_in_the_text_asks_for_more_scrollback():
    long = "\n".join(f"Row {n} of a long report." for n in range(1, 120))
    rows = _with_answer("completed-100x30", long).split("\n")
    visible = "\n".join(rows[-30:])
    assert detect_status(visible).status == TerminalStatus.COMPLETED
    with pytest.raises(ValueError, match="scrollback|above"):
        extract_last_message(visible)

