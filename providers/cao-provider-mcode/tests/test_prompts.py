"""The prompt reader on the documented approval question, written out by hand, and on screens that
show none; hypothesis: any text reads as a prompt or None, never an exception."""

from __future__ import annotations

from functools import partial
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from cao_hookspecs import OptionEffect, Prompt, PromptKind
from cao_provider_mcode.prompts import read_prompt
from cao_provider_mcode.provider import TESTED_VERSIONS
from cao_testkit.recorded_screens import manifest, screen_text

SCREENS = Path(__file__).parent / "screens"
VERSION = TESTED_VERSIONS[-1]
MANIFEST = manifest(SCREENS, VERSION)
screen = partial(screen_text, SCREENS, VERSION)


def test_the_approval_question():
    prompt = read_prompt(screen("waiting_user_answer"))
    assert prompt is not None
    assert (prompt.kind, prompt.title, prompt.question) == (PromptKind.PERMISSION, "Approval needed",
                                                            "Run this command?")
    assert (prompt.tool, dict(prompt.arguments), prompt.arguments_complete) == (
        "shell", {"command": "pnpm test"}, True)
    assert [(o.label, o.keys, o.effect) for o in prompt.options] == [
        ("Allow for this conversation", ("1",), OptionEffect.ALLOW),
        ("Always allow this action", ("2",), OptionEffect.ALLOW_ALWAYS),
        ("Deny", ("3",), OptionEffect.DENY),
    ]


def test_a_cut_command_is_incomplete():
    text = screen("waiting_user_answer").replace("$ pnpm test", "$ pnpm test --filter web…")
    prompt = read_prompt(text)
    assert prompt is not None and not prompt.arguments_complete
    assert prompt.arguments["command"] == "pnpm test --filter web"


def test_an_answered_question_reads_as_none():
    answered = screen("waiting_user_answer").rstrip("\n") + "\n● Tests pass.\n└ Completed in 9s\n"
    assert read_prompt(answered) is None
    for name in ("idle", "processing", "completed"):
        assert read_prompt(screen(name)) is None


ROWS = st.lists(st.text(max_size=30) | st.sampled_from(["Approval needed", "Run this command?", "$ ls",
                                                         "1 Allow", "2 Deny", "3 x", ""]), max_size=12)


@settings(max_examples=200, deadline=None)
@given(rows=ROWS)
def test_any_text_reads_as_a_prompt_or_none(rows):
    read = read_prompt("\n".join(rows))
    assert read is None or (isinstance(read, Prompt) and len(read.options) >= 2)
