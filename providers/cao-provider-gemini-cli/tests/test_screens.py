"""The detector and the extractor on recorded screens, edited recordings and generated answers.

The conformance kit (test_conformance.py) checks each recorded screen against its manifest; these tests
pin the rules that decide between close readings, and the properties the parsers must keep on any input.
"""

from __future__ import annotations

import re
from functools import partial
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cao_hookspecs import TerminalStatus
from cao_provider_gemini_cli.provider import TESTED_VERSIONS, gemini_cli_provider
from cao_provider_gemini_cli.screen import detect_status, extract_last_message, parse_screen
from cao_testkit.recorded_screens import manifest, screen_text

SCREENS = Path(__file__).parent / "screens"
VERSION = TESTED_VERSIONS[-1]
MANIFEST = manifest(SCREENS, VERSION)
#: ``screen(name)``: the text of the newest tested version's screen ``name``.
screen = partial(screen_text, SCREENS, VERSION)


def rows(text: str) -> list[str]:
    return text.split("\n")


def replace_row(text: str, pattern: str, new: str) -> str:
    lines = rows(text)
    at = max(i for i, line in enumerate(lines) if re.search(pattern, line))
    lines[at] = new
    return "\n".join(lines)


def test_every_recorded_version_has_the_dialog_and_exit_screens():
    names = set(MANIFEST["screens"])
    assert {"dialog_trust_folder", "dialog_sign_in_method", "dialog_api_key", "exited_bad_approval_mode",
            "unknown_starting"} <= names
    assert any(entry.get("size") == [100, 30] for entry in MANIFEST["screens"].values())


def test_text_typed_but_not_sent_keeps_the_last_turns_reading():
    # Gemini CLI clears the prompt a frame before the message moves up; both frames must read alike, or
    # the kernel would take the old answer for the new one.
    done = screen("completed")
    typed = replace_row(done, r"Type your message", " * Run the tests and report back")
    assert parse_screen(typed).pending_input == "Run the tests and report back"
    assert detect_status(typed) == detect_status(done)
    assert extract_last_message(typed) == extract_last_message(done)
    idle = screen("idle")
    assert detect_status(replace_row(idle, r"Type your message", " * hello")) == detect_status(idle)


def test_the_provider_record_reads_the_unsent_text_at_the_prompt():
    # The kernel presses Enter again when a typed task still sits there (a busy start-up's newline).
    pending = gemini_cli_provider().pending_input
    assert pending is not None
    assert pending(replace_row(screen("idle"), r"Type your message", " * Run the tests")) == "Run the tests"
    assert pending(screen("idle")) == ""


def test_readings_of_two_turns_differ_even_with_the_same_answer():
    done = screen("completed")
    again = done.replace(" > Summarise the repository.", " > Summarise it once more.")
    assert detect_status(again).status == TerminalStatus.COMPLETED
    assert detect_status(again).evidence != detect_status(done).evidence


def test_the_message_just_sent_reads_as_processing_until_something_is_drawn():
    done = screen("completed")
    sent = done.replace("✦ The repository has 3 packages; all tests pass.", " > And now?")
    report = detect_status(sent)
    assert report.status == TerminalStatus.PROCESSING and "nothing drawn" in report.evidence
    with pytest.raises(ValueError, match="not finished"):
        extract_last_message(sent)


def test_a_cancelled_turn_is_idle():
    cancelled = screen("completed").replace("✦ The repository has 3 packages; all tests pass.",
                                            "ℹ Request cancelled.")
    assert detect_status(cancelled).status == TerminalStatus.IDLE


def test_a_tool_still_running_without_the_status_row_is_processing():
    busy = screen("processing_tool")
    without_spinner = "\n".join(line for line in rows(busy) if "esc to cancel" not in line)
    report = detect_status(without_spinner)
    assert report.status == TerminalStatus.PROCESSING and report.evidence.startswith("tool running")


def test_a_compact_tool_row_still_running_is_processing():
    done = screen("completed")
    answer = "✦ The repository has 3 packages; all tests pass."
    running = done.replace(answer, "  ⊷  ReadManyFiles  Attempting to read files from notes.txt")
    assert detect_status(running).status == TerminalStatus.PROCESSING
    read = "  ✓  ReadManyFiles  Attempting to read files from notes.txt → Read 1 file(s)"
    finished = done.replace(answer, f"{read}\n\n{answer}")
    assert detect_status(finished).status == TerminalStatus.COMPLETED
    assert extract_last_message(finished) == "The repository has 3 packages; all tests pass."


def test_an_answer_followed_by_notes_is_still_the_answer():
    done = screen("completed")
    answer = "✦ The repository has 3 packages; all tests pass.\n"
    noted = done.replace(answer, answer + "\nℹ Some note from the CLI.\n")
    assert detect_status(noted).status == TerminalStatus.COMPLETED
    assert extract_last_message(noted) == "The repository has 3 packages; all tests pass."


def test_an_error_after_an_answer_is_an_error_and_has_no_answer():
    failed = screen("error")
    assert detect_status(failed).status == TerminalStatus.ERROR
    with pytest.raises(ValueError, match="ended in an error"):
        extract_last_message(failed)


def test_scrollback_above_the_screen_does_not_change_the_answer():
    done = screen("completed_after_running_tool")
    older = screen("completed_after_tool")
    assert extract_last_message(older + "\n" + done) == "The build finished."


def test_the_trust_dialog_left_above_a_restart_is_not_answered_again():
    dialog = screen("dialog_trust_folder")
    restarting = dialog + "\n\n Gemini CLI is restarting to apply the trust changes...\n"
    report = detect_status(restarting)
    assert report.status == TerminalStatus.UNKNOWN and "restarting" in report.evidence
    # ... and the next dialog drawn below it is the live one.
    after = restarting + screen("dialog_sign_in_method")
    assert detect_status(after).evidence == "start-up dialog: sign-in method"


def test_a_sign_in_screen_without_a_key_needs_a_person():
    needs_key = screen("dialog_sign_in_method").replace(
        'Existing API key detected (GEMINI_API_KEY). Select "Gemini API Key" option to use it.',
        "No authentication method selected.")
    report = detect_status(needs_key)
    assert report.status == TerminalStatus.ERROR and "sign-in" in report.evidence


def test_the_goodbye_screen_is_not_a_finished_turn():
    goodbye = "\n".join([" > /quit", "", "╭" + "─" * 32 + "╮", "│  Agent powering down. Goodbye! │",
                         "╰" + "─" * 32 + "╯", ""])
    assert detect_status(goodbye).status == TerminalStatus.UNKNOWN


# -- properties -------------------------------------------------------------------------------------

# Answer rows as Gemini CLI prints them: no leading blanks, no markers it would render differently.
_ROW_CHARS = st.characters(codec="utf-8", exclude_categories=("Cc", "Cs", "Zl", "Zp"),
                           exclude_characters="│")
answer_rows = st.lists(
    st.text(_ROW_CHARS, min_size=1, max_size=60).map(str.strip)
    .filter(lambda row: row and row[0] not in "#*-+>`|0123456789"),
    min_size=1, max_size=6)


@given(answer_rows, st.sampled_from(["completed", "completed-100x30", "completed_after_tool",
                                     "completed_after_permission"]))
def test_a_generated_answer_is_extracted_exactly(lines, name):
    recorded = screen(name)
    answer = MANIFEST["screens"][name]["last_message"]
    shown = "\n".join(["✦ " + lines[0], *("  " + line for line in lines[1:])])
    recorded_rows = "\n".join(["✦ " + answer.split("\n")[0], *(("  " + line) if line else ""
                                                                 for line in answer.split("\n")[1:])])
    assert recorded_rows in recorded
    generated = recorded.replace(recorded_rows, shown)
    assert detect_status(generated).status == TerminalStatus.COMPLETED
    assert extract_last_message(generated) == "\n".join(lines)


@given(st.text(max_size=400), st.sampled_from(sorted(MANIFEST["screens"])))
def test_detector_and_extractor_hold_on_any_prompt_text(text, name):
    # Whatever sits in the prompt (typed, pasted, garbage) the parsers answer, and never with a crash.
    recorded = screen(name)
    if "Type your message" not in recorded:
        return
    edited = replace_row(recorded, r"Type your message", " * " + text.replace("\n", " "))
    report = detect_status(edited)
    assert report.evidence
    try:
        extract_last_message(edited)
    except ValueError:
        pass


@given(st.text(max_size=300))
def test_a_prompt_with_any_user_message_is_never_completed_without_an_answer(message):
    message = message.replace("\n", " ").strip()
    if not message:
        return
    sent = screen("idle").replace("\n\n" + "─", f"\n > {message}\n\n" + "─", 1)
    assert detect_status(sent).status != TerminalStatus.COMPLETED
