"""Codex's prompts read from its recorded screens: what is asked, the options, and the keys that answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from cao_hookspecs import OptionEffect, PromptKind
from cao_provider_codex.prompts import read_prompt
from cao_provider_codex.provider import codex_provider

SCREENS = Path(__file__).parent / "screens" / "0.169.0"
PROMPT_FREE = ("idle-start", "completed-reply", "completed-after-tool", "processing-tool", "error-login",
               "idle-update-skipped", "idle-interrupted", "processing-typed-unsent")


def screen(name: str) -> str:
    return (SCREENS / f"{name}.txt").read_text(encoding="utf-8")


def test_the_provider_reads_prompts_with_this_reader() -> None:
    assert codex_provider().read_prompt is read_prompt


@pytest.mark.parametrize("name", ["waiting-approval", "waiting-approval-100x30"])
def test_command_approval(name: str) -> None:
    prompt = read_prompt(screen(name))
    assert prompt is not None
    assert prompt.kind == PromptKind.PERMISSION
    assert prompt.question == "Would you like to run the following command?"
    assert prompt.tool == "shell"
    assert dict(prompt.arguments) == {"command": "touch marker", "reason": "Create the marker file?"}
    assert prompt.arguments_complete
    assert [o.label for o in prompt.options] == [
        "Yes, proceed", "Yes, and don't ask again for commands that start with `touch marker`",
        "No, and tell Codex what to do differently"]
    # The keys each label prints, not the cursor's.
    assert [o.keys for o in prompt.options] == [("y",), ("p",), ("Escape",)]
    assert [o.effect for o in prompt.options] == [OptionEffect.ALLOW, OptionEffect.ALLOW_ALWAYS,
                                                  OptionEffect.DENY]
    assert [o.takes_text for o in prompt.options] == [False, False, True]
    assert prompt.default == 1
    assert prompt.evidence[-1].strip() == "Press enter to confirm or esc to cancel"


@pytest.mark.parametrize("name", ["waiting-question", "waiting-question-100x30"])
def test_question(name: str) -> None:
    prompt = read_prompt(screen(name))
    assert prompt is not None
    assert prompt.kind == PromptKind.QUESTION
    assert prompt.question == "Which database should I use?"
    assert prompt.title == "Question 1/1"
    assert [(o.label, o.description) for o in prompt.options] == [
        ("SQLite", "Embedded"), ("Postgres", "Server"),
        ("None of the above", "Optionally, add details in notes (tab)")]
    assert [o.keys for o in prompt.options] == [("Enter",), ("Down", "Enter"), ("Down", "Down", "Enter")]
    assert [o.effect for o in prompt.options] == [OptionEffect.ANSWER, OptionEffect.ANSWER,
                                                  OptionEffect.OTHER]
    assert [o.takes_text for o in prompt.options] == [False, False, True]
    assert prompt.default == 1
    assert not prompt.free_text


def test_a_question_with_its_notes_field_open_takes_text() -> None:
    prompt = read_prompt(screen("waiting-question_answer3"))
    assert prompt is not None
    assert prompt.kind == PromptKind.QUESTION
    assert prompt.question == "Which database should I use?"
    assert prompt.free_text
    assert prompt.options == ()


@pytest.mark.parametrize("name", ["waiting-trust-folder", "waiting-trust-folder-100x30"])
def test_trust_folder_dialog(name: str) -> None:
    prompt = read_prompt(screen(name))
    assert prompt is not None
    assert prompt.kind == PromptKind.STARTUP_DIALOG
    assert prompt.question == "Trust this folder?"
    assert prompt.title == "Folder access"
    assert dict(prompt.arguments) == {"folder": "~/repo"}
    assert [o.label for o in prompt.options] == ["Trust and continue", "Back to Agent Command Center"]
    assert [o.keys for o in prompt.options] == [("Enter",), ("Down", "Enter")]
    assert prompt.default == 1


def test_update_dialog() -> None:
    prompt = read_prompt(screen("waiting-update-prompt"))
    assert prompt is not None
    assert prompt.kind == PromptKind.STARTUP_DIALOG
    assert prompt.question.startswith("Update available \u00b7 0.169.0 \u2192 ")
    assert [o.label for o in prompt.options] == [
        "Update now (runs `npm install -g @openai/codex`)", "Skip", "Skip until next version"]
    assert [o.keys for o in prompt.options] == [("Enter",), ("Down", "Enter"), ("Down", "Down", "Enter")]
    assert [o.effect for o in prompt.options] == [OptionEffect.ALLOW, OptionEffect.DENY, OptionEffect.DENY]


def test_the_cursor_row_is_the_default() -> None:
    moved = screen("waiting-update-prompt").replace("\u203a 1. Update now", "  1. Update now").replace(
        "  2. Skip\n", "\u203a 2. Skip\n")
    prompt = read_prompt(moved)
    assert prompt is not None
    assert prompt.default == 2
    assert [o.keys for o in prompt.options] == [("Up", "Enter"), ("Enter",), ("Down", "Enter")]


def test_a_cut_command_is_marked_incomplete() -> None:
    cut = screen("waiting-approval").replace("  $ touch marker", "  $ touch marker && rm -rf buil\u2026")
    prompt = read_prompt(cut)
    assert prompt is not None
    assert prompt.arguments["command"] == "touch marker && rm -rf buil\u2026"
    assert not prompt.arguments_complete


@pytest.mark.parametrize("name", PROMPT_FREE)
def test_no_prompt_on_prompt_free_screens(name: str) -> None:
    assert read_prompt(screen(name)) is None


def test_an_answered_approval_above_a_new_prompt_is_not_read() -> None:
    # The approval's rows stay in the scrollback once answered; the composer under them is what is live.
    asked = screen("waiting-approval").rstrip("\n").split("\n")
    idle = screen("idle-start").rstrip("\n").split("\n")
    composer = max(i for i, row in enumerate(idle) if row.startswith("\u203a"))
    assert read_prompt("\n".join([*asked, "", *idle[composer - 1:]])) is None


def test_a_reply_quoting_the_menu_is_not_read() -> None:
    rows = screen("completed-reply").rstrip("\n").split("\n")
    menu = [row for row in screen("waiting-approval").split("\n")
            if "Would you like to run" in row or row.lstrip(" \u203a")[:2] in ("1.", "2.", "3.")
            or "Press enter to confirm" in row]
    answer = next(i for i, row in enumerate(rows) if row.startswith("\u2022 "))
    quoted = [*rows[:answer + 1], *("  " + row.strip() for row in menu), *rows[answer + 1:]]
    assert read_prompt("\n".join(quoted)) is None
