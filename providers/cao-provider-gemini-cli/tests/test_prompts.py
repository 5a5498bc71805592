"""Gemini CLI's prompts read from its recorded screens: what is asked, the options, and their keys."""

from __future__ import annotations

from pathlib import Path

import pytest

from cao_hookspecs import OptionEffect, PromptKind
from cao_provider_gemini_cli.prompts import read_prompt
from cao_provider_gemini_cli.provider import gemini_cli_provider

SCREENS = Path(__file__).parent / "screens" / "0.61.0"
PROMPT_FREE = ("idle", "completed", "completed_after_tool", "processing_tool", "error", "idle-100x30",
               "completed_after_permission", "completed_after_question", "exited_bad_approval_mode")


def screen(name: str) -> str:
    return (SCREENS / f"{name}.txt").read_text(encoding="utf-8")


def test_the_provider_reads_prompts_with_this_reader() -> None:
    assert gemini_cli_provider().read_prompt is read_prompt


@pytest.mark.parametrize("name", ["waiting_user_answer", "waiting_user_answer-100x30"])
def test_shell_approval(name: str) -> None:
    prompt = read_prompt(screen(name))
    assert prompt is not None
    assert prompt.kind == PromptKind.PERMISSION
    assert prompt.question == "Allow execution of [Shell]?"
    assert prompt.tool == "Shell"
    assert dict(prompt.arguments) == {"command": "touch recorded.txt"}
    assert prompt.arguments_complete
    assert [o.label for o in prompt.options] == ["Allow once", "Allow for this session",
                                                 "No, suggest changes"]
    # Digits pick an option at once; the last prints its own key.
    assert [o.keys for o in prompt.options] == [("1",), ("2",), ("Escape",)]
    assert [o.effect for o in prompt.options] == [OptionEffect.ALLOW, OptionEffect.ALLOW_ALWAYS,
                                                  OptionEffect.DENY]
    assert [o.takes_text for o in prompt.options] == [False, False, True]
    assert prompt.default == 1


@pytest.mark.parametrize("name", ["waiting_user_answer_question", "waiting_user_answer_question-100x30"])
def test_question(name: str) -> None:
    prompt = read_prompt(screen(name))
    assert prompt is not None
    assert prompt.kind == PromptKind.QUESTION
    assert prompt.question == "Which database should I use?"
    assert prompt.title == "Answer Questions"
    assert [(o.label, o.description) for o in prompt.options] == [
        ("SQLite", "Embedded"), ("Postgres", "Server"), ("Enter a custom value", "")]
    assert [o.keys for o in prompt.options] == [("Enter",), ("Down", "Enter"), ("Down", "Down", "Enter")]
    assert [o.effect for o in prompt.options] == [OptionEffect.ANSWER, OptionEffect.ANSWER,
                                                  OptionEffect.OTHER]
    assert [o.takes_text for o in prompt.options] == [False, False, True]
    assert prompt.default == 1


def test_the_custom_value_field_takes_text() -> None:
    prompt = read_prompt(screen("waiting_user_answer_question_answer3"))
    assert prompt is not None
    assert prompt.kind == PromptKind.QUESTION
    assert prompt.free_text
    assert prompt.options == ()


@pytest.mark.parametrize("name", ["dialog_trust_folder", "dialog_trust_folder-100x30"])
def test_trust_dialog(name: str) -> None:
    prompt = read_prompt(screen(name))
    assert prompt is not None
    assert prompt.kind == PromptKind.STARTUP_DIALOG
    assert prompt.question == "Do you trust the files in this folder?"
    assert [o.label for o in prompt.options] == ["Trust folder (project)", "Trust parent folder (home)",
                                                 "Don't trust"]
    assert [o.keys for o in prompt.options] == [("1",), ("2",), ("3",)]
    assert prompt.options[2].effect == OptionEffect.DENY


def test_sign_in_dialog() -> None:
    prompt = read_prompt(screen("dialog_sign_in_method"))
    assert prompt is not None
    assert prompt.kind == PromptKind.STARTUP_DIALOG
    assert prompt.question == "How would you like to authenticate for this project?"
    assert [o.label for o in prompt.options] == ["Sign in with Google", "Use Gemini API Key", "Vertex AI"]
    assert [o.keys for o in prompt.options] == [("1",), ("2",), ("3",)]
    assert prompt.default == 2


def test_api_key_dialog() -> None:
    prompt = read_prompt(screen("dialog_api_key"))
    assert prompt is not None
    assert prompt.kind == PromptKind.STARTUP_DIALOG
    assert prompt.question == "Enter Gemini API Key"
    assert prompt.free_text
    assert [(o.label, o.keys) for o in prompt.options] == [("Submit", ("Enter",))]


def test_a_long_command_cut_by_its_box_is_incomplete() -> None:
    cut = screen("waiting_user_answer").replace("\u2502 \u2502 touch recorded.txt ",
                                                "\u2502 \u2502 ... first 40 lines hidden ...", 1)
    prompt = read_prompt(cut)
    assert prompt is not None
    assert not prompt.arguments_complete


@pytest.mark.parametrize("name", PROMPT_FREE)
def test_no_prompt_on_prompt_free_screens(name: str) -> None:
    assert read_prompt(screen(name)) is None


def test_an_answered_approval_above_a_new_prompt_is_not_read() -> None:
    asked = screen("waiting_user_answer").rstrip("\n").split("\n")
    idle = screen("completed_after_permission").rstrip("\n").split("\n")
    assert read_prompt("\n".join([*asked, *idle[-8:]])) is None


def test_a_reply_quoting_the_menu_is_not_read() -> None:
    rows = screen("completed").rstrip("\n").split("\n")
    box = [row for row in screen("waiting_user_answer").split("\n")
           if row.startswith(("\u256d", "\u2502", "\u2570"))]
    answer = next(i for i, row in enumerate(rows) if row.startswith("\u2726 "))
    quoted = [*rows[:answer + 1], *("  " + row for row in box), *rows[answer + 1:]]
    assert read_prompt("\n".join(quoted)) is None
