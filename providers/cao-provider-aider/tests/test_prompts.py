"""The prompt reader beyond the conformance kit: what it reads on each recorded prompt, written out by
hand (the manifest's ``prompt`` entries were written by the reader itself, so they prove only that it
still reads the same), and the screens that must read as no prompt at all.

TODO (real CLI): keep these tests, with the real CLI's questions, labels, keys and rows.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cao_hookspecs import OptionEffect, PromptKind
from cao_provider_aider.prompts import read_prompt
from cao_provider_aider.provider import TESTED_VERSIONS
from cao_testkit.recorded_screens import manifest, screen_text

SCREENS = Path(__file__).parent / "screens"
VERSION = TESTED_VERSIONS[-1]
MANIFEST = manifest(SCREENS, VERSION)
screen = partial(screen_text, SCREENS, VERSION)
QUESTION = "Allow run_command? [y] Yes · [a] Yes, always for run_command · [n] No"


def test_the_permission_question():
    prompt = read_prompt(screen("waiting_user_answer"))
    assert prompt is not None
    assert (prompt.kind, prompt.question) == (PromptKind.PERMISSION, "Allow run_command?")
    assert (prompt.tool, dict(prompt.arguments)) == ("run_command", {"command": "touch notes.txt"})
    assert prompt.arguments_complete
    assert [o.label for o in prompt.options] == ["Yes", "Yes, always for run_command", "No"]
    # One key each, pressed alone: the keys the recording pressed (waiting_user_answer_answer<n>).
    assert [o.keys for o in prompt.options] == [("y",), ("a",), ("n",)]
    assert [o.effect for o in prompt.options] == [OptionEffect.ALLOW, OptionEffect.ALLOW_ALWAYS,
                                                  OptionEffect.DENY]
    assert prompt.default is None and not prompt.free_text
    assert prompt.evidence == ("⚙ run_command: touch notes.txt", QUESTION)


def test_a_command_cut_to_fit_its_row_is_marked_incomplete():
    # Policies never allow on an argument the screen cut.
    prompt = read_prompt(screen("waiting_user_answer-100x30"))
    assert prompt is not None and not prompt.arguments_complete
    assert prompt.arguments["command"].startswith("python -m pytest tests/unit")
    assert not prompt.arguments["command"].endswith("…")


@pytest.mark.parametrize("name", ["dialog_trust_folder", "dialog_trust_folder-100x30"])
def test_the_trust_dialog(name):
    prompt = read_prompt(screen(name))
    assert prompt is not None
    assert prompt.kind == PromptKind.STARTUP_DIALOG
    assert (prompt.question, prompt.tool) == ("Trust this folder?", None)
    assert [(o.label, o.keys, o.effect) for o in prompt.options] == [
        ("Yes", ("y",), OptionEffect.ALLOW), ("No, exit", ("n",), OptionEffect.DENY)]
    assert prompt.evidence[0] == "The example CLI has not run in 'project' before."


def test_an_answered_question_in_the_scrollback_is_not_open():
    # After each option the question is still on screen, above its outcome: answered, not open.
    for number in (1, 2, 3):
        after = screen(f"waiting_user_answer_answer{number}")
        assert QUESTION in after
        assert read_prompt(after) is None


@pytest.mark.parametrize("name", sorted(n for n, e in MANIFEST["screens"].items()
                                        if e["status"] != "waiting_user_answer"))
def test_no_prompt_on_screens_without_one(name):
    assert read_prompt(screen(name)) is None


@pytest.mark.parametrize("row", [
    "Allow run_command? [y] Yes",                                # one option is no menu
    "Allow run_command? [y] Yes · [n]",                          # an option without a label
    "Pick one? [y] Yes · [n] No",                                # a question the reader does not know
    "> Allow run_command? [y] Yes · [n] No",                     # typed at the prompt, not asked
])
def test_rows_that_are_not_a_question_read_as_none(row):
    assert read_prompt(f"> Create a notes file.\n{row}\n") is None


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_the_reader_never_raises(text):
    read_prompt(text)
    read_prompt(text + "\n" + QUESTION)
