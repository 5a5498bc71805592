"""Kimi CLI's prompts read from the screens recorded from the real CLI (scripts/record_screens.py).

The conformance kit checks every recorded prompt against its manifest entry and that each option's keys
were pressed on record; these tests pin the readings by hand: tool, arguments, labels, keys, default,
effects, the text fields two options open, the start-up gates, and that nothing else reads as a prompt.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path


from cao_hookspecs import OptionEffect, PromptKind
from cao_provider_kimi_cli.prompts import read_prompt
from cao_provider_kimi_cli.provider import TESTED_VERSIONS, kimi_cli_provider
from cao_testkit.recorded_screens import manifest, screen_text

SCREENS = Path(__file__).parent / "screens"
VERSION = TESTED_VERSIONS[-1]
MANIFEST = manifest(SCREENS, VERSION)
screen = partial(screen_text, SCREENS, VERSION)


def _options(prompt):
    return [(o.label, o.keys, o.effect, o.takes_text) for o in prompt.options]


def test_the_provider_reads_prompts() -> None:
    assert kimi_cli_provider().read_prompt is read_prompt


def test_approval_panel() -> None:
    for name in ("waiting_user_answer", "waiting_user_answer-100x30"):
        prompt = read_prompt(screen(name))
        assert prompt is not None, name
        assert prompt.kind == PromptKind.PERMISSION
        assert prompt.question == "Shell is requesting approval to run command:"
        assert (prompt.tool, dict(prompt.arguments)) == ("Shell", {"command": "touch recorded.txt"})
        assert prompt.default == 1
        # A digit alone picks and submits (recorded); the hint row prints them.
        assert _options(prompt) == [
            ("Approve once", ("1",), OptionEffect.ALLOW, False),
            ("Approve for this session", ("2",), OptionEffect.ALLOW_ALWAYS, False),
            ("Reject", ("3",), OptionEffect.DENY, False),
            ("Reject, tell the model what to do instead", ("4",), OptionEffect.DENY, True),
        ]
        assert any("[1] Approve once" in row for row in prompt.evidence)


def test_the_feedback_field_is_a_prompt_of_its_own() -> None:
    prompt = read_prompt(screen("waiting_user_answer_answer4"))
    assert prompt is not None
    assert prompt.kind == PromptKind.PERMISSION and prompt.free_text
    assert prompt.tool == "Shell"
    # Digits are typed into the field now; Esc rejects without feedback (recorded).
    assert _options(prompt) == [("Reject", ("Escape",), OptionEffect.DENY, False)]
    assert prompt.fingerprint != read_prompt(screen("waiting_user_answer")).fingerprint


def test_question_panel() -> None:
    for name in ("waiting_user_answer_question", "waiting_user_answer_question-100x30"):
        prompt = read_prompt(screen(name))
        assert prompt is not None, name
        assert prompt.kind == PromptKind.QUESTION
        assert prompt.question == "Which database should I use?"
        assert prompt.default == 1
        assert [(o.label, o.description, o.keys, o.takes_text) for o in prompt.options] == [
            ("SQLite", "Embedded", ("1",), False),
            ("Postgres", "Server", ("2",), False),
            ("Other", "", ("3",), True),
        ]
        assert {o.effect for o in prompt.options} == {OptionEffect.ANSWER}


def test_other_opens_a_field() -> None:
    prompt = read_prompt(screen("waiting_user_answer_question_answer3"))
    assert prompt is not None
    assert prompt.kind == PromptKind.QUESTION and prompt.free_text
    assert _options(prompt) == [("Dismiss", ("Escape",), OptionEffect.OTHER, False)]


def test_start_up_gates() -> None:
    update = read_prompt(screen("dialog_update_gate"))
    assert update is not None
    assert (update.kind, update.question) == (PromptKind.STARTUP_DIALOG, "kimi-cli update available")
    assert _options(update) == [
        ("Upgrade now (uv tool upgrade kimi-cli)", ("Enter",), OptionEffect.ALLOW, False),
        ("Not now, remind me next time", ("q",), OptionEffect.DENY, False),
        ("Skip reminders for version 9.9.9", ("s",), OptionEffect.DENY, False),
    ]
    assert update.default == 1
    migration = read_prompt(screen("dialog_migration_gate"))
    assert migration is not None
    assert migration.question == "kimi-cli is no longer maintained"
    assert [o.keys for o in migration.options] == [("Enter",), ("q",)]
    assert [o.effect for o in migration.options] == [OptionEffect.ALLOW, OptionEffect.DENY]


def test_answered_prompts_in_the_scrollback_are_not_read() -> None:
    for name in ("completed_after_approval", "completed_after_question", "waiting_user_answer_answer3",
                 "dialog_update_gate_answer2"):
        assert read_prompt(screen(name)) is None, name
    # A gate answered, then Kimi's prompt below it.
    assert read_prompt(screen("dialog_migration_gate") + "\n" + screen("idle")) is None


def test_a_reply_quoting_a_menu_is_not_a_prompt() -> None:
    rows = screen("completed").rstrip("\n").split("\n")
    header = max(i for i, row in enumerate(rows) if row.startswith("── input "))
    quoted = ["• Pick one:", "  → [1] Approve once", "    [2] Reject", "  [q]      Not now", ""]
    assert read_prompt("\n".join(rows[:header] + quoted + rows[header:])) is None


def test_every_waiting_screen_reads_and_no_other_does() -> None:
    for name, entry in MANIFEST["screens"].items():
        read = read_prompt(screen(name))
        if entry["status"] == "waiting_user_answer":
            assert read is not None, name
        else:
            assert read is None, name
