"""The prompt reader on the documented prompts, written out by hand, and on screens that show none;
hypothesis: any text reads as a prompt or None, never an exception."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from cao_hookspecs import OptionEffect, Prompt, PromptKind
from cao_provider_antigravity_cli.prompts import read_prompt
from cao_provider_antigravity_cli.provider import TESTED_VERSIONS
from cao_testkit.recorded_screens import manifest, screen_text

SCREENS = Path(__file__).parent / "screens"
VERSION = TESTED_VERSIONS[-1]
MANIFEST = manifest(SCREENS, VERSION)
screen = partial(screen_text, SCREENS, VERSION)


def options(prompt):
    return [(o.label, o.keys, o.effect) for o in prompt.options]


def test_the_trust_question():
    prompt = read_prompt(screen("dialog_trust_folder"))
    assert prompt is not None and prompt.kind == PromptKind.STARTUP_DIALOG
    assert prompt.question == "Antigravity CLI requires permission to read, edit, and execute files here."
    assert options(prompt) == [("Yes, I trust this folder", ("Enter",), OptionEffect.ALLOW),
                               ("No, exit", ("Down", "Enter"), OptionEffect.DENY)]
    assert prompt.default == 1


def test_the_feedback_survey():
    prompt = read_prompt(screen("dialog_feedback_survey"))
    assert prompt is not None and prompt.question == "How's the CLI experience so far?"
    assert options(prompt) == [("Good", ("1", "Enter"), OptionEffect.ANSWER),
                               ("Fine", ("2", "Enter"), OptionEffect.ANSWER),
                               ("Bad", ("3", "Enter"), OptionEffect.ANSWER),
                               ("Skip", ("0", "Enter"), OptionEffect.DENY)]


def test_the_tool_approval():
    prompt = read_prompt(screen("waiting_user_answer"))
    assert prompt is not None
    assert (prompt.kind, prompt.question) == (PromptKind.PERMISSION, "Do you want to allow this action?")
    assert options(prompt) == [("Yes", ("y", "Enter"), OptionEffect.ALLOW),
                               ("No", ("n", "Enter"), OptionEffect.DENY)]


def test_answered_or_quoted_prompts_read_as_none():
    answered = "Do you want to allow this action? [y/n]\ny\n  Done.\n"
    assert read_prompt(answered) is None
    moved = screen("dialog_trust_folder").replace(" > Yes, I trust", "   Yes, I trust").replace(
        "   No, exit", " > No, exit")
    assert read_prompt(moved) is None  # the cursor is elsewhere: not the state the keys were read in
    for name in ("idle", "processing", "completed", "completed_after_tools"):
        assert read_prompt(screen(name)) is None


ROWS = st.lists(st.text(max_size=30) | st.sampled_from([
    " > Yes, I trust this folder", "   No, exit", "How's the CLI experience so far? [1] Good [0] Skip",
    "Do you want to allow this action? [y/n]", "Antigravity CLI requires permission to x", ""]), max_size=12)


@settings(max_examples=200, deadline=None)
@given(rows=ROWS)
def test_any_text_reads_as_a_prompt_or_none(rows):
    read = read_prompt("\n".join(rows))
    assert read is None or (isinstance(read, Prompt) and len(read.options) >= 2)
