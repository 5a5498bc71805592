"""OpenCode's prompts read from the screens recorded from the real CLI (scripts/record_screens.py).

The conformance kit checks every recorded prompt against its manifest entry and that each option's keys
were pressed on record; these tests pin the readings by hand: tool, arguments, labels, keys, default,
effects, the second stages, and that nothing else reads as a prompt.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path


from cao_hookspecs import OptionEffect, PromptKind
from cao_provider_opencode_cli.prompts import read_prompt
from cao_provider_opencode_cli.provider import TESTED_VERSIONS, opencode_provider
from cao_testkit.recorded_screens import manifest, screen_text

SCREENS = Path(__file__).parent / "screens"
VERSION = TESTED_VERSIONS[-1]
MANIFEST = manifest(SCREENS, VERSION)
screen = partial(screen_text, SCREENS, VERSION)


def _options(prompt):
    return [(o.label, o.keys, o.effect, o.takes_text) for o in prompt.options]


def test_the_provider_reads_prompts() -> None:
    assert opencode_provider().read_prompt is read_prompt


def test_permission_prompt() -> None:
    for name in ("waiting_user_answer", "waiting_user_answer-100x30"):
        prompt = read_prompt(screen(name))
        assert prompt is not None, name
        assert prompt.kind == PromptKind.PERMISSION
        assert prompt.question == "Permission required"
        assert (prompt.title, prompt.tool) == ("Shell command", "bash")
        assert dict(prompt.arguments) == {"command": "touch recorded.txt"}
        assert prompt.arguments_complete
        # The highlight is colour only: OpenCode opens the row on its first button, Right moves on.
        assert prompt.default == 1
        assert _options(prompt) == [
            ("Allow once", ("Enter",), OptionEffect.ALLOW, False),
            ("Allow always", ("Right", "Enter"), OptionEffect.ALLOW_ALWAYS, False),
            ("Reject", ("Escape",), OptionEffect.DENY, True),
        ]
        assert any("Allow once" in row for row in prompt.evidence)


def test_allow_always_asks_to_confirm_its_patterns() -> None:
    prompt = read_prompt(screen("waiting_user_answer_answer2"))
    assert prompt is not None
    assert prompt.kind == PromptKind.CONFIRMATION
    assert prompt.title == "Always allow"
    assert prompt.question == "This will allow the following patterns until OpenCode is restarted."
    assert dict(prompt.arguments) == {"patterns": "touch *"}
    assert _options(prompt) == [("Confirm", ("Enter",), OptionEffect.ALLOW_ALWAYS, False)]


def test_reject_opens_a_field_for_the_reason() -> None:
    prompt = read_prompt(screen("waiting_user_answer_answer3"))
    assert prompt is not None
    assert (prompt.kind, prompt.title) == (PromptKind.PERMISSION, "Reject permission")
    assert prompt.question == "Tell OpenCode what to do differently"
    assert prompt.free_text
    assert _options(prompt) == [("Reject", ("Enter",), OptionEffect.DENY, True)]


def test_question() -> None:
    for name in ("waiting_user_answer_question", "waiting_user_answer_question-100x30"):
        prompt = read_prompt(screen(name))
        assert prompt is not None, name
        assert prompt.kind == PromptKind.QUESTION
        assert prompt.question == "Which database should I use?"
        assert prompt.default == 1
        assert [(o.label, o.description, o.keys, o.takes_text) for o in prompt.options] == [
            ("SQLite", "Embedded", ("1",), False),
            ("Postgres", "Server", ("2",), False),
            ("Type your own answer", "", ("3",), True),
        ]
        assert {o.effect for o in prompt.options} == {OptionEffect.ANSWER}


def test_answered_prompts_in_the_scrollback_are_not_read() -> None:
    # The permission prompt, answered, scrolled up above a new idle prompt.
    answered = screen("waiting_user_answer")
    assert read_prompt(answered + "\n" + screen("idle")) is None
    assert read_prompt(screen("waiting_user_answer_question") + "\n" + screen("completed")) is None
    for name in ("completed_after_permission", "completed_after_question", "waiting_user_answer_answer1"):
        assert read_prompt(screen(name)) is None, name


def test_a_reply_quoting_a_menu_is_not_a_prompt() -> None:
    rows = screen("completed").rstrip("\n").split("\n")
    quoted = ["  Which database should I use?", "", "  1. SQLite", "  2. Postgres",
              "   Allow once   Allow always   Reject"]
    footer = max(i for i, row in enumerate(rows) if row.strip())
    assert read_prompt("\n".join(rows[:footer - 2] + quoted + rows[footer - 2:])) is None


def test_every_waiting_screen_reads_and_no_other_does() -> None:
    for name, entry in MANIFEST["screens"].items():
        read = read_prompt(screen(name))
        if entry["status"] == "waiting_user_answer":
            assert read is not None, name
        else:
            assert read is None, name
