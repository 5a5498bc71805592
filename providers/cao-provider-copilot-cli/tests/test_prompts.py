"""Copilot CLI's prompts read from recorded screens: what is asked, the options and the keys that pick
them (the recordings under tests/screens/ press each one)."""

from __future__ import annotations

from pathlib import Path


from cao_hookspecs import OptionEffect, PromptKind
from cao_provider_copilot_cli.dialogs import STARTUP_DIALOGS
from cao_provider_copilot_cli.prompts import read_prompt
from cao_provider_copilot_cli.provider import copilot_cli_provider

SCREENS = Path(__file__).parent / "screens" / "1.0.102"


def screen(name: str) -> str:
    return (SCREENS / f"{name}.txt").read_text(encoding="utf-8")


def test_the_provider_reads_prompts() -> None:
    assert copilot_cli_provider().read_prompt is read_prompt


def test_a_shell_permission_names_the_command() -> None:
    prompt = read_prompt(screen("waiting_user_answer"))
    assert prompt is not None
    assert prompt.kind is PromptKind.PERMISSION
    assert (prompt.title, prompt.tool, prompt.question) == (
        "Create a file", "shell", "Do you want to run this command?")
    assert dict(prompt.arguments) == {"command": "touch recorded.txt", "description": "Create a file"}
    assert [o.label for o in prompt.options] == [
        "Yes", "Yes, and don't ask again for `touch` in this directory (~/project)",
        "No, and tell Copilot what to do differently"]
    # The key printed in the label: the digit only moves the cursor to that row.
    assert [o.keys for o in prompt.options] == [("1",), ("2",), ("Escape",)]
    assert [o.effect for o in prompt.options] == [
        OptionEffect.ALLOW, OptionEffect.ALLOW_ALWAYS, OptionEffect.DENY]
    assert prompt.default == 1 and prompt.arguments_complete


def test_a_permission_reads_the_same_on_a_narrow_terminal() -> None:
    wide = read_prompt(screen("waiting_user_answer"))
    narrow = read_prompt(screen("waiting_user_answer-100x30"))
    assert wide is not None and narrow is not None
    assert narrow.fingerprint == wide.fingerprint


def test_a_question_is_an_unnumbered_menu_answered_with_arrows() -> None:
    prompt = read_prompt(screen("waiting_user_answer_question"))
    assert prompt is not None
    assert prompt.kind is PromptKind.QUESTION
    assert (prompt.title, prompt.question) == ("Database", "Which database should I use?")
    assert [o.label for o in prompt.options] == ["SQLite", "Postgres", "Other (type your answer)"]
    # "Other" takes the arrows alone: its row opens a text field, which takes the answer and its Enter
    # (an Enter sent with the arrows hits the empty field, which refuses it and moves the cursor back).
    assert [o.keys for o in prompt.options] == [("Enter",), ("Down", "Enter"), ("Down", "Down")]
    assert [o.effect for o in prompt.options] == [OptionEffect.ANSWER] * 3
    assert [o.takes_text for o in prompt.options] == [False, False, True]
    # Typed at the menu, text is dropped and its Enter picks the cursor row: text goes through "Other".
    assert not prompt.free_text and prompt.default == 1


def test_a_questions_open_field_takes_text_and_offers_no_keys() -> None:
    menu = read_prompt(screen("waiting_user_answer_question"))
    for name in ("waiting_user_answer_question_answer3", "waiting_user_answer_question-100x30_answer3"):
        field = read_prompt(screen(name))
        assert field is not None and menu is not None, name
        assert field.kind is PromptKind.QUESTION
        assert (field.title, field.question) == (menu.title, menu.question)
        assert field.options == () and field.free_text and field.default is None
        assert field.evidence[-1] == "❯ Type your answer..."
        # Not the menu any more: the kernel sees its answer's keys took effect.
        assert field.fingerprint != menu.fingerprint
    typed = screen("waiting_user_answer_question_answer3").replace("❯ Type your answer...", "❯ MySQL")
    field = read_prompt(typed)
    assert field is not None and field.free_text and field.evidence[-1] == "❯ MySQL"


def test_the_field_is_read_only_under_the_question_with_the_cursor_on_other() -> None:
    opened = screen("waiting_user_answer_question_answer3")
    on_postgres = (opened.replace("   Postgres", " ❯ Postgres")
                   .replace(" ❯ Other (type your answer below)", "   Other (type your answer below)"))
    assert on_postgres != opened and read_prompt(on_postgres) is None


def test_the_trust_dialog_uses_the_printed_key_and_offers_what_the_kernel_sends() -> None:
    prompt = read_prompt(screen("dialog_trust_folder"))
    assert prompt is not None
    assert prompt.kind is PromptKind.STARTUP_DIALOG
    assert (prompt.title, prompt.question) == (
        "Confirm folder trust", "Do you trust the files in this folder?")
    assert [(o.label, o.keys, o.effect) for o in prompt.options] == [
        ("Yes", ("1",), OptionEffect.ALLOW),
        ("Yes, and remember this folder for future sessions", ("2",), OptionEffect.ALLOW_ALWAYS),
        ("No", ("Escape",), OptionEffect.DENY)]
    # The kernel presses Enter on the cursor row: the option a policy's "allow" picks too.
    (dialog,) = STARTUP_DIALOGS
    assert dialog.keys == ("Enter",) and prompt.default == prompt.numbers_with(OptionEffect.ALLOW)[0]


def test_an_answered_prompt_is_not_read() -> None:
    for name in ("completed_after_permission", "completed_after_question", "waiting_user_answer_answer1",
                 "dialog_trust_folder_answer1", "waiting_user_answer_question_answer3_text"):
        assert read_prompt(screen(name)) is None, name


def test_a_reply_quoting_a_menu_is_not_read() -> None:
    quoted = [" ● Copilot will ask:", "   Do you want to run this command?", "   ❯ 1. Yes", "     2. No",
              "   ↑/↓ to navigate · enter to select · esc to cancel"]
    rows = screen("completed").rstrip("\n").split("\n")
    box = next(i for i in range(len(rows) - 1, -1, -1) if rows[i].startswith("❯"))
    assert read_prompt("\n".join(rows[:box - 2] + quoted + rows[box - 2:])) is None
