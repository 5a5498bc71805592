"""Claude Code's prompts read from recorded screens: what is asked, the options and the keys that pick
them (the recordings under tests/screens/ press each one)."""

from __future__ import annotations

from pathlib import Path


from cao_hookspecs import OptionEffect, PromptKind
from cao_provider_claude_code.dialogs import STARTUP_DIALOGS
from cao_provider_claude_code.prompts import read_prompt
from cao_provider_claude_code.provider import claude_code_provider

SCREENS = Path(__file__).parent / "screens" / "2.1.330"


def screen(name: str) -> str:
    return (SCREENS / f"{name}.txt").read_text(encoding="utf-8")


def test_the_provider_reads_prompts() -> None:
    assert claude_code_provider().read_prompt is read_prompt


def test_a_bash_permission_names_the_command_and_picks_options_by_digit() -> None:
    prompt = read_prompt(screen("waiting_user_answer"))
    assert prompt is not None
    assert prompt.kind is PromptKind.PERMISSION
    assert (prompt.title, prompt.tool, prompt.question) == ("Bash command", "Bash", "Do you want to proceed?")
    assert dict(prompt.arguments) == {"command": "touch recorded.txt", "description": "Create a file"}
    assert prompt.arguments_complete
    assert [option.label for option in prompt.options] == [
        "Yes", "Yes, and always allow access to /tmp/cao-screens-claude-code/home/project from this project",
        "Yes, and switch to auto mode", "No"]
    assert prompt.options[2].description == "auto mode handles these prompts for you"
    assert [option.keys for option in prompt.options] == [("1",), ("2",), ("3",), ("4",)]
    assert [option.effect for option in prompt.options] == [
        OptionEffect.ALLOW, OptionEffect.ALLOW_ALWAYS, OptionEffect.ALLOW_ALWAYS, OptionEffect.DENY]
    assert prompt.default == 1
    assert not prompt.free_text
    assert " touch recorded.txt" in prompt.evidence


def test_a_permission_reads_the_same_on_a_narrow_terminal() -> None:
    wide = read_prompt(screen("waiting_user_answer"))
    narrow = read_prompt(screen("waiting_user_answer-100x30"))
    assert wide is not None and narrow is not None
    assert narrow.fingerprint == wide.fingerprint


def test_a_question_has_answers_a_free_text_row_and_a_way_out() -> None:
    prompt = read_prompt(screen("waiting_user_answer_question"))
    assert prompt is not None
    assert prompt.kind is PromptKind.QUESTION
    assert (prompt.title, prompt.question, prompt.tool) == ("Database", "Which database should I use?", None)
    assert [(o.label, o.description) for o in prompt.options] == [
        ("SQLite", "Embedded"), ("Postgres", "Server"), ("Type something.", ""), ("Chat about this", "")]
    assert [o.keys for o in prompt.options] == [("1",), ("2",), ("3",), ("4",)]
    assert [o.effect for o in prompt.options] == [OptionEffect.ANSWER] * 3 + [OptionEffect.OTHER]
    assert [o.takes_text for o in prompt.options] == [False, False, True, False]
    assert prompt.free_text and prompt.default == 1


def test_the_free_text_row_being_typed_into_takes_only_text() -> None:
    prompt = read_prompt(screen("waiting_user_answer_question_answer3"))
    assert prompt is not None
    assert prompt.question == "Which database should I use?"
    assert prompt.options == () and prompt.free_text


def test_start_up_dialogs_offer_the_keys_the_kernel_sends() -> None:
    accepting = {"dialog_trust_folder": ("trust folder", "Yes, I trust this folder"),
                 "dialog_api_key": ("API key confirmation", "Yes"),
                 "dialog_bypass_permissions": ("bypass permissions confirmation", "Yes, I accept")}
    sent = {dialog.name: dialog.keys for dialog in STARTUP_DIALOGS}
    for name, (dialog, label) in accepting.items():
        prompt = read_prompt(screen(name))
        assert prompt is not None, name
        assert prompt.kind is PromptKind.STARTUP_DIALOG
        option = next(o for o in prompt.options if o.label == label)
        assert option.keys == sent[dialog], name
        assert option.effect in (OptionEffect.ALLOW, OptionEffect.ALLOW_ALWAYS)
    trust = read_prompt(screen("dialog_trust_folder"))
    assert trust is not None
    assert trust.question == "Is this a project you created or one you trust?"
    assert [(o.label, o.keys, o.effect) for o in trust.options] == [
        ("No, exit", ("Enter",), OptionEffect.DENY),
        ("Yes, I trust this folder", ("Down", "Enter"), OptionEffect.ALLOW_ALWAYS)]
    key = read_prompt(screen("dialog_api_key"))
    assert key is not None and key.default == 2 and key.question == "Do you want to use this API key?"


def test_a_wrapped_dialog_question_is_read_whole() -> None:
    prompt = read_prompt(screen("dialog_trust_folder-100x30"))
    assert prompt is not None
    assert prompt.question == "Is this a project you created or one you trust?"


def test_an_answered_prompt_above_the_input_box_is_not_read() -> None:
    for name in ("completed_after_permission", "completed_after_question", "waiting_user_answer_answer4"):
        assert read_prompt(screen(name)) is None, name
    # The prompt's rows left above a new, empty input box.
    rows = screen("waiting_user_answer").rstrip("\n").split("\n")
    idle = screen("idle").rstrip("\n").split("\n")
    box = next(i for i in range(len(idle) - 1, -1, -1) if idle[i].startswith("❯"))
    assert read_prompt("\n".join(rows + idle[box - 1:])) is None


def test_a_reply_quoting_a_menu_is_not_read() -> None:
    quoted = ["● Claude Code will ask:", "  Do you want to proceed?", "  ❯ 1. Yes", "    2. No", "",
              "  Esc to cancel · Tab to amend"]
    rows = screen("completed").rstrip("\n").split("\n")
    box = next(i for i in range(len(rows) - 1, -1, -1) if rows[i].startswith("❯"))
    assert read_prompt("\n".join(rows[:box - 1] + quoted + rows[box - 1:])) is None
